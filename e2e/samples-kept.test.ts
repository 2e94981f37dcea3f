// Sampled I/Os are kept with the history that holds their seconds (issue 29, 2), on the real
// agent with real reads: a burst of reads is recorded and one heat map cell of it is listed
// live; the agent is then restarted, so nothing of it is left in memory and every sample shown
// comes from disk. The same cell lists the same I/Os (pid, comm, sector, completion time); the
// snapshot exported from the restarted agent carries them, and once imported in a fresh browser
// without the agent, the same click lists them again. (A restart is what an hour-old incident
// looks like to the agent: its seconds are no longer in the in-memory ring. How long each tier
// keeps them is checked with a clock in apps/agent/test/history-sample-archive.)
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { parseSnapshot } from '@blkheat/shared-types';
import { type AgentProcess, artifactsDir, createLoopDevice, hook, runFio, startAgentProcess } from '@blkheat/testkit';
import { canRun, openDashboard, shot, waitFor } from './lib/dashboard.ts';

/** What identifies a sampled I/O in the table: when it completed, where, and who submitted it. */
interface Listed {
  readonly ts: string;
  readonly sector: string;
  readonly pid: string;
  readonly comm: string;
}

async function listed(page: Page): Promise<Listed[]> {
  const rows = await page.locator('[data-testid=samples-table] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      ts: tr.getAttribute('data-ts-us') ?? '',
      sector: tr.getAttribute('data-sector') ?? '',
      pid: tr.getAttribute('data-pid') ?? '',
      comm: tr.getAttribute('data-comm') ?? '',
    })),
  );
  return rows.sort((a, b) => Number(a.ts) - Number(b.ts) || Number(a.sector) - Number(b.sector));
}

/** Clicks the cell (column start `from`, bucket) of the disk's heat map and returns the I/Os listed. */
async function clickCell(page: Page, dev: string, from: number, bucket: number): Promise<Listed[]> {
  const h = hook(page);
  const at = await h.cellCenter(dev, from, bucket);
  assert.ok(at, `cell ${from}/${bucket} on screen`);
  await page.mouse.click(at.x, at.y);
  await h.idle();
  await waitFor(page, 'the samples answer', async () => (await h.samples()).status === 'done', 30_000);
  return listed(page);
}

test(
  'samples outlive the agent’s memory: the same cell lists the same I/Os after a restart and from an imported snapshot',
  { timeout: 300_000 },
  async (t: TestContext) => {
    if (!canRun(t, { fio: true })) return;
    const disk = createLoopDevice({ sizeMiB: 128, t });
    const dataDir = mkdtempSync(join(tmpdir(), 'blkheat-e2e-samples-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const start = async (): Promise<AgentProcess> => {
      const agent = await startAgentProcess({ dataDir, args: ['--disk', disk.name] });
      t.after(() => agent.stop('SIGTERM', 15_000));
      return agent;
    };

    const first = await start();
    const from = Math.floor(Date.now() / 1000) + 1;
    // A dozen seconds of reads at 100 a second: every one sampled (the budget is 2,000), and the
    // busiest cell lists all of its I/Os (the table shows 500).
    await runFio({ filename: disk.path, rw: 'randread', bs: '4k', size: '100M', runtimeS: 12, rateIops: 100, direct: true });
    const to = Math.floor(Date.now() / 1000) - 1;
    await new Promise((r) => setTimeout(r, 2500));
    const view = `?from=${from}&to=${to}`;

    const live = await openDashboard(t, first.url + view);
    const h = hook(live.page);
    await h.idle();
    const cell = await h.hottestCell(disk.dev);
    assert.ok(cell && cell.count > 10, `a busy cell in [${from}, ${to}): ${JSON.stringify(cell)}`);
    const before = await clickCell(live.page, disk.dev, cell.from, cell.bucket);
    t.diagnostic(`cell ${cell.from} bucket ${cell.bucket}: ${cell.count} I/Os, ${before.length} listed live`);
    assert.equal(before.length, cell.count, 'every I/O of the cell was sampled and is listed');
    assert.ok(
      before.every((s) => s.comm === 'fio' && Number(s.pid) > 0 && s.sector !== ''),
      JSON.stringify(before.slice(0, 3)),
    );
    await shot(live.page, 'samples-kept-1-live');
    await live.close();

    // 2. A restart: the ring starts empty, the samples of those seconds are read from disk.
    await first.stop('SIGTERM', 15_000);
    const second = await start();
    const again = await openDashboard(t, second.url + view);
    const a = hook(again.page);
    await a.idle();
    const afterRestart = await clickCell(again.page, disk.dev, cell.from, cell.bucket);
    assert.deepEqual(afterRestart, before, 'after a restart the cell lists the same I/Os');
    await shot(again.page, 'samples-kept-2-after-restart');

    // 3. The snapshot of that range carries them.
    const download = again.page.waitForEvent('download');
    await again.page.click('[data-testid=export-json]');
    const file = join(artifactsDir('dashboard'), 'samples-kept-snapshot.json');
    await (await download).saveAs(file);
    await again.close();
    const parsed = parseSnapshot(readFileSync(file, 'utf8'));
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
    const inFile = new Set(parsed.value.samples.map((s) => `${s.ts_us}/${s.sector}/${s.pid}/${s.comm}`));
    t.diagnostic(`snapshot of [${parsed.value.range.from}, ${parsed.value.range.to}): ${parsed.value.samples.length} samples`);
    for (const s of before) assert.ok(inFile.has(`${s.ts}/${s.sector}/${s.pid}/${s.comm}`), `the snapshot carries ${JSON.stringify(s)}`);

    // 4. Imported in a fresh browser with the agent gone: the same click, the same list.
    const offline = await openDashboard(t, second.url);
    const o = hook(offline.page);
    await second.stop('SIGTERM', 15_000);
    await waitFor(offline.page, 'the page to notice the agent is gone', async () => (await o.state()).connection !== 'live', 30_000);
    await offline.page.setInputFiles('[data-testid=import-input]', file);
    await waitFor(offline.page, 'snapshot mode', async () => (await o.state()).mode === 'snapshot');
    await o.idle();
    const imported = await clickCell(offline.page, disk.dev, cell.from, cell.bucket);
    assert.deepEqual(imported, before, 'the imported snapshot lists the same I/Os');
    await shot(offline.page, 'samples-kept-3-imported');
  },
);

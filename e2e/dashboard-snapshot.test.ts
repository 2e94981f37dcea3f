// Snapshots end to end: export the visible range from a dashboard on the real agent, open a
// fresh browser, stop the agent, import the file, and see the same counts (and drill down,
// offline); then import a malformed file and a hostile one: a clear message, and the page
// keeps working. A screenshot per step goes to artifacts/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { parseSnapshot } from '@blkheat/shared-types';
import { artifactsDir, createLoopDevice, hook, idle } from '@blkheat/testkit';
import { backgroundFio, canRun, dragAcross, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';

test('dashboard: export a snapshot, import it offline in a fresh browser, reject bad files', { timeout: 300_000 }, async (t) => {
  if (!canRun(t, { fio: true })) return;
  const disk = createLoopDevice({ sizeMiB: 128, t });
  const agent = await startAgent(t, ['--disk', disk.name]);
  // Reads and writes at a modest rate: several classes, a spread of latencies. (Flushes have a
  // test of their own below.)
  backgroundFio(t, disk.path, ['--rw=randrw', '--bs=4k', '--size=100M', '--rate_iops=400']);
  const live = await openDashboard(t, agent.url);
  const h = hook(live.page);
  await waitFor(
    live.page,
    `25 s of I/O on ${disk.name}`,
    async () => {
      const st = await h.state();
      return (
        ((await h.counts())[disk.dev]?.completed ?? 0) > 2000 &&
        st.liveCovered !== undefined &&
        st.liveCovered.to - st.liveCovered.from >= 25
      );
    },
    120_000,
  );
  await live.page.click('[data-testid=span-1m]');
  await h.idle();
  // Zoom onto a stretch with data (exports cover the visible range).
  const st = await h.state();
  const span = st.view.to - st.view.from;
  const f0 = (Math.max(st.view.from, st.liveCovered?.from ?? st.view.from) - st.view.from) / span;
  await dragAcross(live.page, disk.name, f0 + (1 - f0) * 0.2, f0 + (1 - f0) * 0.8);
  await h.idle();
  const exported = { state: await h.state(), counts: await h.counts(), classes: await h.classCounts(), hist: await h.histogram(disk.dev) };
  assert.ok((exported.counts[disk.dev]?.completed ?? 0) > 0, 'the exported range has I/O');
  await shot(live.page, 'snapshot-1-before-export');

  // 1. Export: the agent's snapshot of the visible range, downloaded.
  const download = live.page.waitForEvent('download');
  await live.page.click('[data-testid=export-json]');
  const file = join(artifactsDir('dashboard'), 'exported-snapshot.json');
  await (await download).saveAs(file);
  const parsed = parseSnapshot(readFileSync(file, 'utf8'));
  assert.ok(parsed.ok, parsed.ok ? '' : `the export is not a valid snapshot: ${parsed.message}`);
  assert.deepEqual(
    [parsed.value.range.from, parsed.value.range.to],
    [exported.state.summaryRange?.from, exported.state.summaryRange?.to],
    'export covers the visible range',
  );
  t.diagnostic(
    `exported ${parsed.value.frames.length} frames, ${parsed.value.samples.length} samples for [${parsed.value.range.from}, ${parsed.value.range.to})`,
  );
  const pngDownload = live.page.waitForEvent('download');
  await live.page.click('[data-testid=export-png]');
  const png = join(artifactsDir('dashboard'), 'exported-heatmap.png');
  await (await pngDownload).saveAs(png);
  assert.deepEqual([...readFileSync(png).subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG export is a PNG');
  await live.close();

  // 2. A fresh browser; the agent goes away; the snapshot alone shows the same counts.
  const fresh = await openDashboard(t, agent.url);
  const f = hook(fresh.page);
  await agent.stop('SIGTERM', 15_000);
  await waitFor(fresh.page, 'the page to notice the agent is gone', async () => (await f.state()).connection !== 'live', 30_000);
  await fresh.page.setInputFiles('[data-testid=import-input]', file);
  await waitFor(fresh.page, 'snapshot mode', async () => (await f.state()).mode === 'snapshot');
  await f.idle();
  const imported = { state: await f.state(), counts: await f.counts(), classes: await f.classCounts(), hist: await f.histogram(disk.dev) };
  assert.deepEqual(
    [imported.state.summaryRange?.from, imported.state.summaryRange?.to],
    [exported.state.summaryRange?.from, exported.state.summaryRange?.to],
  );
  assert.equal(imported.counts[disk.dev]?.completed, exported.counts[disk.dev]?.completed, 'completed I/Os');
  assert.equal(imported.counts[disk.dev]?.histogram, exported.counts[disk.dev]?.histogram, 'histogram total');
  assert.deepEqual(imported.hist, exported.hist, 'histogram per bucket');
  assert.deepEqual(imported.classes, exported.classes, 'per-class counts');
  await assertVisible(fresh.page, '[data-testid=snapshot-badge]');
  t.diagnostic(`imported offline: ${imported.counts[disk.dev]?.completed} I/Os, same as exported`);
  // Drill-down works offline, from the snapshot's samples.
  const cell = await f.hottestCell(disk.dev);
  assert.ok(cell);
  const at = await f.cellCenter(disk.dev, cell.from, cell.bucket);
  assert.ok(at);
  await fresh.page.mouse.click(at.x, at.y);
  await f.idle();
  const sampled = await f.samples();
  assert.equal(sampled.status, 'done');
  t.diagnostic(`offline drill-down: ${sampled.count} samples in the hottest cell`);
  await shot(fresh.page, 'snapshot-2-imported-offline');

  // 3. Malformed and hostile files: a clear message, nothing else changes.
  const bad = join(artifactsDir('dashboard'), 'malformed-snapshot.json');
  writeFileSync(bad, '{"format":"blkheat-snapshot","version":1,"frames":[{"ts":"soon"}]');
  await fresh.page.setInputFiles('[data-testid=import-input]', bad);
  await waitFor(fresh.page, 'an error message', async () => (await f.notices()).some((n) => n.kind === 'error'), 10_000);
  const hostileSnap = JSON.parse(readFileSync(file, 'utf8')) as { frames: { disks: { cls: { d: number[] }[] }[] }[] };
  const firstCls = hostileSnap.frames[0]?.disks[0]?.cls[0];
  if (firstCls) firstCls.d = [1e9, 1, 5, 2];
  const hostile = join(artifactsDir('dashboard'), 'hostile-snapshot.json');
  writeFileSync(hostile, JSON.stringify({ ...hostileSnap, __proto__: { polluted: 1 } }));
  await fresh.page.setInputFiles('[data-testid=import-input]', hostile);
  await waitFor(
    fresh.page,
    'a second error message',
    async () => (await f.notices()).filter((n) => n.kind === 'error').length >= 2,
    10_000,
  );
  const errors = (await f.notices()).filter((n) => n.kind === 'error').map((n) => n.text);
  t.diagnostic(`errors shown: ${JSON.stringify(errors)}`);
  assert.match(errors[0] ?? '', /Cannot import malformed-snapshot\.json: not a JSON file/);
  assert.match(errors[1] ?? '', /Cannot import hostile-snapshot\.json: .*bucket index/);
  await assertVisible(fresh.page, '[data-testid=notice-error]');
  await shot(fresh.page, 'snapshot-3-malformed-import');
  // Still the same snapshot on screen, and still working: change the colour scale and the view.
  const after = await f.counts();
  assert.equal(after[disk.dev]?.completed, imported.counts[disk.dev]?.completed);
  await fresh.page.click('[data-testid=colour-linear]');
  await dragAcross(fresh.page, disk.name, 0.3, 0.6);
  await f.idle();
  const narrowed = await f.state();
  assert.equal(narrowed.mode, 'snapshot');
  assert.ok(narrowed.view.to - narrowed.view.from < imported.state.view.to - imported.state.view.from);
  await shot(fresh.page, 'snapshot-4-still-working');
  assert.deepEqual(
    fresh.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED|Failed to load resource/.test(e)),
    [],
    'no page errors besides the agent being gone',
  );
});

async function assertVisible(page: Page, selector: string): Promise<void> {
  assert.ok(await page.locator(selector).first().isVisible(), `${selector} is visible`);
}

// Flushes carry no sector (the kernel's is all ones): the agent's export of a range with flushes
// must still be a snapshot the dashboard (and parseSnapshot) accepts.
test('dashboard: the agent exports ranges with flushes as importable snapshots', { timeout: 180_000 }, async (t) => {
  if (!canRun(t, { fio: true })) return;
  const disk = createLoopDevice({ sizeMiB: 64, t });
  const agent = await startAgent(t, ['--disk', disk.name]);
  backgroundFio(t, disk.path, ['--rw=randwrite', '--bs=4k', '--size=32M', '--rate_iops=200', '--fsync=8']);
  const s = await openDashboard(t, agent.url);
  const h = hook(s.page);
  await waitFor(s.page, `flushes on ${disk.name}`, async () => ((await h.classCounts())['Flush'] ?? 0) > 50, 60_000);
  const download = s.page.waitForEvent('download');
  await s.page.click('[data-testid=export-json]');
  const file = join(artifactsDir('dashboard'), 'exported-with-flushes.json');
  await (await download).saveAs(file);
  const parsed = parseSnapshot(readFileSync(file, 'utf8'));
  assert.ok(parsed.ok, parsed.ok ? '' : `the agent's snapshot does not import: ${parsed.message}`);
  await s.page.setInputFiles('[data-testid=import-input]', file);
  await waitFor(s.page, 'snapshot mode', async () => (await h.state()).mode === 'snapshot', 10_000);
  // The page sums the snapshot's range in tasks after it shows the snapshot: read it once settled.
  await idle(s.page);
  assert.ok(((await h.classCounts())['Flush'] ?? 0) > 0, 'flushes shown from the snapshot');
});

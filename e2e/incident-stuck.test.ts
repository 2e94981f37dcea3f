// Stuck I/O on the real kernel: a loop device over a FUSE file whose daemon holds one read for
// 20 s. dd issues that read; within 3 s of the hold the page shows it: the disk's row head turns
// loud (and, with the page scrolled to its bottom, the header's alert and the tab's title say it),
// the strip's oldest-in-flight age grows second by second, and the stuck I/O is listed with
// dd's pid and comm. The heat map marks it above the column where it started. After release the row
// head quietens and the read lands in the ~20 s row of the heat map. A screenshot per step goes to
// artifacts/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lowerBoundSeconds, upperBoundSeconds } from '@blkheat/shared-types';
import { createDelayedLoopDevice, hook } from '@blkheat/testkit';
import { canRun, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';

const HOLD_S = 20;

test('stuck I/O: loud row head within 3 s, growing age, pid/comm listed, then the ~20 s row', { timeout: 180_000 }, async (t) => {
  if (!canRun(t, { fuse: true })) return;
  const disk = await createDelayedLoopDevice({ delayMs: 1, sizeMiB: 16, t });
  const agent = await startAgent(t, ['--disk', disk.name]);
  const s = await openDashboard(t, agent.url);
  const page = s.page;
  const h = hook(page);
  const badge = page.locator(`[data-testid="stuck-${disk.name}"]`);
  assert.equal(await badge.count(), 0, 'no stuck badge before the hold');

  // The page scrolled to its bottom (results far below the heat maps): the header's alert and the
  // tab's title must still say it.
  await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
  const alert = page.locator('[data-testid="page-alert"]');
  assert.equal(await alert.count(), 0, 'no alert before the hold');

  disk.holdNextRead();
  const dd = spawn('dd', [`if=${disk.path}`, 'of=/dev/null', 'bs=4096', 'count=1', 'skip=100', 'iflag=direct'], { stdio: 'ignore' });
  const ddDone = new Promise<number | null>((resolve) => dd.once('exit', (code) => resolve(code)));
  // The device's own cleanup (registered first, so run first) releases a read still held.
  t.after(() => dd.kill('SIGKILL'));
  await waitFor(page, 'the daemon to hold the read', async () => disk.holdState() === 'holding', 10_000);
  const heldAt = Date.now();
  assert.ok(dd.pid !== undefined);

  // 1. Within 3 s: the loud row head, with dd's read listed as stuck.
  await waitFor(
    page,
    'the row head to turn loud',
    async () => (await page.locator(`[data-testid="disk-row-${disk.name}"]`).getAttribute('data-stuck')) === 'true',
    10_000,
  );
  const shownAfterMs = Date.now() - heldAt;
  t.diagnostic(`loud row head ${shownAfterMs} ms after the daemon began holding the read (threshold 1 s)`);
  assert.ok(shownAfterMs <= 3000, `the stuck read showed ${shownAfterMs} ms after the hold began (want <= 3000)`);
  await waitFor(page, 'the header alert', async () => (await alert.getAttribute('data-kind')) === 'stuck', 5000);
  const alertAfterMs = Date.now() - heldAt;
  const title = await page.title();
  const box = await alert.boundingBox();
  const scrolled = Number(await page.evaluate('window.scrollY'));
  t.diagnostic(
    `header alert "${await alert.textContent()}" ${alertAfterMs} ms after the hold, at y ${box?.y} with the page scrolled ${scrolled} px; title "${title}"`,
  );
  assert.ok(alertAfterMs <= 3000, `the header alert showed ${alertAfterMs} ms after the hold began (want <= 3000)`);
  assert.match(title, new RegExp(`^⚠ stuck \\d.* on ${disk.name} · blkheat`), 'the tab title leads with it');
  assert.ok(
    box && box.y >= 0 && box.y + box.height <= (page.viewportSize()?.height ?? 0),
    `the alert is in the viewport: ${JSON.stringify(box)}`,
  );
  await page.evaluate('window.scrollTo(0, 0)');
  const first = await h.stuck(disk.dev);
  const ours = first.ios.find((io) => io.pid === dd.pid);
  assert.ok(ours, `dd (pid ${dd.pid}) is not among the stuck I/Os: ${JSON.stringify(first.ios)}`);
  assert.equal(ours.comm, 'dd');
  assert.equal(ours.sector, 100 * 8, 'the held read starts at dd skip=100 (4 KiB blocks = 800 sectors)');
  assert.equal(ours.bytes, 4096);
  assert.match(ours.c, /Read$/);
  await shot(page, 'stuck-1-loud');

  // 2. The list, on a click, updates live with the age growing; the strip's oldest age grows too.
  await badge.click();
  const row = page.locator(`[data-testid="stuck-list-${disk.name}"] [data-testid="stuck-io"][data-pid="${dd.pid}"]`);
  await row.waitFor({ timeout: 5000 });
  const age1 = Number(await row.getAttribute('data-age'));
  await page.waitForTimeout(3000);
  const age2 = Number(await row.getAttribute('data-age'));
  t.diagnostic(`listed age ${age1.toFixed(2)} s, 3 s later ${age2.toFixed(2)} s`);
  assert.ok(age2 - age1 >= 2 && age2 - age1 <= 4, `the listed age went from ${age1} s to ${age2} s in 3 s`);
  const tp = await h.throughput(disk.dev);
  assert.ok(tp, 'the disk has a strip');
  const oldest = tp.oldest.filter((v): v is number => v !== null);
  const tail = oldest.slice(-4);
  t.diagnostic(`strip's oldest in flight, last columns: ${tail.map((v) => v.toFixed(2)).join(', ')} s`);
  assert.ok(
    tail.length >= 3 && tail.every((v, i) => i === 0 || v > (tail[i - 1] as number)),
    `the strip's oldest age does not grow: ${tail.join(', ')}`,
  );
  // The heat map marks the hang above the column where the read started.
  const spans = (await h.stuck(disk.dev)).spans.filter((sp) => sp.pid === dd.pid);
  assert.equal(spans.length, 1, `one mark for the held read: ${JSON.stringify(spans)}`);
  const startedSec = Math.floor(heldAt / 1000);
  assert.ok(Math.abs((spans[0]?.start ?? 0) - startedSec) <= 1, `mark starts at ${spans[0]?.start}, the read at ~${startedSec}`);
  await shot(page, 'stuck-2-list');

  // 3. Release after 20 s: the row head quietens and the read lands in the ~20 s row.
  await page.waitForTimeout(Math.max(0, heldAt + HOLD_S * 1000 - Date.now()));
  disk.release();
  assert.equal(await ddDone, 0, 'dd read the held block');
  await waitFor(
    page,
    'the row head to quieten',
    async () => (await page.locator(`[data-testid="disk-row-${disk.name}"]`).getAttribute('data-stuck')) === 'false',
    10_000,
  );
  await waitFor(
    page,
    'the held read on the heat map',
    async () => (await h.histogram(disk.dev)).some((n, b) => n > 0 && lowerBoundSeconds(b) >= 8),
    10_000,
  );
  const hist = await h.histogram(disk.dev);
  let slowest = -1;
  hist.forEach((n, b) => {
    if (n > 0) slowest = b;
  });
  t.diagnostic(`slowest read drawn in [${lowerBoundSeconds(slowest).toFixed(2)}, ${upperBoundSeconds(slowest).toFixed(2)}] s`);
  assert.ok(
    lowerBoundSeconds(slowest) <= HOLD_S + 1 && upperBoundSeconds(slowest) >= HOLD_S,
    `the held read is drawn in [${lowerBoundSeconds(slowest)}, ${upperBoundSeconds(slowest)}] s, not around ${HOLD_S} s`,
  );
  const cell = await h.hottestCell(disk.dev, slowest, slowest);
  assert.ok(cell && cell.count === 1, `one I/O in the ~20 s row: ${JSON.stringify(cell)}`);
  await shot(page, 'stuck-3-released');
});

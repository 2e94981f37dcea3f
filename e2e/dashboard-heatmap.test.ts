// The dashboard against the real agent on real I/O: a loop device over a FUSE file whose
// daemon sleeps 5 ms per read. The heat map must light up in the 5 ms row (and not far from
// it), dragging must narrow the time axis with the histogram counting exactly the subrange
// (checked against the agent's own /api/v1/range), and clicking a cell must list sampled I/Os
// whose latency lies inside that cell. A screenshot per step goes to artifacts/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addSparseInto,
  bucketCount,
  bucketOfSeconds,
  conservedCount,
  denseHist,
  phaseHist,
  type Frame,
  upperBoundsNs,
} from '@blkheat/shared-types';
import { createDelayedLoopDevice, hook, type Hooked } from '@blkheat/testkit';
import { backgroundFio, canRun, dragAcross, listedSamples, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';

const DELAY_MS = 5;

test('dashboard: heat map, drag-zoom and drill-down on a 5 ms FUSE-delayed loop device', { timeout: 300_000 }, async (t) => {
  if (!canRun(t, { fuse: true, fio: true })) return;
  const disk = await createDelayedLoopDevice({ delayMs: DELAY_MS, sizeMiB: 64, t });
  // Trace only this disk: other tests' loop devices come and go on this machine.
  const agent = await startAgent(t, ['--disk', disk.name]);
  // Queue depth 1: each read waits for the daemon's 5 ms, ~190 reads per second.
  backgroundFio(t, disk.path, ['--rw=randread', '--bs=4k', '--size=60M']);
  const s = await openDashboard(t, agent.url);
  const page = s.page;
  const h = hook(page);

  // 1. The heat map lights up in the 5 ms row. (A one-minute live window, once 30 s of I/O are in.)
  await waitFor(
    page,
    `${disk.name} to show 30 s of I/O`,
    async () => {
      const st = await h.state();
      return (
        ((await h.counts())[disk.dev]?.histogram ?? 0) >= 3000 &&
        st.liveCovered !== undefined &&
        st.liveCovered.to - st.liveCovered.from >= 30
      );
    },
    120_000,
  );
  await page.click('[data-testid=span-1m]');
  await h.idle();
  const lo = bucketOfSeconds(0.004);
  const hi = bucketOfSeconds(0.008);
  const hist = await h.histogram(disk.dev);
  const total = hist.reduce((a, b) => a + b, 0);
  const near = hist.slice(lo, hi + 1).reduce((a, b) => a + b, 0);
  t.diagnostic(`${disk.name}: ${near} of ${total} I/Os in [4 ms, 8 ms] (buckets ${lo}..${hi})`);
  assert.ok(near / total >= 0.95, `only ${near} of ${total} I/Os of the 5 ms device are drawn in [4 ms, 8 ms]`);
  const hot = await h.hottestCell(disk.dev);
  assert.ok(hot, 'no lit cell on the heat map');
  assert.ok(hot.bucket >= lo && hot.bucket <= hi, `the hottest cell is in bucket ${hot.bucket}, not in the 5 ms rows ${lo}..${hi}`);
  // The pixels agree with the counts down the hottest column: lit exactly where there is I/O.
  // Counts and pixels are read in one synchronous pass once the page is idle, so no frame that
  // arrives meanwhile can change the data between a cell's count and its pixel.
  const st = await h.state();
  const column = await page.evaluate(
    async ({ dev, ts, buckets }) => {
      const blkheat = (globalThis as unknown as Hooked).__blkheat;
      await blkheat.idle();
      const out: { b: number; count: number | undefined; alpha: number | undefined }[] = [];
      for (let b = 0; b < buckets; b++) {
        const c = blkheat.cellCenter(dev, ts, b);
        if (!c) continue; // outside the drawn latency range
        out.push({ b, count: blkheat.cellAt(c.x, c.y)?.count, alpha: blkheat.pixelAt(dev, c.x, c.y)?.[3] });
      }
      return out;
    },
    { dev: disk.dev, ts: hot.from, buckets: bucketCount() },
  );
  for (const r of column) {
    assert.ok(r.count !== undefined && r.alpha !== undefined, `no cell or pixel at bucket ${r.b}`);
    assert.equal(r.alpha > 0, r.count > 0, `bucket ${r.b} of column ${hot.from}: ${r.count} I/Os but pixel alpha ${r.alpha}`);
  }
  const checked = column.length;
  assert.ok(checked >= 20, `only ${checked} rows visible`);
  t.diagnostic(`pixels agree with counts on ${checked} rows; view ${JSON.stringify(st.view)} step ${st.step}`);
  await shot(page, 'heatmap-1-lit-5ms');

  // 2. Drag to zoom: the time axis narrows and the histogram counts exactly the subrange.
  // Drag across the middle of the part of the window the agent has history for.
  const before = await h.state();
  const span = before.view.to - before.view.from;
  const dataFrom = Math.max(before.view.from, before.liveCovered?.from ?? before.view.from);
  const f0 = (dataFrom - before.view.from) / span;
  await dragAcross(page, disk.name, f0 + (1 - f0) * 0.25, f0 + (1 - f0) * 0.65);
  await h.idle();
  const zoomed = await h.state();
  assert.equal(zoomed.following, false, 'zooming pauses the live view');
  const spanBefore = before.view.to - before.view.from;
  const spanAfter = zoomed.view.to - zoomed.view.from;
  assert.ok(spanAfter < spanBefore * 0.5, `the view did not narrow: ${spanBefore} s → ${spanAfter} s`);
  const ticks = await page.locator('[data-testid=time-axis] .tick').count();
  assert.ok(ticks >= 2, 'the time axis has ticks');
  assert.equal(await page.locator('[data-testid=live-indicator]').getAttribute('data-live'), 'false');
  const range = zoomed.summaryRange;
  assert.ok(range && range.to - range.from <= spanAfter + 2 * (zoomed.step ?? 1));
  const res = await fetch(new URL(`api/v1/range?from=${range.from}&to=${range.to}&step=1&disk=${disk.name}`, agent.url));
  assert.equal(res.status, 200);
  const answer = (await res.json()) as { from: number; to: number; step: number; frames: Frame[] };
  const truth = denseHist();
  let completed = 0;
  for (const f of answer.frames) {
    for (const d of f.disks) {
      if (d.dev !== disk.dev) continue;
      // No witness: the page against the agent's own range answer (both blkheat's, counted + untimed), no outside count.
      completed += conservedCount(d); // what the page counts: as /proc/diskstats does
      // The page shows the phase it opened on: the total, for an agent that times submit wait.
      for (const c of d.cls) addSparseInto(truth, phaseHist(c, zoomed.kind, 'request'));
    }
  }
  const shown = await h.histogram(disk.dev);
  assert.deepEqual(shown, [...truth], `histogram of [${range.from}, ${range.to}) differs from the agent's range answer`);
  const counts = (await h.counts())[disk.dev];
  assert.equal(counts?.completed, completed, 'completed I/Os of the subrange');
  assert.ok(completed > 0 && completed < total, `subrange count ${completed} should be below the full view's ${total}`);
  t.diagnostic(
    `zoomed to [${range.from}, ${range.to}) (${spanAfter.toFixed(0)} s, was ${spanBefore} s): ${completed} I/Os, equal to the agent's range answer`,
  );
  await shot(page, 'heatmap-2-zoomed');

  // 3. Click a cell: the sampled I/Os inside it.
  const cell = await h.hottestCell(disk.dev);
  assert.ok(cell);
  const at = await h.cellCenter(disk.dev, cell.from, cell.bucket);
  assert.ok(at, 'hot cell is on screen');
  await page.mouse.click(at.x, at.y);
  await waitFor(page, 'samples to load', async () => (await h.samples()).status !== 'loading', 20_000);
  const sampled = await h.samples();
  assert.equal(sampled.status, 'done', `samples: ${sampled.error ?? sampled.status}`);
  assert.ok(sampled.count > 0, `no sampled I/O in a cell with ${cell.count} I/Os`);
  const sel = await h.selection();
  assert.deepEqual(sel && [sel.dev, sel.from, sel.to, sel.bucketLo, sel.bucketHi], [
    disk.dev,
    cell.from,
    cell.to,
    cell.bucket,
    cell.bucket,
  ]);
  const edges = upperBoundsNs();
  const minNs = Number((edges[cell.bucket - 1] as bigint) + 1n);
  const maxNs = Number(edges[cell.bucket] as bigint);
  const rows = await listedSamples(page, zoomed.kind);
  assert.equal(rows.length, Math.min(sampled.count, 500));
  for (const r of rows) {
    assert.equal(r.dev, disk.dev);
    assert.ok(
      r.ns !== null && r.ns >= minNs && r.ns <= maxNs,
      `sample ${zoomed.kind} latency ${r.ns} ns outside the cell's [${minNs}, ${maxNs}] ns`,
    );
    assert.ok(r.ts >= cell.from * 1e6 && r.ts < cell.to * 1e6, `sample at ${r.ts} µs outside [${cell.from}, ${cell.to}) s`);
  }
  t.diagnostic(`cell ${cell.from} s × bucket ${cell.bucket} (${cell.count} I/Os): ${rows.length} samples, all inside it`);
  await shot(page, 'heatmap-3-samples');

  // 4. Back to live.
  await page.keyboard.press('Escape'); // closes the samples
  await page.keyboard.press('Escape'); // back to live
  await waitFor(page, 'the live view', async () => (await h.state()).following);
  await h.idle();
  await shot(page, 'heatmap-4-live-again');
  assert.deepEqual(
    s.errors.filter((e) => !/favicon/.test(e)),
    [],
    'no console errors',
  );
});

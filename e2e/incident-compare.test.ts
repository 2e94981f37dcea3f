// Compare (A/B) against the real agent on real I/O: 30 s of reads at a 2 ms FUSE delay, then 30 s
// at 8 ms, on the same disk. The dashboard opened on the whole minute with the two halves as
// baseline and comparison (?base=&cmp=) shows a p50 delta within one bucket of 6 ms, and both
// overlaid histograms equal the agent's own range answers for the two halves. Screenshots go to
// artifacts/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addSparseInto,
  bucketOfSeconds,
  denseHist,
  type Frame,
  lowerBoundSeconds,
  phaseHist,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { createDelayedLoopDevice, hook, sleep, sleepUntilSecond, startFio } from '@blkheat/testkit';
import { canRun, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';

const HALF_S = 30;

test('compare: 2 ms then 8 ms on one disk, p50 delta within a bucket of 6 ms, both histograms exact', { timeout: 240_000 }, async (t) => {
  if (!canRun(t, { fuse: true, fio: true })) return;
  const disk = await createDelayedLoopDevice({ delayMs: 2, sizeMiB: 64, t });
  const agent = await startAgent(t, ['--disk', disk.name]);
  await sleep(1500);
  const fio = startFio({ filename: disk.path, rw: 'randread', runtimeS: 2 * HALF_S + 10, size: '60M' }, t);
  // The halves are whole seconds well inside each delay's run.
  const t0 = Math.floor(Date.now() / 1000) + 2;
  const t1 = t0 + HALF_S;
  await sleepUntilSecond(t1);
  disk.setDelay(8);
  const t2 = t1 + HALF_S;
  // The second half starts one second after the switch: reads begun before it took 2 ms.
  const base = { from: t0, to: t1 };
  const cmp = { from: t1 + 1, to: t2 };
  await sleepUntilSecond(t2 + 2);
  await fio.stop();

  const s = await openDashboard(
    t,
    `${agent.url}?from=${t0}&to=${t2}&disks=${disk.name}&base=${base.from}-${base.to}&cmp=${cmp.from}-${cmp.to}`,
    {
      live: false,
    },
  );
  const page = s.page;
  const h = hook(page);
  await waitFor(page, 'the comparison', async () => (await h.compare())?.status === 'ready', 30_000);
  const c = await h.compare();
  assert.ok(c, 'the compare view is open');
  assert.deepEqual([c.baseline?.from, c.baseline?.to, c.comparison?.from, c.comparison?.to], [base.from, base.to, cmp.from, cmp.to]);
  const phase = (await h.state()).kind;
  const row = c.disks[disk.dev]?.all;
  assert.ok(row, `the disk has a compare row: ${JSON.stringify(Object.keys(c.disks))}`);

  // Both histograms equal the agent's own answers for the two ranges.
  const truth = async (r: { from: number; to: number }): Promise<number[]> => {
    const res = await fetch(new URL(`api/v1/range?from=${r.from}&to=${r.to}&step=1&disk=${disk.name}`, agent.url));
    assert.equal(res.status, 200);
    const body = (await res.json()) as { frames: Frame[] };
    const d = denseHist();
    // In the phase the page shows (the total, for an agent that times submit wait).
    for (const f of body.frames)
      for (const x of f.disks) if (x.dev === disk.dev) for (const k of x.cls) if (!k.pt) addSparseInto(d, phaseHist(k, phase, 'request'));
    return [...d];
  };
  assert.deepEqual(row.baseline, await truth(base), 'baseline histogram = the agent’s range answer');
  assert.deepEqual(row.comparison, await truth(cmp), 'comparison histogram = the agent’s range answer');
  t.diagnostic(`baseline ${row.baselineTotal} reads, comparison ${row.comparisonTotal} reads`);

  const p50 = row.percentiles.p50;
  assert.ok(p50 && p50.baseline !== null && p50.comparison !== null && p50.delta !== null, `p50: ${JSON.stringify(p50)}`);
  // One bucket at 6 ms: the width of the schema bucket that holds 6 ms.
  const b6 = bucketOfSeconds(0.006);
  const width = upperBoundSeconds(b6) - lowerBoundSeconds(b6);
  t.diagnostic(
    `p50 ${(p50.baseline * 1e3).toFixed(3)} ms → ${(p50.comparison * 1e3).toFixed(3)} ms: delta ${(p50.delta * 1e3).toFixed(3)} ms (one bucket at 6 ms: ${(width * 1e3).toFixed(3)} ms)`,
  );
  assert.ok(Math.abs(p50.delta - 0.006) <= width, `p50 delta ${p50.delta * 1e3} ms is not within one bucket of 6 ms`);
  const shown = Number(await page.locator(`[data-testid="compare-delta-${disk.name}-all-p50"]`).getAttribute('data-delta'));
  assert.ok(Math.abs(shown - p50.delta) < 1e-9, `the page shows the p50 delta ${shown} s`);
  // Both overlaid histograms are drawn: the busiest bucket of each has its mark on the overlay,
  // the baseline's a filled bar (read halfway up it), the comparison's a 2 px line along its
  // share. Not the bar at its share: that is the bar's top edge, which can land a rounding error
  // above a whole pixel (the tallest share of the chart maps to 3 - 4e-16 px for 7% of tops),
  // and the pixel read there is the empty one above the bar.
  for (const which of ['baseline', 'comparison'] as const) {
    const hist = row[which];
    const total = which === 'baseline' ? row.baselineTotal : row.comparisonTotal;
    const top = hist.indexOf(Math.max(...hist));
    const share = (hist[top] as number) / total;
    const px = await h.comparePixel(disk.dev, 'all', 'overlay', top, which === 'baseline' ? share / 2 : share);
    assert.ok(px && (px[3] as number) > 0, `${which}'s busiest bucket is drawn on the overlay: ${JSON.stringify(px)}`);
  }
  await page.locator('[data-testid=compare-panel]').scrollIntoViewIfNeeded();
  await shot(page, 'compare-2ms-8ms');
});

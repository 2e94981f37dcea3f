// Offset vs time against the real agent on a busy disk: fio reads a loop device at full speed
// (≥ 20 k IOPS, checked in the agent's own range answer), far more sampled I/Os in a minute than
// the scatter's bound of 2,000. A one-minute live window must draw points over the whole window
// (its first and its last tenth both), not its first second; its colour scale's top must be the
// upper edge of the bucket of the slowest point drawn (within one bucket of it), and the legend
// must say so. Then the same minute as a fixed range: the points drawn are exactly the agent's
// spread answer (GET /api/v1/samples?pick=spread), whose slowest is the range's slowest sampled
// I/O. Screenshots go to artifacts/dashboard/.
import { type TestContext, test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOfNs, formatLatency, type IoSample, type LatencyKind, samplePhaseNs, upperBoundSeconds } from '@blkheat/shared-types';
import { createLoopDevice, hook, type Hooked, idle, sleep, sleepUntilSecond } from '@blkheat/testkit';
import type { Page } from 'playwright-core';
import { backgroundFio, canRun, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';

type Drawn = NonNullable<ReturnType<Hooked['__blkheat']['offsetScatter']>>;

const WINDOW = 60;
const MIN_IOPS = 20_000;

/** The scatter once it drew a spread answer of the panel disk. */
async function spreadScatter(page: Page, dev: string): Promise<Drawn> {
  await waitFor(
    page,
    'the offset scatter to draw a spread answer',
    async () => {
      const d = await hook(page).offsetScatter();
      return d !== undefined && d.dev === dev && d.pick === 'spread' && d.truncated;
    },
    30_000,
  );
  await idle(page);
  const d = await hook(page).offsetScatter();
  assert.ok(d);
  return d;
}

/** The points drawn (a sector, inside the window) and their latency of the phase on screen. */
function drawn(d: Drawn, kind: LatencyKind): { s: IoSample; ns: number }[] {
  return d.samples.flatMap((s) => {
    const ns = samplePhaseNs(s, kind);
    const t = s.ts_us / 1e6;
    return s.sector !== null && ns !== null && t >= d.from && t < d.to ? [{ s, ns }] : [];
  });
}

function tenths(d: Drawn, kind: LatencyKind): number[] {
  const n = new Array<number>(10).fill(0);
  for (const { s } of drawn(d, kind)) {
    const i = Math.floor(((s.ts_us / 1e6 - d.from) / (d.to - d.from)) * 10);
    n[i] = (n[i] ?? 0) + 1;
  }
  return n;
}

/**
 * The colour scale tops out at the slowest drawn point's bucket, and the legend says its upper
 * edge. Read together: a live window loads new samples every second, so a legend read after the
 * drawing (a second round trip) can belong to the next load. Even read together, the legend is
 * React's (committed first) and the drawing the next animation frame's: a live read may land
 * between the two, so it is read again (up to 20 s) until the legend and the drawing are of the
 * same load, and both are then checked against the drawn points.
 */
async function checkScale(t: TestContext, page: Page, dev: string, kind: LatencyKind, label: string): Promise<number> {
  const schema = (await hook(page).state()).schema;
  const deadline = Date.now() + 20_000;
  let reads = 0;
  for (;;) {
    await idle(page);
    const d = await hook(page).offsetScatter();
    const hi = d?.legend?.hi;
    reads++;
    assert.ok(d && d.dev === dev && d.pick === 'spread', `${label}: the scatter drew a spread answer of ${dev}`);
    const ownTop = d.uHi !== undefined ? formatLatency(upperBoundSeconds(d.uHi - 1, schema)) : undefined;
    if (hi !== ownTop && Date.now() < deadline) continue;
    const max = Math.max(...drawn(d, kind).map((p) => p.ns));
    const bucket = bucketOfNs(max, schema);
    const top = upperBoundSeconds(bucket, schema);
    t.diagnostic(`${label}: ${reads} read(s) until the legend and the drawing were of one load`);
    assert.equal(d.uHi, bucket + 1, `${label}: the colour scale's top is the slowest point's bucket (${formatLatency(max / 1e9)})`);
    assert.equal(hi, formatLatency(top), `${label}: the legend's top`);
    return max;
  }
}

test('offset vs time at ≥ 20 k IOPS: points over the whole minute, the colour scale fitted to them', { timeout: 300_000 }, async (t) => {
  if (!canRun(t, { fio: true })) return;
  const loop = createLoopDevice({ sizeMiB: 256, t });
  const agent = await startAgent(t, ['--disk', loop.name]);
  await sleep(1500); // the udev probe of the new device
  backgroundFio(t, loop.path, ['--rw=randread', '--bs=4k', '--ioengine=libaio', '--iodepth=32', '--size=250M']);
  // A full minute of I/O behind the live window.
  const ioFrom = Math.floor(Date.now() / 1000) + 2;
  await sleepUntilSecond(ioFrom + WINDOW + 5);

  const s = await openDashboard(t, `${agent.url}?live=${WINDOW}&disks=${loop.name}`);
  const page = s.page;
  const h = hook(page);
  const kind = (await h.state()).kind;
  const live = await spreadScatter(page, loop.dev);
  const perLive = tenths(live, kind);
  t.diagnostic(`live: ${live.samples.length} drawn of ${live.matched ?? '?'} sampled; per tenth ${perLive.join(', ')}; kind ${kind}`);
  assert.ok(
    (perLive[0] ?? 0) > 0 && (perLive[9] ?? 0) > 0,
    `live: the first and the last tenth of the window have points: ${perLive.join(', ')}`,
  );
  await checkScale(t, page, loop.dev, kind, 'live');
  await page.locator('[data-testid=offset-scatter]').scrollIntoViewIfNeeded();
  await shot(page, 'offset-scatter-busy-live');

  // The same kind of minute as a fixed range, closed: compared with the agent's own answers.
  const to = Math.floor(Date.now() / 1000) - 2;
  const from = to - WINDOW;
  const range = (await (await fetch(new URL(`api/v1/range?from=${from}&to=${to}&step=1&disk=${loop.name}`, agent.url))).json()) as {
    frames: { disks: { dev: string; cls: { n: number }[] }[] }[];
  };
  const ios = range.frames.reduce((sum, f) => sum + f.disks.reduce((a, d) => a + d.cls.reduce((b, c) => b + c.n, 0), 0), 0);
  t.diagnostic(`the agent counted ${ios} I/Os in [${from}, ${to}): ${Math.round(ios / WINDOW)} IOPS`);
  assert.ok(ios / WINDOW >= MIN_IOPS, `the disk ran at ${Math.round(ios / WINDOW)} IOPS, under ${MIN_IOPS}: this machine cannot test this`);
  await page.goto(`${agent.url}?from=${from}&to=${to}&disks=${loop.name}`);
  const fixed = await spreadScatter(page, loop.dev);
  const per = tenths(fixed, kind);
  t.diagnostic(`fixed: ${fixed.samples.length} drawn of ${fixed.matched ?? '?'}; per tenth ${per.join(', ')}`);
  assert.ok(
    per.every((n) => n > 0),
    `every tenth of the minute has points: ${per.join(', ')}`,
  );
  const answer = (await (
    await fetch(new URL(`api/v1/samples?from=${from}&to=${to}&disk=${loop.name}&kind=${kind}&limit=2000&pick=spread`, agent.url))
  ).json()) as { samples: IoSample[]; truncated: boolean; pick?: string; matched?: number };
  assert.equal(answer.pick, 'spread');
  assert.equal(answer.truncated, true);
  assert.deepEqual(
    fixed.samples.map((x) => x.ts_us),
    answer.samples.map((x) => x.ts_us),
    'the points drawn are the agent’s spread answer',
  );
  const max = await checkScale(t, page, loop.dev, kind, 'fixed');
  const slowest = Math.max(...answer.samples.flatMap((x) => samplePhaseNs(x, kind) ?? []));
  assert.equal(max, slowest, 'the slowest sampled I/O of the range is drawn');
  await page.locator('[data-testid=offset-scatter]').scrollIntoViewIfNeeded();
  await shot(page, 'offset-scatter-busy-fixed');
});

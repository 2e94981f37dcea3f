// Honest numbers (issue 29): a percentile read from a histogram is written as what it is, a bound
// ("≤ the top of the rank's bucket"; "> 64.0 s" past the last one) or, where every sampled I/O of
// that bucket is in hand, the exact latency at the rank; rates are over the whole range the
// source speaks for, with the busiest step beside them; the op-class table splits per disk; and
// the disks are ranked worst first (stuck now, then p99, then failed I/Os).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketCount,
  bucketOfSeconds,
  conservedCount,
  type DiskFrame,
  type Frame,
  type IoSample,
  overflowIndex,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { buildMatrix } from '../src/model/heatmatrix.ts';
import { formatLatency } from '../src/model/latency.ts';
import { formatQuantile, labelledQuantile, MARK_QUANTILES, P99, quantilesOf, quantilesText } from '../src/model/percentiles.ts';
import { byBucket, EXACT_BUCKET_MAX, rankBucketRange, withSampledRanks } from '../src/model/sampledRanks.ts';
import { stuckNow } from '../src/model/stuck.ts';
import { summarizeNow } from '../src/model/summary.ts';
import { rankDisks, standingText } from '../src/model/worstDisks.ts';
import { shownQuantiles } from '../src/store/shownWindow.ts';
import { dataHarness, LOOP0, SDA, snapshotOf } from './fixtures/dataLayer.ts';

const S = BUCKET_SCHEMA;
const ROWS = bucketCount(S);
const T0 = 1_700_000_000;
const b = (seconds: number): number => bucketOfSeconds(seconds, S);
const top = (seconds: number): number => upperBoundSeconds(b(seconds), S);

/** A dense histogram with `n` I/Os at each latency given. */
function dense(entries: readonly (readonly [number, number])[]): Float64Array {
  const h = new Float64Array(ROWS);
  for (const [seconds, n] of entries) h[b(seconds)] = (h[b(seconds)] as number) + n;
  return h;
}

test('a percentile from a histogram is its bucket top, written "≤"; past the last bucket, "> its lower edge"', () => {
  // The read: 32.2 s, alone in its bucket (32 s .. 38.1 s).
  const one = quantilesOf(dense([[32.2, 1]]), S);
  assert.deepEqual(
    one.map((v) => [v.label, v.kind, v.bucket, v.rank, v.seconds]),
    MARK_QUANTILES.map(({ label }) => [label, 'bound', b(32.2), 1, top(32.2)]),
  );
  assert.equal(formatQuantile(one[2]), '≤ 38.1 s');
  assert.equal(labelledQuantile(one[2]!), 'p99 ≤ 38.1 s');
  assert.equal(quantilesText(one), 'p50 ≤ 38.1 s · p90 ≤ 38.1 s · p99 ≤ 38.1 s · p99.9 ≤ 38.1 s');
  // The mark on the histogram sits where the number is: the bucket's top edge.
  assert.equal(one[0]!.u, b(32.2) + 1);
  // 100 I/Os, 99 fast, one slow: p50 ≤ its bucket's top, p99.9 the slow one's.
  const mixed = quantilesOf(
    dense([
      [100e-6, 99],
      [0.2, 1],
    ]),
    S,
  );
  assert.equal(formatQuantile(mixed[0]), `≤ ${formatLatency(top(100e-6))}`);
  assert.equal(mixed[3]!.rank, 100);
  assert.equal(formatQuantile(mixed[3]), `≤ ${formatLatency(top(0.2))}`);
  // Beyond the last bucket nothing bounds it.
  const over = new Float64Array(ROWS);
  over[overflowIndex(S)] = 3;
  const [p99] = quantilesOf(over, S, P99);
  assert.equal(p99?.kind, 'above');
  assert.equal(formatQuantile(p99), '> 64.0 s');
  assert.equal(formatQuantile(undefined), '–');
  assert.deepEqual(quantilesOf(new Float64Array(ROWS), S), [], 'no I/O: no percentiles');
});

test('sampled I/Os make a percentile exact only when they are every I/O of its bucket', () => {
  const hist = dense([
    [100e-6, 97],
    [0.02, 2],
    [32.2, 1],
  ]);
  const qs = quantilesOf(hist, S);
  // p99 (rank 99) and p99.9 (rank 100) sit in buckets of 2 and 1 I/Os: those are asked for; p50's
  // bucket holds 97, more than EXACT_BUCKET_MAX.
  assert.ok(97 > EXACT_BUCKET_MAX);
  assert.deepEqual(rankBucketRange(qs, hist), { lo: b(0.02), hi: b(32.2) });
  assert.equal(
    rankBucketRange(quantilesOf(dense([[100e-6, 1000]]), S), dense([[100e-6, 1000]])),
    undefined,
    'a busy bucket is not asked for',
  );

  // The 32.2 s read sampled, one of the two 20 ms ones too: p99.9 is exact, p99 stays a bound.
  const some = withSampledRanks(qs, hist, byBucket([32.2e9, 20.5e6], S), S);
  assert.deepEqual(
    some.map((v) => [v.label, v.kind]),
    [
      ['p50', 'bound'],
      ['p90', 'bound'],
      ['p99', 'bound'],
      ['p99.9', 'exact'],
    ],
  );
  assert.equal(labelledQuantile(some[3]!), 'p99.9 32.2 s');
  assert.ok(some[3]!.u > b(32.2) && some[3]!.u < b(32.2) + 1, 'its mark inside its bucket');
  // Both 20 ms reads sampled: p99 is the 99th fastest I/O, the second of them.
  const all = withSampledRanks(qs, hist, byBucket([32.2e9, 21.5e6, 20.5e6], S), S);
  assert.equal(formatQuantile(all[2]), '21.5 ms');
  assert.equal(formatQuantile(all[0]), `≤ ${formatLatency(top(100e-6))}`, 'p50: its bucket is not all sampled');
  // More samples than I/Os in a bucket (another range's, a duplicate): nothing is claimed.
  assert.equal(withSampledRanks(qs, hist, byBucket([32.2e9, 32.3e9], S), S)[3]!.kind, 'bound');
  assert.deepEqual(withSampledRanks(qs, hist, undefined, S), qs);
});

/** One disk's frame with `n` reads at `seconds`. */
const reads = (dev: string, n: number, seconds: number): DiskFrame => ({ dev, cls: [{ c: 'Read', n, d: [b(seconds), n], q: [] }] });

function summary(frames: readonly Frame[], from: number, to: number, reach: { from: number | undefined; to: number }, devs = ['7:0']) {
  const matrices = new Map(
    devs.map((dev) => [dev, buildMatrix(frames, { from, to, step: 1, rows: ROWS, filter: { dev, kind: 'device' } })]),
  );
  return summarizeNow({
    from,
    to,
    step: 1,
    frames,
    matrices,
    devs: new Set(devs),
    kind: 'device',
    schema: S,
    snapshotRange: undefined,
    reach,
    known: { from, to: reach.to },
  });
}

test('rates are per second over the whole range the source speaks for, with the busiest step beside them', () => {
  // A 2.5 s burst (three seconds: 6,650, 6,650 and 3,325 I/Os) in a 10 s view of idle seconds.
  const frames: Frame[] = [];
  for (let s = 0; s < 10; s++) {
    const n = s === 4 || s === 5 ? 6650 : s === 6 ? 3325 : 0;
    frames.push({ ts: T0 + s, step: 1, disks: n > 0 ? [reads('7:0', n, 1e-3)] : [] });
  }
  const sum = summary(frames, T0, T0 + 10, { from: T0 - 600, to: T0 + 10 });
  const disk = sum.disks.get('7:0');
  assert.ok(disk);
  assert.equal(sum.windowSeconds, 10, 'every second of the view: idle ones too');
  assert.equal(disk.n / sum.windowSeconds, 1662.5, 'the mean over the view, not over the 3 seconds with I/O');
  assert.deepEqual(sum.peaks.get('7:0'), { rate: 6650, step: 1 }, 'the busiest second beside it');
  // The view reaches past the live edge and before the agent's oldest second: neither counts.
  assert.equal(summary(frames, T0 - 5, T0 + 15, { from: T0, to: T0 + 10 }).windowSeconds, 10);
  // A second the agent was down for (no frame, inside what the source has spoken for) is left out.
  const outage = frames.filter((f) => f.ts !== T0 + 8);
  assert.equal(summary(outage, T0, T0 + 10, { from: T0 - 600, to: T0 + 10 }).windowSeconds, 9);
  // Its oldest second unknown (the fake agent's hello lacking it): from the view's start.
  assert.equal(summary(frames, T0, T0 + 10, { from: undefined, to: T0 + 10 }).windowSeconds, 10);
});

test("the op-class table per disk: loop0's slow reads no longer hide under a fast disk's p50", () => {
  // loop0: 20 reads at 15 ms per second; vda: 5000 reads at 50 µs per second.
  const frames: Frame[] = [];
  for (let s = 0; s < 10; s++) frames.push({ ts: T0 + s, step: 1, disks: [reads('7:0', 20, 15e-3), reads('253:0', 5000, 50e-6)] });
  const sum = summary(frames, T0, T0 + 10, { from: T0, to: T0 + 10 }, ['7:0', '253:0']);
  const all = sum.classes.find((c) => c.c === 'Read');
  assert.ok(all);
  assert.equal(all.n, 50200);
  assert.equal(formatQuantile(all.quantiles.find((q) => q.label === 'p50')), `≤ ${formatLatency(top(50e-6))}`, 'together: the fast disk');
  const loop0 = sum.classesByDisk.get('7:0')?.find((c) => c.c === 'Read');
  const vda = sum.classesByDisk.get('253:0')?.find((c) => c.c === 'Read');
  assert.ok(loop0 && vda);
  assert.deepEqual([loop0.n, loop0.share, vda.n, vda.share], [200, 1, 50000, 1], 'each disk its own counts and shares');
  assert.equal(formatQuantile(loop0.quantiles.find((q) => q.label === 'p50')), `≤ ${formatLatency(top(15e-3))}`);
  assert.equal(formatQuantile(vda.quantiles.find((q) => q.label === 'p50')), `≤ ${formatLatency(top(50e-6))}`);
  // The sum over the disks is the table over them together.
  for (let i = 0; i < ROWS; i++) assert.equal(all.hist[i], (loop0.hist[i] as number) + (vda.hist[i] as number));
  let n = 0;
  for (const f of frames) for (const d of f.disks) n += conservedCount(d);
  assert.equal(n, 50200);
});

test('the worst disk: stuck now first (longest first), then by p99, then by failed I/Os', () => {
  const p99 = (seconds: number) => quantilesOf(dense([[seconds, 100]]), S, P99)[0];
  const stuck = stuckNow(
    {
      dev: '7:2',
      cls: [],
      inflight: {
        n: 1,
        oldest_ns: 12.3e9,
        ios: [{ c: 'Read', pid: 1, comm: 'dd', sector: 0, bytes: 4096, age_ns: 12.3e9, dev_age_ns: 12.3e9 }],
      },
    },
    1,
  );
  const facts: Record<string, { p99?: number; stuck?: boolean; failed: number }> = {
    '253:0': { p99: 200e-6, failed: 0 },
    '7:0': { p99: 15e-3, failed: 0 },
    '7:1': { p99: 15e-3, failed: 3 },
    '7:2': { p99: 100e-6, stuck: true, failed: 0 },
    '7:3': { failed: 0 },
  };
  const ranked = rankDisks({
    devs: Object.keys(facts),
    p99: (dev) => {
      const seconds = facts[dev]?.p99;
      return seconds !== undefined ? p99(seconds) : undefined;
    },
    stuck: (dev) => (facts[dev]?.stuck ? stuck : undefined),
    failed: (dev) => facts[dev]?.failed ?? 0,
  });
  assert.deepEqual(
    ranked.map((s) => s.dev),
    ['7:2', '7:1', '7:0', '253:0'],
    'the stuck one; then the slow p99s (failures breaking their tie); a disk with nothing to rank is left out',
  );
  assert.equal(standingText(ranked[0]!), `stuck 12.3 s · p99 ≤ ${formatLatency(top(100e-6))}`);
  assert.equal(standingText(ranked[1]!), `p99 ≤ ${formatLatency(top(15e-3))} · 3 failed`);
  assert.equal(standingText(ranked[3]!), `p99 ≤ ${formatLatency(top(200e-6))}`);
});

test('the data layer asks for the samples at the ranks and shows a percentile exact once every I/O of its bucket is in hand', async () => {
  // loop0: a 1 ms read every second, and at T0 + 10 one of 32.2 s (its sample kept); sda: one
  // read of 50 s with no sample. The snapshot holds that one sample only.
  const frames: Frame[] = [];
  for (let s = 0; s < 30; s++) {
    const disks: DiskFrame[] = [
      s === 10 ? { dev: LOOP0.dev, cls: [{ c: 'Read', n: 2, d: [b(1e-3), 1, b(32.2), 1], q: [] }] } : reads(LOOP0.dev, 1, 1e-3),
    ];
    if (s === 20) disks.push(reads(SDA.dev, 1, 50));
    frames.push({ ts: T0 + s, step: 1, disks });
  }
  const slow: IoSample = {
    ts_us: (T0 + 10) * 1e6 + 5e5,
    dev: LOOP0.dev,
    c: 'Read',
    sector: 8,
    bytes: 4096,
    q_ns: 0,
    d_ns: 32.2e9,
    pid: 7,
    comm: 'dd',
    cgroup: 1,
    outlier: true,
  };
  const h = dataHarness();
  h.openSnapshot({ ...snapshotOf(frames, { from: T0, to: T0 + 30 }, [LOOP0, SDA]), samples: [slow] }, 'ranks.json');
  for (let i = 0; i < 100 && !(h.store.getState().rankSamples?.byDev.get(LOOP0.dev)?.size ?? 0); i++)
    await new Promise((r) => setTimeout(r, 5));
  const state = h.store.getState();
  assert.equal(state.rankSamples?.summary, state.summary, 'for the summary on screen');
  const loop0 = shownQuantiles(state, LOOP0.dev);
  assert.deepEqual(
    loop0.map((v) => labelledQuantile(v)),
    [`p50 ≤ ${formatLatency(top(1e-3))}`, `p90 ≤ ${formatLatency(top(1e-3))}`, 'p99 32.2 s', 'p99.9 32.2 s'],
    "loop0's slowest read is its sampled 32.2 s; its 1 ms reads have no samples: bounds",
  );
  assert.deepEqual(
    shownQuantiles(state, SDA.dev).map((v) => labelledQuantile(v)),
    ['p50 ≤ 53.8 s', 'p90 ≤ 53.8 s', 'p99 ≤ 53.8 s', 'p99.9 ≤ 53.8 s'],
    "sda's read has no sample: its bucket's top",
  );
});

// Compare (A/B) model: per disk and class sums of a range, each range normalised to its own
// count, percentile deltas and the share difference; the same answer from coarse (merged)
// frames as from 1 s ones; the snapshot field and its splicing into the agent's file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketCount,
  bucketOfSeconds,
  coarsenFrames,
  type Frame,
  lowerBoundSeconds,
  parseSnapshot,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import {
  ALL_CLASSES,
  alignRange,
  compareDistributions,
  percentileDeltas,
  rangeHistograms,
  type RangeHistogram,
  shareDifference,
} from '../src/model/compare.ts';
import { divergingColour } from '../src/model/colour.ts';
import { formatShareDelta } from '../src/model/format.ts';
import { formatLatency } from '../src/model/latency.ts';
import { formatQuantile } from '../src/model/percentiles.ts';
import { compareInSnapshot, exportSnapshotText, snapshotTextWithCompare, snapshotWithCompare } from '../src/model/snapshot.ts';
import { snapshotOf } from './fixtures/dataLayer.ts';

const S = BUCKET_SCHEMA;
const ROWS = bucketCount(S);
const B2 = bucketOfSeconds(2e-3, S);
const B8 = bucketOfSeconds(8e-3, S);
const T0 = 1_700_000_000;

/** A histogram with `n` I/Os in each of the given buckets. */
function hist(entries: Record<number, number>): RangeHistogram {
  const h = new Float64Array(ROWS);
  let total = 0;
  for (const [b, n] of Object.entries(entries)) {
    h[Number(b)] = n;
    total += n;
  }
  return { hist: h, total };
}

/** One second of loop0: `reads` Reads at `bucket` (device) and bucket 3 (queue), `writes` Writes at `bucket` + 1. */
function frame(ts: number, bucket: number, reads: number, writes: number): Frame {
  return {
    ts,
    step: 1,
    disks: [
      {
        dev: '7:0',
        cls: [
          { c: 'Read', n: reads, d: [bucket, reads], q: [3, reads] },
          { c: 'Write', n: writes, d: [bucket + 1, writes], q: [] },
        ],
      },
    ],
  };
}

test('rangeHistograms: per disk and class, and their sum, over the frames in [from, to) only', () => {
  const frames = [frame(T0 - 1, B2, 99, 99), frame(T0, B2, 10, 2), frame(T0 + 1, B8, 5, 1), frame(T0 + 2, B8, 99, 99)];
  const h = rangeHistograms(frames, { from: T0, to: T0 + 2 }, { kind: 'device', classes: [], schema: S });
  const loop = h.get('7:0');
  assert.ok(loop);
  assert.equal(loop.get('Read')?.total, 15);
  assert.equal(loop.get('Read')?.hist[B2], 10);
  assert.equal(loop.get('Read')?.hist[B8], 5);
  assert.equal(loop.get('Write')?.hist[B2 + 1], 2);
  assert.equal(loop.get('Write')?.hist[B8 + 1], 1);
  assert.equal(loop.get(ALL_CLASSES)?.total, 18);
  // The class filter applies as on the heat maps; queue latency reads `q` (Write has none).
  const reads = rangeHistograms(frames, { from: T0, to: T0 + 2 }, { kind: 'queue', classes: ['Read'], schema: S }).get('7:0');
  assert.deepEqual([...(reads?.keys() ?? [])].sort(), [ALL_CLASSES, 'Read'].sort());
  assert.equal(reads?.get(ALL_CLASSES)?.hist[3], 15);
});

test('coarse steps: merged frames over the whole steps of a range sum to what its 1 s frames do', () => {
  const frames: Frame[] = [];
  for (let t = T0; t < T0 + 120; t++) frames.push(frame(t, t < T0 + 60 ? B2 : B8, 1 + (t % 7), t % 3));
  const coarse = coarsenFrames(frames, 10, S);
  // A range not on the step is widened to the steps holding it, and then the sums agree.
  const r = alignRange({ from: T0 + 13, to: T0 + 87 }, 10);
  assert.deepEqual(r, { from: T0 + 10, to: T0 + 90 });
  assert.deepEqual(alignRange({ from: T0 + 10, to: T0 + 10 }, 10), { from: T0 + 10, to: T0 + 20 }, 'at least one step');
  const opts = { kind: 'device' as const, classes: [], schema: S };
  const fine = rangeHistograms(frames, r, opts).get('7:0');
  const merged = rangeHistograms(coarse, r, opts).get('7:0');
  for (const c of [ALL_CLASSES, 'Read', 'Write']) {
    assert.deepEqual([...(merged?.get(c)?.hist ?? [])], [...(fine?.get(c)?.hist ?? [])], c);
    assert.equal(merged?.get(c)?.total, fine?.get(c)?.total, c);
  }
});

test('shareDifference: comparison − baseline, each as a share of its own count', () => {
  // Baseline 40 I/Os: 10 at B2, 30 at B2+1. Comparison 200 I/Os (5× busier): 100 at B2+1, 100 at B8.
  const a = hist({ [B2]: 10, [B2 + 1]: 30 });
  const b = hist({ [B2 + 1]: 100, [B8]: 100 });
  const d = shareDifference(a, b);
  assert.ok(d);
  assert.equal(d[B2], -0.25);
  assert.equal(d[B2 + 1], 0.5 - 0.75);
  assert.equal(d[B8], 0.5);
  assert.ok(Math.abs(d.reduce((s, v) => s + v, 0)) < 1e-12, 'shares of both sum to 1: the differences to 0');
  assert.equal(shareDifference(a, hist({})), undefined, 'nothing to compare with a range without I/O');
});

test('percentileDeltas: p50/p90/p99/p99.9 of both ranges and comparison − baseline', () => {
  const a = hist({ [B2]: 100 });
  const b = hist({ [B8]: 100 });
  const deltas = percentileDeltas(a, b, S);
  assert.deepEqual(
    deltas.map((d) => d.label),
    ['p50', 'p90', 'p99', 'p99.9'],
  );
  // A histogram knows the bucket of the I/O at a rank, not where in it: every percentile is shown
  // as its bucket's top ("≤"), and the delta is the difference of the two tops.
  const top = (bucket: number): number => upperBoundSeconds(bucket, S);
  const p50 = deltas[0];
  assert.ok(p50 && p50.baseline !== undefined && p50.comparison !== undefined && p50.delta !== undefined);
  assert.deepEqual([p50.baseline.kind, p50.baseline.bucket, p50.baseline.seconds], ['bound', B2, top(B2)]);
  assert.deepEqual([p50.comparison.kind, p50.comparison.bucket, p50.comparison.seconds], ['bound', B8, top(B8)]);
  assert.equal(formatQuantile(p50.baseline), `≤ ${formatLatency(top(B2))}`);
  assert.equal(formatQuantile(p50.comparison), `≤ ${formatLatency(top(B8))}`);
  assert.equal(p50.delta, top(B8) - top(B2));
  assert.ok(Math.abs(p50.delta - 6e-3) < upperBoundSeconds(B8, S) - lowerBoundSeconds(B8, S), 'within one bucket of 6 ms');
  const p99 = deltas[2];
  assert.ok(p99?.comparison !== undefined && p99.delta !== undefined);
  assert.equal(p99.comparison.seconds, top(B8), 'p99 of one bucket: its top too');
  assert.equal(p99.delta, top(B8) - top(B2));
  const none = percentileDeltas(a, hist({}), S)[0];
  assert.equal(none?.comparison, undefined);
  assert.equal(none?.delta, undefined, 'no delta against a range without I/O');
  const delta = (seconds: number | undefined): string => formatLatency(seconds, { signed: true });
  assert.equal(delta(6.02e-3), '+6.02 ms');
  assert.equal(delta(-850e-9), '−850 ns');
  assert.equal(delta(0), '±0');
  assert.equal(delta(undefined), '–');
  assert.equal(formatShareDelta(0.123), '+12.3 pts');
  assert.equal(formatShareDelta(-0.0004), '−0.04 pts');
});

test('compareDistributions: every class of either range, the sum first; one axis and scales per disk', () => {
  const base = rangeHistograms([frame(T0, B2, 30, 10)], { from: T0, to: T0 + 1 }, { kind: 'device', classes: [], schema: S });
  const cmp = rangeHistograms([frame(T0 + 5, B8, 40, 0)], { from: T0 + 5, to: T0 + 6 }, { kind: 'device', classes: [], schema: S });
  const [loop, ...rest] = compareDistributions(base, cmp, ['7:0', '8:0'], S);
  assert.equal(rest.length, 0, 'a disk with I/O in neither range is left out');
  assert.ok(loop);
  assert.deepEqual(
    loop.rows.map((r) => r.c),
    [ALL_CLASSES, 'Read', 'Write'],
  );
  const write = loop.rows[2];
  assert.equal(write?.comparison.total, 0);
  assert.equal(write?.difference, undefined);
  assert.equal(loop.lo, B2);
  assert.equal(loop.hi, B8 + 1);
  assert.equal(loop.maxShare, 1, 'every comparison Read is in one bucket');
  assert.equal(loop.maxDiff, 1);
});

test('snapshot field: spliced into the agent file, kept by export, restored by import, checked against the range', () => {
  const snap = snapshotOf([frame(T0, B2, 3, 1), frame(T0 + 100, B8, 3, 1)], { from: T0, to: T0 + 200 });
  const choice = { baseline: { from: T0, to: T0 + 60 }, comparison: { from: T0 + 60, to: T0 + 200 } };
  const text = snapshotTextWithCompare(`${exportSnapshotText(snap)}\n`, choice);
  const parsed = parseSnapshot(text);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
  assert.deepEqual(parsed.value.compare, choice);
  assert.deepEqual(compareInSnapshot(parsed.value), choice);
  assert.deepEqual(JSON.parse(text).frames, JSON.parse(exportSnapshotText(snap)).frames, 'the agent’s part is unchanged');
  // Built or re-cut by the page: the object carries it; without a comparison, no field.
  assert.deepEqual(snapshotWithCompare(snap, { baseline: choice.baseline }).compare, { baseline: choice.baseline });
  assert.equal('compare' in snapshotWithCompare(parsed.value, undefined), false);
  // A file without it imports as before.
  assert.equal(compareInSnapshot(snap), undefined);
  // Outside the file's range: imported, the comparison is not shown, and the message says why.
  const outside = snapshotWithCompare(snap, { baseline: { from: T0 + 500, to: T0 + 600 } });
  assert.match(String(compareInSnapshot(outside)), /compare baseline range lies outside its range/);
  // Malformed: the file is refused, naming the field.
  const bad = parseSnapshot(JSON.stringify({ ...snap, compare: { baseline: { from: T0 + 60, to: T0 } } }));
  assert.ok(!bad.ok);
  assert.match(bad.message, /compare\.baseline/);
  assert.throws(() => snapshotTextWithCompare('not json', choice), /not answer with a snapshot object/);
});

test('divergingColour: red for more, blue for less, as strong as the difference', () => {
  const rgba = (css: string): number[] => (/rgba?\(([^)]+)\)/.exec(css)?.[1] ?? '').split(',').map(Number);
  const [r1, , b1, a1 = 1] = rgba(divergingColour(1));
  const [r2, , b2] = rgba(divergingColour(-1));
  assert.ok(r1 !== undefined && b1 !== undefined && r1 > b1 + 60, 'more: red');
  assert.ok(r2 !== undefined && b2 !== undefined && b2 > r2 + 60, 'less: blue');
  assert.equal(a1, 1);
  const weak = rgba(divergingColour(0.1))[3] as number;
  const half = rgba(divergingColour(0.5))[3] as number;
  assert.ok(weak < half && half < 1, `opacity grows with the difference (${weak}, ${half})`);
  assert.deepEqual(rgba(divergingColour(7)), rgba(divergingColour(1)), 'clamped');
});

// The dashboard draws whatever bucket schema the data names: schema-3 (8 buckets per octave)
// counts land in the rows whose bounds hold their latency, percentiles come out right within a
// schema-3 bucket, and a source changing schema (a reconnect, an imported file) rebuilds every
// derived matrix at the new size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketCount,
  bucketOfNs,
  bucketOfSeconds,
  type BucketSchema,
  denseHist,
  FINE_BUCKET_SCHEMA,
  type Frame,
  lowerBoundSeconds,
  toSparse,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { classBreakdown } from '../src/model/breakdown.ts';
import { buildMatrix } from '../src/model/heatmatrix.ts';
import { bucketBoundsSeconds, latencyTicks, secondsToU, uToSeconds } from '../src/model/latency.ts';
import { PercentileTrack, quantilesOf } from '../src/model/percentiles.ts';
import { selectionQuery } from '../src/model/samples.ts';
import { liveView } from '../src/model/view.ts';
import { type DataHarness, dataHarness, LOOP0, snapshotOf } from './fixtures/dataLayer.ts';
import { prng } from './fixtures/synthetic.ts';

const FINE = FINE_BUCKET_SCHEMA;
const T0 = 1_700_000_000;

/** One second of loop0: `n` I/Os of `ns` nanoseconds each, bucketed in `schema`. */
function frameAt(ts: number, ns: number, schema: BucketSchema, n = 7): Frame {
  return { ts, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n, d: [bucketOfNs(ns, schema), n], q: [0, n] }] }] };
}

test('schema 3: a 6 ms I/O lands in the row whose bounds hold 6 ms; 8 rows per octave', () => {
  const row = bucketOfSeconds(6e-3, FINE);
  const [lo, hi] = bucketBoundsSeconds(row, FINE);
  assert.ok(lo < 6e-3 && 6e-3 <= hi, `6 ms in (${lo}, ${hi}]`);
  assert.ok(Math.abs(Math.log2(hi / lo) - 1 / 8) < 1e-12, 'a schema-3 bucket is an eighth of an octave');
  assert.notEqual(row, bucketOfSeconds(6e-3, BUCKET_SCHEMA), 'not the scale-2 row');
  const m = buildMatrix([frameAt(T0, 6e6, FINE)], {
    from: T0,
    to: T0 + 1,
    step: 1,
    rows: bucketCount(FINE),
    filter: { dev: '7:0', kind: 'device' },
  });
  assert.equal(m.rows, 210);
  assert.equal(m.count(T0, row), 7);
  assert.deepEqual(m.rowExtent(), [row, row]);
  // The latency axis: u inside the row, an octave is 8 rows, ticks sit where their latency is.
  const u = secondsToU(6e-3, FINE);
  assert.ok(u >= row && u < row + 1, `u ${u} in row ${row}`);
  assert.ok(Math.abs(secondsToU(12e-3, FINE) - u - 8) < 1e-9);
  assert.ok(Math.abs(uToSeconds(u, FINE) - 6e-3) < 1e-15);
  const ticks = latencyTicks(row - 16, row + 16, FINE);
  const ms5 = ticks.find((t) => t.label === '5ms');
  const ms10 = ticks.find((t) => t.label === '10ms');
  assert.ok(ms5 && ms10, `ticks ${ticks.map((t) => t.label).join(' ')}`);
  assert.ok(ms5.u < u && u < ms10.u, '6 ms is drawn between the 5 ms and 10 ms ticks');
  assert.equal(Math.floor(ms5.u), bucketOfSeconds(5e-3, FINE));
  // Picking that cell asks the agent for exactly the I/Os schema 3 counted there.
  const q = selectionQuery({ dev: '7:0', from: T0, to: T0 + 1, bucketLo: row, bucketHi: row, schema: FINE, kind: 'device', classes: [] });
  assert.ok(q.minNs <= 6e6 && 6e6 <= q.maxNs);
  assert.equal(bucketOfNs(q.minNs, FINE), row);
  assert.equal(bucketOfNs(q.maxNs, FINE), row);
  assert.equal(bucketOfNs(q.minNs - 1, FINE), row - 1);
  assert.equal(bucketOfNs(q.maxNs + 1, FINE), row + 1);
});

test('schema 3: percentiles of schema-3 histograms are right within one schema-3 bucket', () => {
  const rnd = prng(3);
  const lat: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const base = rnd() < 0.8 ? 90e3 : 6e6;
    lat.push(Math.max(1, Math.round(base * Math.exp((rnd() - 0.5) * 1.5))));
  }
  const sorted = [...lat].sort((a, b) => a - b);
  const truth = (q: number): number => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;
  const dense = denseHist(FINE);
  for (const v of lat) dense[bucketOfNs(v, FINE)] = (dense[bucketOfNs(v, FINE)] as number) + 1;
  const qs = quantilesOf(dense, FINE);
  assert.equal(qs.length, 4);
  for (const qv of qs) {
    const t = truth(qv.q) / 1e9;
    assert.equal(qv.bucket, bucketOfNs(truth(qv.q), FINE), qv.label);
    assert.ok(qv.seconds > lowerBoundSeconds(qv.bucket, FINE) && qv.seconds <= upperBoundSeconds(qv.bucket, FINE), qv.label);
    assert.ok(Math.abs(Math.log2(qv.seconds / t)) <= 1 / 8, `${qv.label}: ${qv.seconds} vs ${t}, more than a schema-3 bucket apart`);
    assert.ok(qv.u >= qv.bucket && qv.u <= qv.bucket + 1);
  }
  // The per-column lines on a schema-3 heat map agree.
  const m = buildMatrix([{ ts: T0, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n: lat.length, d: toSparse(dense), q: [] }] }] }], {
    from: T0,
    to: T0 + 1,
    step: 1,
    rows: bucketCount(FINE),
    filter: { dev: '7:0', kind: 'device' },
  });
  const track = new PercentileTrack(m, FINE, [0.5, 0.99]);
  assert.ok(Math.abs(track.at(T0, 0) - secondsToU(truth(0.5) / 1e9, FINE)) <= 1);
  assert.ok(Math.abs(track.at(T0, 1) - secondsToU(truth(0.99) / 1e9, FINE)) <= 1);
  // A class breakdown of schema-3 frames: histograms of 210 buckets, p99 in the 6 ms mode.
  const [read] = classBreakdown([frameAt(T0, 6e6, FINE, 100)], { from: T0, to: T0 + 1, kind: 'device' }, FINE);
  assert.equal(read?.hist.length, 210);
  assert.equal(read?.quantiles.find((x) => x.label === 'p99')?.bucket, bucketOfSeconds(6e-3, FINE));
});

async function settle(h: DataHarness): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
  assert.ok(h.window(), 'a data window');
}

test('data layer: live frames follow the hello schema; a new schema (reconnect) rebuilds at its size', async () => {
  const h = dataHarness({ disks: [LOOP0] });
  const dm = h.dm;
  // Schema 2 first: 106 rows, the 6 ms I/Os in the scale-2 row.
  assert.equal(dm.setLiveSchema(BUCKET_SCHEMA), undefined);
  dm.onFrames([0, 1, 2, 3].map((s) => frameAt(T0 + s, 6e6, BUCKET_SCHEMA)));
  dm.onCovered(T0, T0 + 4);
  h.ui.setState({ view: liveView(dm.edge(), 60) });
  dm.refresh();
  await settle(h);
  const two = h.window()?.matrices.get('7:0');
  assert.equal(two?.rows, 106);
  assert.equal(two?.count(T0 + 1, bucketOfSeconds(6e-3, BUCKET_SCHEMA)), 7);

  // The agent comes back on schema 3: what was held is dropped, not misread as schema-3 rows.
  assert.equal(dm.setLiveSchema(FINE), undefined);
  assert.equal(dm.schema(), FINE);
  assert.equal(dm.live.size, 0, 'schema-2 frames dropped');
  dm.onFrames([4, 5, 6, 7].map((s) => frameAt(T0 + s, 6e6, FINE)));
  dm.onCovered(T0 + 4, T0 + 8);
  h.ui.setState({ view: liveView(dm.edge(), 60) });
  dm.refresh();
  await settle(h);
  const cur = h.window();
  assert.ok(cur);
  assert.deepEqual(cur.schema, FINE);
  const m = cur.matrices.get('7:0');
  assert.equal(m?.rows, 210);
  const row = bucketOfSeconds(6e-3, FINE);
  assert.equal(m?.count(T0 + 5, row), 7, 'in the schema-3 row of 6 ms');
  assert.equal(m?.count(T0 + 1, bucketOfSeconds(6e-3, BUCKET_SCHEMA)), 0, 'nothing left of schema 2');
  // The latency window holds the row, in whole schema-3 octaves, at least 6 of them.
  assert.ok(cur.yLo <= row && row < cur.yHi && cur.yHi <= 210);
  assert.equal(cur.yLo % 8, 0);
  assert.ok(cur.yHi - cur.yLo >= 48);
  // Summaries read the histograms as schema 3.
  const sum = dm.freshSummary();
  const p50 = sum?.perDisk.get('7:0')?.quantiles.find((q) => q.label === 'p50');
  assert.ok(p50 && p50.seconds > lowerBoundSeconds(row, FINE) && p50.seconds <= upperBoundSeconds(row, FINE), `p50 ${p50?.seconds}`);
  assert.equal(sum?.classes[0]?.hist.length, 210);

  // A schema this page cannot draw: refused, its frames ignored.
  assert.match(dm.setLiveSchema({ scale: 5, minIndex: -640, maxIndex: 192 }) ?? '', /scale 5/);
  dm.onFrames([frameAt(T0 + 8, 6e6, FINE)]);
  assert.equal(dm.live.size, 0);
});

test('data layer: a schema-3 snapshot while live is schema 2, then back to live', async () => {
  const h = dataHarness({ disks: [LOOP0] });
  const dm = h.dm;
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.onFrames([frameAt(T0, 6e6, BUCKET_SCHEMA)]);
  dm.onCovered(T0, T0 + 1);
  const frames = [0, 1, 2].map((s) => frameAt(T0 + 100 + s, 6e6, FINE));
  const snapshot = snapshotOf(frames, { from: T0 + 100, to: T0 + 103 }, [LOOP0], FINE);
  h.openSnapshot(snapshot, 'fine.json');
  await settle(h);
  assert.deepEqual(h.window()?.schema, FINE);
  assert.equal(h.window()?.matrices.get('7:0')?.rows, 210);
  assert.equal(
    h
      .window()
      ?.matrices.get('7:0')
      ?.count(T0 + 101, bucketOfSeconds(6e-3, FINE)),
    7,
  );
  assert.equal(h.store.getState().mode, 'snapshot');
  dm.closeSnapshot();
  h.ui.setState({ view: liveView(dm.edge(), 60) });
  await settle(h);
  assert.equal(h.store.getState().mode, 'live');
  assert.deepEqual(h.window()?.schema, BUCKET_SCHEMA);
  assert.equal(h.window()?.matrices.get('7:0')?.rows, 106);
  assert.equal(h.window()?.matrices.get('7:0')?.count(T0, bucketOfSeconds(6e-3, BUCKET_SCHEMA)), 7);
});

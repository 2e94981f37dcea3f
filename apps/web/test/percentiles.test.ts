// Percentiles from histograms against a brute-force computation over the raw latencies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketOfNs,
  denseHist,
  lowerBoundSeconds,
  overflowIndex,
  quantileSeconds,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { HeatMatrix } from '../src/model/heatmatrix.ts';
import { columnQuantilesU, MARK_QUANTILES, PercentileTrack, quantilesOf } from '../src/model/percentiles.ts';
import { secondsToU } from '../src/model/latency.ts';
import { prng } from './fixtures/synthetic.ts';

/** The q-quantile by rank, as a person would compute it: sort, take the ceil(q·N)-th value. */
function bruteForce(latNs: number[], q: number): number {
  const sorted = [...latNs].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1] as number;
}

function randomLatencies(seed: number, n: number): number[] {
  const rnd = prng(seed);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    // A mixture: a fast mode, a slow mode, rare huge outliers.
    const r = rnd();
    const base = r < 0.7 ? 80e3 : r < 0.98 ? 4e6 : 900e6;
    out.push(Math.max(1, Math.round(base * Math.exp((rnd() - 0.5) * 2))));
  }
  return out;
}

test('quantilesOf: bucket equals the brute-force quantile bucket, value lies inside it', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    for (const n of [1, 2, 7, 100, 1000, 12345]) {
      const lat = randomLatencies(seed * 1000 + n, n);
      const dense = denseHist();
      for (const v of lat) dense[bucketOfNs(v)] = (dense[bucketOfNs(v)] as number) + 1;
      const qs = quantilesOf(dense, BUCKET_SCHEMA, [...MARK_QUANTILES, { q: 0, label: 'min' }, { q: 1, label: 'max' }]);
      assert.equal(qs.length, MARK_QUANTILES.length + 2);
      for (const qv of qs) {
        const truth = bruteForce(lat, qv.q);
        assert.equal(qv.bucket, bucketOfNs(truth), `seed ${seed} n ${n} ${qv.label}`);
        assert.ok(qv.seconds >= lowerBoundSeconds(qv.bucket) && qv.seconds <= upperBoundSeconds(qv.bucket));
        assert.ok(qv.u >= qv.bucket && qv.u <= qv.bucket + 1, `u ${qv.u} inside bucket ${qv.bucket}`);
      }
    }
  }
});

test('quantilesOf: empty histogram gives no quantiles', () => {
  assert.deepEqual(quantilesOf(denseHist(), BUCKET_SCHEMA), []);
});

/** u positions are upper-inclusive like the buckets: bucket d spans [d, d + 1]. */
function inBucket(u: number, d: number): void {
  assert.ok(u >= d && u <= d + 1, `u ${u} not in bucket ${d}`);
}

test('PercentileTrack: per-column lines equal quantiles of each column, recomputed after changes', () => {
  const rows = denseHist().length;
  const m = new HeatMatrix(rows, 1, 8, 100);
  const cols: number[][] = [];
  for (let c = 100; c < 106; c++) {
    const lat = randomLatencies(c, 500);
    cols.push(lat);
    const dense = denseHist();
    for (const v of lat) dense[bucketOfNs(v)] = (dense[bucketOfNs(v)] as number) + 1;
    const sparse: number[] = [];
    dense.forEach((x, i) => x > 0 && sparse.push(i, x));
    m.addSparse(c, sparse);
  }
  const track = new PercentileTrack(m, BUCKET_SCHEMA, [0.5, 0.99]);
  for (let c = 100; c < 106; c++) {
    const lat = cols[c - 100] as number[];
    inBucket(track.at(c, 0), bucketOfNs(bruteForce(lat, 0.5)));
    inBucket(track.at(c, 1), bucketOfNs(bruteForce(lat, 0.99)));
  }
  assert.ok(Number.isNaN(track.at(99, 0)), 'outside the window');
  // Piling many slow I/Os into column 100 must move its p50 up.
  const before = track.at(100, 0);
  const slow = bucketOfNs(500e6);
  m.addSparse(100, [slow, 10_000]);
  assert.ok(track.at(100, 0) > before);
  inBucket(track.at(100, 0), slow);
  assert.ok(Math.abs(secondsToU(upperBoundSeconds(slow), BUCKET_SCHEMA) - (slow + 1)) < 1e-9);
});

test('columnQuantilesU: equals secondsToU(quantileSeconds) of shared-types', () => {
  const qs = [0, 0.5, 0.9, 0.99, 0.999, 1];
  for (const seed of [7, 8, 9]) {
    for (const n of [1, 3, 50, 999, 20000]) {
      const lat = randomLatencies(seed * 77 + n, n);
      // Include the underflow and overflow buckets.
      lat.push(10, 500e9);
      const dense = denseHist();
      for (const v of lat) dense[bucketOfNs(v)] = (dense[bucketOfNs(v)] as number) + 1;
      const out = new Float64Array(qs.length);
      columnQuantilesU(dense, 0, dense.length, lat.length, qs, out, 0, overflowIndex());
      qs.forEach((q, i) => {
        const expect = secondsToU(quantileSeconds(dense, q) as number, BUCKET_SCHEMA);
        assert.ok(Math.abs((out[i] as number) - expect) < 1e-9, `q ${q}: ${out[i]} vs ${expect}`);
      });
    }
  }
  const empty = new Float64Array(2);
  columnQuantilesU(denseHist(), 0, denseHist().length, 0, [0.5, 0.99], empty, 0, overflowIndex());
  assert.ok(Number.isNaN(empty[0]) && Number.isNaN(empty[1]));
});

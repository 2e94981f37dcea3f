import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addSparseInto,
  bucketCount,
  cumulativeShare,
  denseHist,
  lowerBoundSeconds,
  mergeSparse,
  quantileBucket,
  quantileSeconds,
  sparseProblem,
  sparseTotal,
  toSparse,
  upperBoundSeconds,
} from '../src/index.js';

function randomDense(seed: number): Float64Array {
  let x = seed;
  const rnd = (): number => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const d = denseHist();
  const centre = Math.floor(rnd() * bucketCount());
  for (let i = 0; i < 400; i++) {
    const b = Math.min(bucketCount() - 1, Math.max(0, centre + Math.round((rnd() - 0.5) * 20)));
    d[b] = (d[b] as number) + 1 + Math.floor(rnd() * 5);
  }
  return d;
}

test('quantiles equal a brute-force computation over the expanded I/Os', () => {
  for (let seed = 1; seed <= 50; seed++) {
    const dense = randomDense(seed);
    const expanded: number[] = [];
    dense.forEach((c, b) => {
      for (let k = 0; k < c; k++) expanded.push(b);
    });
    for (const q of [0, 0.01, 0.5, 0.9, 0.99, 0.999, 1]) {
      const rank = Math.max(1, Math.ceil(q * expanded.length));
      const bucket = expanded[rank - 1];
      assert.equal(quantileBucket(dense, q), bucket, `seed ${seed} q ${q}`);
      const s = quantileSeconds(dense, q);
      assert.ok(s !== undefined && bucket !== undefined);
      assert.ok(s >= lowerBoundSeconds(bucket) && s <= upperBoundSeconds(bucket), `q ${q} interpolates inside its bucket`);
    }
    const b = quantileBucket(dense, 0.5) as number;
    const atOrBelow = [...dense].slice(0, b + 1).reduce((a, c) => a + c, 0);
    assert.equal(cumulativeShare(dense, b), atOrBelow / expanded.length);
  }
  assert.equal(quantileBucket(denseHist(), 0.5), undefined);
  assert.equal(quantileSeconds(denseHist(), 0.5), undefined);
});

test('sparse <-> dense round-trips and merging sums', () => {
  const a = randomDense(7);
  const b = randomDense(8);
  const sa = toSparse(a);
  const sb = toSparse(b);
  assert.equal(sparseProblem(sa), undefined);
  const back = denseHist();
  addSparseInto(back, sa);
  assert.deepEqual([...back], [...a]);
  const merged = mergeSparse(sa, sb);
  const sum = denseHist();
  addSparseInto(sum, sa);
  addSparseInto(sum, sb);
  assert.deepEqual(merged, toSparse(sum));
  assert.equal(sparseTotal(merged), sparseTotal(sa) + sparseTotal(sb));
});

test('sparseProblem names what is wrong with a foreign histogram', () => {
  assert.match(sparseProblem([1, 2, 3]) ?? '', /odd length/);
  assert.match(sparseProblem([5, 1, 3, 1]) ?? '', /strictly increasing/);
  assert.match(sparseProblem([9999, 1]) ?? '', /outside/);
  assert.match(sparseProblem([1, 0]) ?? '', /positive integer/);
  assert.match(sparseProblem([1, 1.5]) ?? '', /positive integer/);
  assert.throws(() => addSparseInto(denseHist(), [9999, 1]), RangeError);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketCount,
  bucketOfNs,
  bucketOfSeconds,
  lowerBoundSeconds,
  overflowIndex,
  prometheusIndex,
  upperBoundSeconds,
  upperBoundsNs,
  UNDERFLOW,
} from '../src/index.js';

test('schema covers <= 1 us to >= 60 s with 4 buckets per power of two', () => {
  assert.equal(BUCKET_SCHEMA.scale, 2);
  assert.ok(lowerBoundSeconds(1) <= 1e-6, 'first regular bucket starts at or below 1 us');
  assert.ok(upperBoundSeconds(overflowIndex() - 1) >= 60, 'last regular bucket reaches 60 s');
  assert.equal(bucketCount(), overflowIndex() + 1);
  for (let i = 1; i < overflowIndex(); i++) {
    const ratio = upperBoundSeconds(i) / lowerBoundSeconds(i);
    assert.ok(Math.abs(ratio - 2 ** 0.25) < 1e-12, `bucket ${i} spans 2^(1/4)`);
  }
});

test('bounds are the Prometheus native-histogram bounds of schema 2, in seconds', () => {
  for (let i = 1; i < overflowIndex(); i++) {
    const p = prometheusIndex(i);
    assert.ok(p !== undefined);
    assert.equal(upperBoundSeconds(i), 2 ** (p / 4));
    assert.equal(lowerBoundSeconds(i), 2 ** ((p - 1) / 4));
  }
  assert.equal(prometheusIndex(UNDERFLOW), undefined);
  assert.equal(prometheusIndex(overflowIndex()), undefined);
  assert.equal(upperBoundSeconds(overflowIndex()), Infinity);
});

test('integer ns bounds are exact floors of 1e9 * 2^(i/4) (checked by exact integer powers)', () => {
  const bounds = upperBoundsNs();
  assert.equal(bounds.length, overflowIndex());
  bounds.forEach((b, k) => {
    const e = BUCKET_SCHEMA.minIndex - 1 + k;
    // b = floor(x) <=> b^4 <= x^4 < (b+1)^4 with x^4 = 1e36 * 2^e.
    const num = 10n ** 36n * (e >= 0 ? 2n ** BigInt(e) : 1n);
    const den = e < 0 ? 2n ** BigInt(-e) : 1n;
    assert.ok(b ** 4n * den <= num, `bound ${k} too large`);
    assert.ok((b + 1n) ** 4n * den > num, `bound ${k} too small`);
  });
});

test('bucketOfNs is upper-inclusive and agrees with a linear scan', () => {
  const bounds = upperBoundsNs();
  const linear = (v: bigint): number => {
    const k = bounds.findIndex((b) => v <= b);
    return k < 0 ? bounds.length : k;
  };
  for (const b of bounds) {
    assert.equal(bucketOfNs(b), linear(b));
    assert.equal(bucketOfNs(b + 1n), linear(b + 1n));
    assert.equal(bucketOfNs(b + 1n), bucketOfNs(b) + 1, 'one past a bound is the next bucket');
  }
  assert.equal(bucketOfNs(0), UNDERFLOW);
  assert.equal(bucketOfNs(10n ** 15n), overflowIndex());
  for (let i = 0; i < 2000; i++) {
    const v = BigInt(Math.floor(Math.random() * 1e11));
    assert.equal(bucketOfNs(v), linear(v));
  }
  assert.equal(bucketOfSeconds(0.005), bucketOfNs(5_000_000n));
});

test('bounds of out-of-range buckets throw', () => {
  assert.throws(() => upperBoundSeconds(-1), RangeError);
  assert.throws(() => lowerBoundSeconds(overflowIndex() + 1), RangeError);
  assert.throws(() => lowerBoundSeconds(1.5), RangeError);
});

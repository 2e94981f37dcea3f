// Prometheus' JSON buckets -> the agent's dense buckets (fleet/native-buckets.ts): every bound
// of schemas 2 and 3 maps back to its own bucket exactly, the zero bucket to underflow, the
// bucket past 64 s to overflow; a bound of no schema bucket is an error that says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, FINE_BUCKET_SCHEMA, lowerBoundSeconds, overflowIndex, upperBoundSeconds } from '@blkheat/shared-types';
import { BucketBoundError, countsBetween, denseBucketOf, denseCounts } from '../src/fleet/native-buckets.js';
import { promDurationSeconds } from '../src/fleet/prometheus-api.js';

test('every regular bucket of schemas 2 and 3 maps back to itself, from bounds printed as Go prints them', () => {
  for (const schema of [BUCKET_SCHEMA, FINE_BUCKET_SCHEMA]) {
    for (let k = 1; k < overflowIndex(schema); k++) {
      // Go's strconv 'g' -1 is the shortest round-trip text, as JS's String() is.
      const lower = Number(String(lowerBoundSeconds(k, schema)));
      const upper = Number(String(upperBoundSeconds(k, schema)));
      assert.equal(denseBucketOf(lower, upper, schema), k, `schema ${schema.scale} bucket ${k}`);
    }
    const zero = 2 ** -20;
    assert.equal(denseBucketOf(-zero, zero, schema), 0, 'the zero bucket is underflow');
    const past = 2 ** ((schema.maxIndex + 1) / 2 ** schema.scale);
    assert.equal(denseBucketOf(64, past, schema), overflowIndex(schema), 'the bucket past 64 s is overflow');
  }
});

test('a bound that is not the schema’s is an error naming it, not a re-binned count', () => {
  // A schema-3 bucket read as schema 2: (2^(-81/8), 2^(-80/8)] is no schema-2 bucket.
  assert.throws(
    () => denseBucketOf(2 ** (-81 / 8), 2 ** (-80 / 8), BUCKET_SCHEMA),
    (e: unknown) => e instanceof BucketBoundError && /is not a bucket of schema 2/.test(e.message) && /--schema/.test(e.message),
  );
  assert.throws(() => denseBucketOf(0.001, 0.002, BUCKET_SCHEMA), BucketBoundError);
  assert.throws(() => denseCounts({ count: '1', buckets: [[0, '0.0001', '0.0002', '1']] }, BUCKET_SCHEMA), BucketBoundError);
});

test('scrape-to-scrape differences are whole counts; a counter that went down is a restart', () => {
  const a = new Float64Array([0, 5, 10]);
  const b = new Float64Array([0, 7, 10]);
  assert.deepEqual(countsBetween(a, b), [1, 2]);
  assert.deepEqual(countsBetween(b, a), [1, 5, 2, 10], 'after a reset the whole newer histogram is new');
  assert.deepEqual(countsBetween(undefined, b), [1, 7, 2, 10]);
});

test('Prometheus durations', () => {
  assert.equal(promDurationSeconds('1s'), 1);
  assert.equal(promDurationSeconds('15s'), 15);
  assert.equal(promDurationSeconds('1m30s'), 90);
  assert.equal(promDurationSeconds('500ms'), 0.5);
  assert.equal(promDurationSeconds('soon'), undefined);
});

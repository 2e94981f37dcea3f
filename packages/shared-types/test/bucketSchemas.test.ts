// The schemas data may name (scale 2, the default; scale 3, the fine one) and what a reader
// refuses: snapshots are read in the schema they name, and a schema that cannot be drawn is a
// clear import error, not mis-drawn rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketCount,
  bucketOfSeconds,
  FINE_BUCKET_SCHEMA,
  lowerBoundSeconds,
  MAX_BUCKET_COUNT,
  overflowIndex,
  parseSnapshot,
  schemaOfScale,
  schemaProblem,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type Snapshot,
  SUPPORTED_SCHEMAS,
  upperBoundSeconds,
} from '../src/index.js';

test('the fine schema: 8 buckets per octave over the same 2^-20 s .. 2^6 s, 210 dense buckets', () => {
  assert.equal(bucketCount(FINE_BUCKET_SCHEMA), 210);
  assert.equal(bucketCount(BUCKET_SCHEMA), 106);
  assert.equal(upperBoundSeconds(0, FINE_BUCKET_SCHEMA), upperBoundSeconds(0, BUCKET_SCHEMA), 'same underflow edge');
  assert.equal(lowerBoundSeconds(overflowIndex(FINE_BUCKET_SCHEMA), FINE_BUCKET_SCHEMA), 64);
  assert.equal(bucketOfSeconds(0.012, FINE_BUCKET_SCHEMA) - bucketOfSeconds(0.006, FINE_BUCKET_SCHEMA), 8, 'an octave is 8 rows');
  assert.equal(bucketOfSeconds(0.012, BUCKET_SCHEMA) - bucketOfSeconds(0.006, BUCKET_SCHEMA), 4);
  assert.equal(schemaOfScale(3), FINE_BUCKET_SCHEMA);
  assert.equal(schemaOfScale(2), BUCKET_SCHEMA);
  assert.equal(schemaOfScale(4), undefined);
  for (const s of SUPPORTED_SCHEMAS) assert.equal(schemaProblem(s), undefined);
});

test('schemaProblem: only scale 2 or 3, sane indexes, a bounded bucket count', () => {
  const bad: [{ scale: number; minIndex: number; maxIndex: number }, RegExp][] = [
    [{ scale: 4, minIndex: -319, maxIndex: 96 }, /scale 4 is not supported/],
    [{ scale: 1, minIndex: -39, maxIndex: 12 }, /scale 1/],
    [{ scale: 3, minIndex: 10, maxIndex: -10 }, /above maxIndex/],
    [{ scale: 3, minIndex: -159.5, maxIndex: 48 }, /integers/],
    [{ scale: 3, minIndex: -1000, maxIndex: 48 }, /outside/],
    [{ scale: 2, minIndex: -79, maxIndex: 1000 }, /outside/],
  ];
  for (const [s, message] of bad) {
    const problem = schemaProblem(s);
    assert.ok(problem, `accepted ${JSON.stringify(s)}`);
    assert.match(problem, message);
  }
  // The widest range the limits allow still has a bounded number of buckets.
  const widest = { scale: 3, minIndex: -239, maxIndex: 96 };
  assert.equal(schemaProblem(widest), undefined);
  assert.ok(bucketCount(widest) <= MAX_BUCKET_COUNT);
});

const T = 1795290000;
/** A snapshot in `schema` whose one class has I/Os in buckets `d`. */
function snap(schema: { scale: number; minIndex: number; maxIndex: number }, d: number[]): Snapshot {
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    createdAt: '2026-11-21T12:00:00.000Z',
    agent: '0.3.0',
    host: { hostname: 'h', kernel: '6.18.0' },
    schema,
    range: { from: T, to: T + 2, step: 1 },
    disks: [{ dev: '7:0', name: 'loop0', kind: 'request', present: true }],
    frames: [{ ts: T, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 3, d, q: [0, 3] }] }] }],
    samples: [],
  };
}

test('snapshot import: a schema-3 file reads in its own schema; indexes past its buckets or an unknown schema are refused', () => {
  // A 6 s I/O's bucket in the fine schema is past the last bucket (overflow) of scale 2.
  const six = bucketOfSeconds(6, FINE_BUCKET_SCHEMA);
  assert.ok(six > overflowIndex(BUCKET_SCHEMA));
  const fine = parseSnapshot(JSON.stringify(snap(FINE_BUCKET_SCHEMA, [100, 2, six, 1])));
  assert.ok(fine.ok, fine.ok ? '' : fine.message);
  assert.deepEqual(fine.value.schema, FINE_BUCKET_SCHEMA);
  assert.deepEqual(fine.value.frames[0]?.disks[0]?.cls[0]?.d, [100, 2, six, 1]);

  const cases: [Snapshot, RegExp][] = [
    // The same buckets named as scale 2: that one is no bucket of it.
    [snap(BUCKET_SCHEMA, [100, 2, six, 1]), new RegExp(`bucket index ${six} is outside 0\\.\\.105 of the file's bucket schema`)],
    [snap(FINE_BUCKET_SCHEMA, [100, 2, 210, 1]), /bucket index 210 is outside 0\.\.209/],
    [snap({ scale: 5, minIndex: -640, maxIndex: 192 }, [1, 1]), /schema.*scale 5 is not supported/],
    [snap({ scale: 3, minIndex: -1000, maxIndex: 1000 }, [1, 1]), /bucket schema .* cannot be read/],
  ];
  for (const [s, message] of cases) {
    const r = parseSnapshot(JSON.stringify(s));
    assert.equal(r.ok, false, `accepted schema ${JSON.stringify(s.schema)} with ${JSON.stringify(s.frames[0]?.disks[0]?.cls[0]?.d)}`);
    if (!r.ok) assert.match(r.message, message);
  }
});

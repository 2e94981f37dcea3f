// The kernel's latency bucket lookup (bpf/include/blkheat_bucket.bpf.h, a table and one compare)
// against the agent's own bucketOfNs, run in the kernel through BPF_PROG_TEST_RUN for both
// schemas: every bound and its neighbours, every power of two and every part of the table, and
// random latencies from 0 to 2^63 - 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { openObject } from '@blkheat/bpf-loader';
import { bucketOfNs, FINE_BUCKET_SCHEMA, BUCKET_SCHEMA, upperBoundsNs, type BucketSchema } from '@blkheat/shared-types';
import { kernelBucketKnobs } from '../src/collector/abi/bucket-table.js';
import { CollectorError } from '../src/collector/errors.js';
import { ABI, ABI_S3 } from './lib/abi.js';

const MAX_LATENCY = (1n << 63n) - 1n;

function latenciesToCheck(schema: BucketSchema, splitBits: number): bigint[] {
  const out = new Set<bigint>([0n, 1n, 2n, 3n, MAX_LATENCY]);
  for (const b of upperBoundsNs(schema)) for (const d of [-1n, 0n, 1n]) out.add(b + d);
  for (let octave = 0n; octave < 63n; octave++) {
    const base = 1n << octave;
    for (let part = 0n; part < 1n << BigInt(splitBits); part++) {
      const low = base + (part * base) / (1n << BigInt(splitBits));
      for (const d of [-1n, 0n, 1n]) out.add(low + d);
    }
  }
  for (let i = 0; i < 20_000; i++) {
    // Log-uniform: a random power of two, then random bits below it.
    const octave = BigInt(randomInt(0, 63));
    const below = octave === 0n ? 0n : BigInt(randomInt(0, 2 ** 47)) % (1n << octave);
    out.add((1n << octave) + below);
  }
  return [...out].filter((v) => v >= 0n && v <= MAX_LATENCY);
}

for (const schema of [BUCKET_SCHEMA, FINE_BUCKET_SCHEMA]) {
  test(`kernel bucket lookup equals bucketOfNs at schema ${schema.scale}: bounds ±1, every table part, random latencies`, async (t) => {
    // The sizes of the agent's object for this schema: the test object includes the same lookup.
    const abi = schema.scale === 2 ? ABI : ABI_S3;
    const file = schema.scale === 2 ? 'bucket_test.bpf.o' : `bucket_test_s${schema.scale}.bpf.o`;
    const object = openObject(fileURLToPath(new URL(`../../../bpf/build/${file}`, import.meta.url)));
    t.after(() => object.close());
    const sizes = new Map(object.globals().map((g) => [g.name, g.size]));
    assert.deepEqual(
      [sizes.get('bounds_ns'), sizes.get('bucket_first')],
      [abi.maxBounds * 8, abi.bucketTableSize],
      `${file} sizes its knobs as the agent's object`,
    );
    const knobs = kernelBucketKnobs(schema, abi);
    object.setGlobal('bounds_ns', knobs.bounds);
    object.setGlobal('bucket_first', knobs.table);
    await object.load();
    const probe = object.program('bh_bucket_probe');
    const ctx = Buffer.alloc(8);
    const values = latenciesToCheck(schema, abi.bucketSplitBits);
    const wrong: string[] = [];
    for (const ns of values) {
      ctx.writeBigUInt64LE(ns);
      const kernel = probe.run(ctx).retval;
      const expected = bucketOfNs(ns, schema);
      if (kernel !== expected && wrong.length < 10) wrong.push(`${ns} ns: kernel ${kernel}, bucketOfNs ${expected}`);
    }
    assert.deepEqual(wrong, [], `${values.length} latencies checked`);
    assert.ok(values.length > 20_000, `${values.length} latencies checked`);
  });
}

test('a schema too fine for the kernel bucket table is refused, naming the bounds that share a part', () => {
  // 32 buckets per power of two: about 2.2 % wide, narrower than the table's 1/32 parts.
  const tooFine: BucketSchema = { scale: 5, minIndex: -700, maxIndex: -500 };
  assert.throws(
    () => kernelBucketKnobs(tooFine, ABI_S3),
    (err: unknown) =>
      err instanceof CollectorError &&
      /too fine for the kernel's bucket table: bounds \d+ and \d+ ns share one of its parts/.test(err.message),
  );
});

/**
 * The knobs of the kernel's latency bucket lookup (bpf/include/blkheat_bucket.bpf.h): the
 * schema's bounds, and the table that names, for each of 2^BUCKET_SPLIT_BITS equal parts of every
 * power of two, the bucket of the part's lowest value. The kernel then needs one compare with the
 * next bound, so this checks that no part holds two bounds (and refuses a schema where one
 * would: the kernel would count wrongly, not fail).
 */
import { bucketOfNs, type BucketSchema, upperBoundsNs } from '@blkheat/shared-types';
import { CollectorError } from './errors.js';
import type { SchemaLayout } from './layout.js';

/** Parts per power of two, as bits (BH_SPLIT_BITS). */
export const BUCKET_SPLIT_BITS = 5;
/** Entries of bucket_first (BH_BUCKET_TABLE_SIZE): 64 powers of two. */
export const BUCKET_TABLE_SIZE = 64 << BUCKET_SPLIT_BITS;
/** Padding past the last bound: above any latency, and 2^63 - 1 so the kernel's branch-free compare stays signed-safe. */
const PAST_LAST_BOUND = (1n << 63n) - 1n;

export interface KernelBucketKnobs {
  /** bounds_ns: BH_MAX_BOUNDS little-endian u64. */
  readonly bounds: Buffer;
  /** bucket_first: BUCKET_TABLE_SIZE bytes. */
  readonly table: Buffer;
}

export function kernelBucketKnobs(schema: BucketSchema, layout: SchemaLayout): KernelBucketKnobs {
  const bounds = upperBoundsNs(schema);
  if (bounds.length >= layout.maxBounds)
    throw new CollectorError(`bucket schema has ${bounds.length} bounds; the kernel object holds ${layout.maxBounds - 1}`);
  const boundsBuf = Buffer.alloc(layout.maxBounds * 8);
  for (let i = 0; i < layout.maxBounds; i++) boundsBuf.writeBigUInt64LE(bounds[i] ?? PAST_LAST_BOUND, i * 8);

  const table = Buffer.alloc(BUCKET_TABLE_SIZE);
  const parts = 1n << BigInt(BUCKET_SPLIT_BITS);
  for (let octave = 0; octave < 64; octave++) {
    const base = 1n << BigInt(octave);
    for (let part = 0n; part < parts; part++) {
      // The part's lowest and (exclusive) highest value; below 2^BUCKET_SPLIT_BITS a part may hold no integer.
      const low = base + ceilDiv(part * base, parts);
      const high = base + ceilDiv((part + 1n) * base, parts);
      const first = bucketOfNs(low, schema); // the number of bounds below low
      const next = bounds[first + 1];
      if (low < high && next !== undefined && next < high - 1n) {
        throw new CollectorError(
          `bucket schema scale ${schema.scale} is too fine for the kernel's bucket table: bounds ${bounds[first]} and ${next} ns share one of its parts`,
        );
      }
      if (first > 0xff) throw new CollectorError(`bucket schema has more than 255 bounds below ${low} ns; the kernel's table holds bytes`);
      table[(octave << BUCKET_SPLIT_BITS) | Number(part)] = first;
    }
  }
  return { bounds: boundsBuf, table };
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

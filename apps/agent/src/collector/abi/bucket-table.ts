/**
 * The knobs of the kernel's latency bucket lookup (bpf/include/blkheat_bucket.bpf.h): the
 * schema's bounds, and the table that names, for each of 2^bucketSplitBits equal parts of every
 * power of two, the bucket of the part's lowest value. The kernel then needs one compare with the
 * next bound, so this checks that no part holds two bounds (and refuses a schema where one
 * would: the kernel would count wrongly, not fail).
 */
import { bucketOfNs, type BucketSchema, upperBoundsNs } from '@blkheat/shared-types';
import { CollectorError } from '../errors.js';
import type { KernelAbi } from './kernel-abi.js';

/** The object's sizes this needs: bounds_ns entries, and bucket_first's parts per power of two. */
export type BucketTableSizes = Pick<KernelAbi, 'maxBounds' | 'nrBuckets' | 'bucketSplitBits' | 'bucketTableSize'>;
/** Padding past the last bound: above any latency, and 2^63 - 1 so the kernel's branch-free compare stays signed-safe. */
const PAST_LAST_BOUND = (1n << 63n) - 1n;

export interface KernelBucketKnobs {
  /** bounds_ns: maxBounds little-endian u64. */
  readonly bounds: Buffer;
  /** bucket_first: bucketTableSize bytes. */
  readonly table: Buffer;
}

export function kernelBucketKnobs(schema: BucketSchema, sizes: BucketTableSizes): KernelBucketKnobs {
  const bounds = upperBoundsNs(schema);
  if (bounds.length >= sizes.maxBounds)
    throw new CollectorError(
      `bucket schema scale ${schema.scale} has ${bounds.length} bounds; the kernel object holds ${sizes.maxBounds - 1}`,
    );
  // A value above every bound counts in bucket bounds.length: the arrays must reach it.
  if (bounds.length >= sizes.nrBuckets)
    throw new CollectorError(
      `bucket schema scale ${schema.scale} has ${bounds.length + 1} buckets; the kernel object's histograms hold ${sizes.nrBuckets} (struct bh_hist field device): use the object built for it`,
    );
  const boundsBuf = Buffer.alloc(sizes.maxBounds * 8);
  for (let i = 0; i < sizes.maxBounds; i++) boundsBuf.writeBigUInt64LE(bounds[i] ?? PAST_LAST_BOUND, i * 8);

  const table = Buffer.alloc(sizes.bucketTableSize);
  const splitBits = sizes.bucketSplitBits;
  const parts = 1n << BigInt(splitBits);
  for (let octave = 0; octave < 64; octave++) {
    const base = 1n << BigInt(octave);
    for (let part = 0n; part < parts; part++) {
      // The part's lowest and (exclusive) highest value; below 2^splitBits a part may hold no integer.
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
      table[(octave << splitBits) | Number(part)] = first;
    }
  }
  return { bounds: boundsBuf, table };
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

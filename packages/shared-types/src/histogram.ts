/**
 * Histogram math over the dense bucket index space of `buckets.ts`.
 *
 * Two representations:
 *  - SparseHist: flat pairs [index0, count0, index1, count1, ...], indices strictly increasing,
 *    counts > 0. This is what travels on the wire, in snapshots and in history.
 *  - dense: a Float64Array of length bucketCount(schema), for accumulating and for math.
 * Counts are exact integers (well below 2^53), so addition in doubles is exact.
 */
import {
  type BucketSchema,
  BUCKET_SCHEMA,
  bucketCount,
  lowerBoundSeconds,
  upperBoundSeconds,
  UNDERFLOW,
  overflowIndex,
} from './buckets.js';

export type SparseHist = readonly number[];

/** A fresh zeroed dense histogram for `schema`. */
export function denseHist(schema: BucketSchema = BUCKET_SCHEMA): Float64Array {
  return new Float64Array(bucketCount(schema));
}

/**
 * dense += sparse (sign -1: dense −= sparse, taking back what was added: counts are integers, so
 * exactly). Throws on an index outside the schema (a corrupt or foreign histogram).
 */
export function addSparseInto(dense: Float64Array, sparse: SparseHist, sign: 1 | -1 = 1): void {
  for (let k = 0; k + 1 < sparse.length; k += 2) {
    const i = sparse[k] as number;
    if (i < 0 || i >= dense.length || !Number.isInteger(i)) {
      throw new RangeError(`bucket index ${i} outside 0..${dense.length - 1}`);
    }
    dense[i] = (dense[i] as number) + sign * (sparse[k + 1] as number);
  }
}

/** The non-empty buckets of a dense histogram as a SparseHist. */
export function toSparse(dense: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let i = 0; i < dense.length; i++) {
    const c = dense[i] as number;
    if (c > 0) out.push(i, c);
  }
  return out;
}

/** Sum of two sparse histograms (merge by index). */
export function mergeSparse(a: SparseHist, b: SparseHist): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const ai = i < a.length ? (a[i] as number) : Infinity;
    const bj = j < b.length ? (b[j] as number) : Infinity;
    if (ai === bj) {
      out.push(ai, (a[i + 1] as number) + (b[j + 1] as number));
      i += 2;
      j += 2;
    } else if (ai < bj) {
      out.push(ai, a[i + 1] as number);
      i += 2;
    } else {
      out.push(bj, b[j + 1] as number);
      j += 2;
    }
  }
  return out;
}

/** Total count of a sparse histogram. */
export function sparseTotal(sparse: SparseHist): number {
  let n = 0;
  for (let k = 1; k < sparse.length; k += 2) n += sparse[k] as number;
  return n;
}

/** Total count of a dense histogram. */
export function denseTotal(dense: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < dense.length; i++) n += dense[i] as number;
  return n;
}

/** Checks the SparseHist invariants; returns a message describing the first violation. */
export function sparseProblem(sparse: SparseHist, schema: BucketSchema = BUCKET_SCHEMA): string | undefined {
  return sparseProblemUpTo(sparse, overflowIndex(schema));
}

/**
 * sparseProblem with bucket indexes bounded by `maxIndex` instead of a schema's overflow index:
 * for data whose schema is checked afterwards (a snapshot names its own, see schemas.ts).
 */
export function sparseProblemUpTo(sparse: SparseHist, maxIndex: number): string | undefined {
  if (sparse.length % 2 !== 0) return 'odd length (expected index,count pairs)';
  let prev = -1;
  for (let k = 0; k < sparse.length; k += 2) {
    const i = sparse[k] as number;
    const c = sparse[k + 1] as number;
    if (!Number.isInteger(i) || i < 0 || i > maxIndex) return `bucket index ${i} outside 0..${maxIndex}`;
    if (i <= prev) return 'bucket indices not strictly increasing';
    if (!Number.isSafeInteger(c) || c <= 0) return `count ${c} at bucket ${i} is not a positive integer`;
    prev = i;
  }
  return undefined;
}

/**
 * Dense bucket holding the q-quantile by rank: the bucket of the ceil(q * N)-th smallest I/O
 * (1-based; q = 0 gives the first). Undefined when the histogram is empty.
 */
export function quantileBucket(dense: ArrayLike<number>, q: number): number | undefined {
  const total = denseTotal(dense);
  if (total <= 0) return undefined;
  const rank = Math.max(1, Math.ceil(clamp01(q) * total));
  let cum = 0;
  for (let i = 0; i < dense.length; i++) {
    cum += dense[i] as number;
    if (cum >= rank) return i;
  }
  return dense.length - 1;
}

/**
 * q-quantile in seconds: the rank's bucket, interpolated geometrically within the bucket by
 * the rank's position among that bucket's I/Os (buckets are exponential, so geometric
 * interpolation is the natural one). Underflow interpolates linearly from 0; overflow returns
 * its lower bound (nothing is known above it). Undefined when empty.
 */
export function quantileSeconds(dense: ArrayLike<number>, q: number, schema: BucketSchema = BUCKET_SCHEMA): number | undefined {
  const bucket = quantileBucket(dense, q);
  if (bucket === undefined) return undefined;
  const total = denseTotal(dense);
  const rank = Math.max(1, Math.ceil(clamp01(q) * total));
  let below = 0;
  for (let i = 0; i < bucket; i++) below += dense[i] as number;
  const inBucket = dense[bucket] as number;
  const frac = (rank - below) / inBucket; // (0, 1]
  const lo = lowerBoundSeconds(bucket, schema);
  const hi = upperBoundSeconds(bucket, schema);
  if (bucket === overflowIndex(schema)) return lo;
  if (bucket === UNDERFLOW) return hi * frac;
  return lo * (hi / lo) ** frac;
}

/** Fraction of I/Os at or below the upper bound of `bucket` (a percentile rank, 0..1). */
export function cumulativeShare(dense: ArrayLike<number>, bucket: number): number {
  const total = denseTotal(dense);
  if (total <= 0) return 0;
  let cum = 0;
  for (let i = 0; i <= bucket && i < dense.length; i++) cum += dense[i] as number;
  return cum / total;
}

function clamp01(q: number): number {
  return q < 0 ? 0 : q > 1 ? 1 : q;
}

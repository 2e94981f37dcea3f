/**
 * Prometheus' JSON for a native histogram sample -> the agent's dense buckets, exactly.
 *
 * Prometheus 2.42 answers native histograms as `{count, sum, buckets: [[boundaryRule, lower,
 * upper, count], ...]}` with numbers as strings. The agent exported them at its own schema
 * (server/native-histograms.ts), so every bound is a bound of that schema and maps back to one
 * dense bucket: the zero bucket (±2^-20 s) is underflow, the bucket above the last regular
 * bound (64 s) is overflow, every other bucket is the dense bucket with the same upper bound.
 * Nothing is re-binned: a bound that is not one of the schema's is an error, stated plainly.
 */
import {
  bucketCount,
  lowerBoundSeconds,
  overflowIndex,
  upperBoundSeconds,
  type BucketSchema,
  type SparseHist,
} from '@blkheat/shared-types';

/** A native histogram sample as Prometheus' HTTP API gives it. */
export interface PromHistogram {
  readonly count: string;
  readonly sum?: string;
  readonly buckets?: readonly (readonly [number, string, string, string])[];
}

export class BucketBoundError extends Error {}

/** Bounds are printed by Go (shortest round-trip), ours computed by JS: equal to well under this. */
const RELATIVE_TOLERANCE = 1e-9;

function near(a: number, b: number): boolean {
  return Math.abs(a - b) <= RELATIVE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
}

/** The dense bucket whose (lower, upper] is (lower, upper) in seconds; throws when there is none. */
export function denseBucketOf(lower: number, upper: number, schema: BucketSchema): number {
  const zero = lowerBoundSeconds(1, schema);
  if (near(upper, zero) && near(lower, -zero)) return 0;
  const over = overflowIndex(schema);
  // The bucket just above 64 s, where the agent puts its overflow: (2^6, 2^(6 + 2^-scale)].
  const last = upperBoundSeconds(over - 1, schema);
  if (near(lower, last) && near(upper, 2 ** ((schema.maxIndex + 1) / 2 ** schema.scale))) return over;
  if (upper > 0 && lower > 0) {
    // Index of the upper bound: upper = 2^((minIndex + dense - 1) / 2^scale).
    const dense = Math.round(Math.log2(upper) * 2 ** schema.scale) - schema.minIndex + 1;
    if (dense >= 1 && dense < over && near(upperBoundSeconds(dense, schema), upper) && near(lowerBoundSeconds(dense, schema), lower)) {
      return dense;
    }
  }
  throw new BucketBoundError(
    `Prometheus returned a bucket (${lower}, ${upper}] s that is not a bucket of schema ${schema.scale} ` +
      `(agents export at their own schema: start blkheat fleet with --schema matching the agents' --schema)`,
  );
}

/** Dense counts (Float64Array of bucketCount(schema)) of one Prometheus histogram sample. */
export function denseCounts(h: PromHistogram, schema: BucketSchema): Float64Array {
  const out = new Float64Array(bucketCount(schema));
  for (const b of h.buckets ?? []) {
    const n = Number(b[3]);
    if (!Number.isFinite(n) || n < 0) throw new BucketBoundError(`Prometheus returned a bucket count "${b[3]}"`);
    const k = denseBucketOf(Number(b[1]), Number(b[2]), schema);
    out[k] = (out[k] as number) + n;
  }
  return out;
}

/**
 * Counts of `b` minus `a` (what happened between two scrapes), as a sparse histogram of whole
 * counts. A bucket that went down means the counter was reset (the agent restarted): then the
 * whole of `b` is new, as Prometheus' increase() takes it.
 */
export function countsBetween(a: Float64Array | undefined, b: Float64Array): SparseHist {
  let reset = false;
  if (a) for (let k = 0; k < b.length; k++) if ((b[k] as number) < (a[k] as number)) reset = true;
  const out: number[] = [];
  for (let k = 0; k < b.length; k++) {
    const n = Math.round((b[k] as number) - (a && !reset ? (a[k] as number) : 0));
    if (n > 0) out.push(k, n);
  }
  return out;
}

/** A sparse histogram of the (extrapolated, fractional) counts of an increase() result, rounded. */
export function roundedCounts(dense: Float64Array): SparseHist {
  const out: number[] = [];
  for (let k = 0; k < dense.length; k++) {
    const n = Math.round(dense[k] as number);
    if (n > 0) out.push(k, n);
  }
  return out;
}

/**
 * The bounds Prometheus gives a dense bucket of `schema` (denseBucketOf's inverse): the zero
 * bucket is (0, threshold] (a histogram with positive buckets only: Prometheus takes 0 as its
 * lower bound), the overflow bucket ends one bucket above the last regular bound.
 */
function nativeBounds(dense: number, schema: BucketSchema): [number, number] {
  if (dense === overflowIndex(schema)) return [upperBoundSeconds(dense - 1, schema), 2 ** ((schema.maxIndex + 1) / 2 ** schema.scale)];
  return [lowerBoundSeconds(dense, schema), upperBoundSeconds(dense, schema)];
}

/**
 * The q-quantile (s) of dense counts as Prometheus 2.42's histogram_quantile() takes it of a
 * native histogram: the bucket where the rank q × count falls, interpolated linearly inside it.
 * NaN when there are no counts. The fleet's ranked table computes it over counts it summed
 * itself (fleet-ranking-chunks.ts), the same figure Prometheus gives for the same counts.
 */
export function nativeQuantile(q: number, counts: ArrayLike<number>, schema: BucketSchema): number {
  let total = 0;
  for (let k = 0; k < counts.length; k++) total += counts[k] as number;
  if (!(total > 0)) return NaN;
  const rank = q * total;
  let seen = 0;
  let at = -1;
  for (let k = 0; k < counts.length; k++) {
    const n = counts[k] as number;
    if (n <= 0) continue;
    seen += n;
    at = k;
    if (seen >= rank) break;
  }
  const [lower, upper] = nativeBounds(at, schema);
  if (seen < rank) return upper;
  const inBucket = counts[at] as number;
  return lower + (upper - lower) * ((rank - (seen - inBucket)) / inBucket);
}

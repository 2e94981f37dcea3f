/**
 * Exact percentiles from sampled I/Os. A histogram knows the bucket of the I/O at a rank, not its
 * latency (percentiles.ts shows that as "≤ the bucket's top"). Where the sampled I/Os of that
 * bucket (same disk, range, phase and filters) are as many as the histogram counted in it, they
 * are all of its I/Os: sorted, they give the latency of the I/O at every rank inside it. That is
 * often so in the slow tail of a quiet range (the agent keeps a record of the slowest I/O of each
 * second), and it is where a bound misleads most: a single 32.2 s read then reads "32.2 s", not
 * "≤ 38.1 s". Fewer samples than I/Os in a bucket say nothing exact (the others could be anywhere
 * in it), so nothing is claimed then.
 */
import { type BucketSchema, bucketOfNs } from '@blkheat/shared-types';
import { exactQuantile, type QuantileValue } from './percentiles.js';
import type { Summary } from './summary.js';

/** Buckets holding more I/Os than this are not asked for: all of them being sampled is unlikely. */
export const EXACT_BUCKET_MAX = 32;
/** Most I/Os one question for samples may cover (the buckets between those wanted count too). */
export const EXACT_QUERY_MAX = 256;

/** Sampled latencies (ns, of the phase on screen) of one disk and range, per dense bucket. */
export type SampledByBucket = ReadonlyMap<number, readonly number[]>;

/** Per disk, the sampled latencies of the buckets asked for, for the summary they were asked for (its range and counts). */
export interface SummaryRankSamples {
  readonly summary: Summary;
  readonly byDev: ReadonlyMap<string, SampledByBucket>;
}

/**
 * The dense buckets [lo, hi] whose sampled I/Os could make some of `quantiles` exact: from the
 * slowest bucket holding a percentile with at most EXACT_BUCKET_MAX I/Os, down over the others
 * while the range holds at most EXACT_QUERY_MAX I/Os. Undefined when no percentile can be.
 */
export function rankBucketRange(quantiles: readonly QuantileValue[], hist: ArrayLike<number>): { lo: number; hi: number } | undefined {
  const wanted = [
    ...new Set(
      quantiles
        .filter((v) => v.kind !== 'exact' && (hist[v.bucket] as number) > 0 && (hist[v.bucket] as number) <= EXACT_BUCKET_MAX)
        .map((v) => v.bucket),
    ),
  ].sort((a, b) => b - a);
  const hi = wanted[0];
  if (hi === undefined) return undefined;
  let lo = hi;
  let ios = hist[hi] as number;
  for (const b of wanted.slice(1)) {
    let more = 0;
    for (let i = b; i < lo; i++) more += hist[i] as number;
    if (ios + more > EXACT_QUERY_MAX) break;
    ios += more;
    lo = b;
  }
  return { lo, hi };
}

/**
 * The columns [first, last + 1) of [c0, c1) holding I/Os in rows lo..hi (`count(col, row)`: a heat
 * map's counts), or undefined when none do: the only seconds whose samples can be of those buckets,
 * so a question for them can be that much narrower (one slow read in an hour: its own second).
 */
export function columnsWithRows(
  count: (col: number, row: number) => number,
  c0: number,
  c1: number,
  lo: number,
  hi: number,
): [number, number] | undefined {
  let first: number | undefined;
  let last = c0;
  for (let c = c0; c < c1; c++) {
    for (let r = lo; r <= hi; r++) {
      if (count(c, r) > 0) {
        first ??= c;
        last = c;
        break;
      }
    }
  }
  return first === undefined ? undefined : [first, last + 1];
}

/** Sampled latencies (ns) grouped by the dense bucket of `schema` they fall in. */
export function byBucket(latenciesNs: readonly number[], schema: BucketSchema): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const ns of latenciesNs) {
    const b = bucketOfNs(ns, schema);
    let list = out.get(b);
    if (!list) out.set(b, (list = []));
    list.push(ns);
  }
  return out;
}

/**
 * `quantiles` of the dense histogram `hist`, each made exact where `sampled` holds every I/O of its
 * bucket (as many samples as the histogram counted there); the others are returned as they were.
 */
export function withSampledRanks(
  quantiles: readonly QuantileValue[],
  hist: ArrayLike<number>,
  sampled: SampledByBucket | undefined,
  schema: BucketSchema,
): QuantileValue[] {
  if (!sampled || sampled.size === 0) return [...quantiles];
  return quantiles.map((v) => {
    const inBucket = sampled.get(v.bucket);
    if (v.kind === 'exact' || !inBucket || inBucket.length !== hist[v.bucket]) return v;
    let below = 0;
    for (let i = 0; i < v.bucket; i++) below += hist[i] as number;
    const at = [...inBucket].sort((a, b) => a - b)[v.rank - below - 1];
    return at === undefined ? v : exactQuantile(v, at / 1e9, schema);
  });
}

/**
 * Percentiles from histograms, and how they are written. Ranks come from shared-types
 * (`quantileBucket`: the bucket of the ceil(q·N)-th fastest I/O), the same the agent's /metrics and
 * the CLI use; this module adds what a histogram can honestly say about them, the one way views
 * write them (formatQuantile), caching per heat map column, and the bucket-space position.
 *
 * The rule (issue 29: a single 32.2 s read was shown as "p99 38.1 s", the top of its bucket, with
 * nothing saying so): a histogram knows the bucket of the I/O at a rank, not its latency, so a
 * percentile is shown as a bound, "≤ 38.1 s" (its bucket's upper edge; "> 64 s" in the overflow
 * bucket, which has none). Where sampled I/Os give the latency of the I/O at the rank itself
 * (model/sampledRanks.ts), the exact value is shown, without "≤". Interpolating inside a bucket is
 * kept for drawing lines only (columnQuantilesU), never written as a number.
 */
import { type BucketSchema, lowerBoundSeconds, overflowIndex, quantileBucket, upperBoundSeconds } from '@blkheat/shared-types';
import type { HeatMatrix } from './heatmatrix.js';
import { formatLatency, secondsToU } from './latency.js';

/** The percentile lines drawn over heat maps. */
export const LINE_QUANTILES = Object.freeze([
  { q: 0.5, label: 'p50' },
  { q: 0.99, label: 'p99' },
  { q: 0.999, label: 'p99.9' },
] as const);

/** The marks on histograms and in the breakdown table. */
export const MARK_QUANTILES = Object.freeze([
  { q: 0.5, label: 'p50' },
  { q: 0.9, label: 'p90' },
  { q: 0.99, label: 'p99' },
  { q: 0.999, label: 'p99.9' },
] as const);

/** p99 alone (a row head, the worst-disk line, the submit-wait note). */
export const P99 = Object.freeze([{ q: 0.99, label: 'p99' }] as const);

/**
 * What `seconds` of a QuantileValue is: 'bound', the percentile is at most it (its bucket's upper
 * edge); 'above', it is above it (the overflow bucket's lower edge: nothing bounds it); 'exact',
 * it is the latency of the I/O at the rank, read from sampled I/Os.
 */
export type QuantileKind = 'bound' | 'above' | 'exact';

export interface QuantileValue {
  readonly q: number;
  readonly label: string;
  /** Seconds, read as `kind` says: the one number shown for this percentile (formatQuantile). */
  readonly seconds: number;
  readonly kind: QuantileKind;
  /** Dense bucket holding the rank. */
  readonly bucket: number;
  /** The rank: the I/O that is this percentile is the rank-th fastest (1-based) of `total`. */
  readonly rank: number;
  /** Position on the bucket axis of `seconds` (a histogram's mark sits where its number says). */
  readonly u: number;
}

/** The requested quantiles of a dense histogram of `schema`, as bounds; empty when it has no counts. */
export function quantilesOf(
  dense: ArrayLike<number>,
  schema: BucketSchema,
  qs: readonly { q: number; label: string }[] = MARK_QUANTILES,
): QuantileValue[] {
  let total = 0;
  for (let i = 0; i < dense.length; i++) total += dense[i] as number;
  const out: QuantileValue[] = [];
  for (const { q, label } of qs) {
    const bucket = quantileBucket(dense, q);
    if (bucket === undefined || !(total > 0)) return [];
    const rank = Math.max(1, Math.ceil(Math.min(1, Math.max(0, q)) * total));
    out.push(bucketQuantile(q, label, bucket, rank, schema));
  }
  return out;
}

/** A percentile known only by its bucket: the bucket's upper edge as a bound ("above" its lower edge in overflow). */
export function bucketQuantile(q: number, label: string, bucket: number, rank: number, schema: BucketSchema): QuantileValue {
  const above = bucket >= overflowIndex(schema);
  const seconds = above ? lowerBoundSeconds(bucket, schema) : upperBoundSeconds(bucket, schema);
  return { q, label, seconds, kind: above ? 'above' : 'bound', bucket, rank, u: above ? bucket : bucket + 1 };
}

/** The same percentile, its I/O's latency known exactly (a sampled I/O at its rank). */
export function exactQuantile(v: QuantileValue, seconds: number, schema: BucketSchema): QuantileValue {
  return { ...v, seconds, kind: 'exact', u: Math.min(v.bucket + 1, Math.max(v.bucket, secondsToU(seconds, schema))) };
}

/**
 * A percentile as every view writes it (row heads, histograms, tables, compare, notes, the PNG):
 * "≤ 38.1 s" for a bound, "> 64.0 s" above the last bucket, "32.2 s" when exact; "–" for none.
 */
export function formatQuantile(v: Pick<QuantileValue, 'seconds' | 'kind'> | undefined): string {
  if (!v) return '–';
  const text = formatLatency(v.seconds);
  return v.kind === 'exact' ? text : `${v.kind === 'bound' ? '≤' : '>'} ${text}`;
}

/** The rule in a few words, where a long explanation does not fit (the PNG's subtitle). */
export const PERCENTILES_NOTE = 'percentiles: ≤ bucket top, exact where sampled';

/** "p99 ≤ 38.1 s": a percentile with its label. */
export function labelledQuantile(v: QuantileValue): string {
  return `${v.label} ${formatQuantile(v)}`;
}

/** "p50 ≤ 47.7 µs · p90 ≤ …": several, as one line. */
export function quantilesText(qs: readonly QuantileValue[]): string {
  return qs.map(labelledQuantile).join(' · ');
}

/**
 * True when a histogram has counts and every one of them is in the lowest (underflow) bucket,
 * ≤ 2^-20 s ≈ 1 µs: for queue latency, requests that went straight to the device.
 */
export function allInLowestBucket(dense: ArrayLike<number>): boolean {
  const first = dense[0] ?? 0;
  if (!(first > 0)) return false;
  for (let i = 1; i < dense.length; i++) if ((dense[i] as number) > 0) return false;
  return true;
}

/**
 * Per-column percentile positions (bucket space) for a matrix, cached per ring slot and
 * recomputed only for columns that changed. NaN marks an empty column.
 */
export class PercentileTrack {
  private readonly values: Float32Array;
  private readonly slotCol: Float64Array;
  private readonly slotVer: Uint32Array;

  constructor(
    readonly matrix: HeatMatrix,
    /** The schema of the matrix's rows (its overflow row has no upper edge). */
    readonly schema: BucketSchema,
    readonly qs: readonly number[] = LINE_QUANTILES.map((l) => l.q),
  ) {
    this.values = new Float32Array(matrix.capacity * qs.length);
    this.slotCol = new Float64Array(matrix.capacity).fill(NaN);
    this.slotVer = new Uint32Array(matrix.capacity);
  }

  /**
   * The values of every quantile of column `col`, at `values[offset + qi]` of the returned
   * array (read them before the next call); undefined outside the matrix. One cache check per
   * column for renderers that draw all lines at once.
   */
  columnValues(col: number): { values: Float32Array; offset: number } | undefined {
    const s = this.freshSlot(col);
    return s < 0 ? undefined : { values: this.values, offset: s * this.qs.length };
  }

  /** u of quantile index `qi` in column `col` (NaN when the column is empty or outside). */
  at(col: number, qi: number): number {
    const s = this.freshSlot(col);
    return s < 0 ? NaN : (this.values[s * this.qs.length + qi] as number);
  }

  /** The ring slot of column `col` with its values up to date; -1 outside the matrix. */
  private freshSlot(col: number): number {
    const m = this.matrix;
    if (!m.has(col)) return -1;
    const s = m.slot(col);
    if (this.slotCol[s] !== col || this.slotVer[s] !== m.slotVersion[s]) this.compute(col, s);
    return s;
  }

  private compute(col: number, s: number): void {
    const m = this.matrix;
    columnQuantilesU(
      m.counts,
      s * m.rows,
      m.rows,
      m.totals[s] as number,
      this.qs,
      this.values,
      s * this.qs.length,
      overflowIndex(this.schema),
    );
    this.slotCol[s] = col;
    this.slotVer[s] = m.slotVersion[s] as number;
  }
}

/**
 * Bucket-space positions of several quantiles of one dense histogram (the per-column hot path:
 * 3,600 columns × 3 lines on a full redraw). Same ranks and in-bucket interpolation as
 * shared-types' quantileSeconds: rank = max(1, ceil(q·N)), and the position inside the bucket is
 * the rank's fraction of that bucket's I/Os, which on the log axis is exactly
 * `bucket + fraction` (geometric interpolation in seconds is linear in u). Overflow pins to its
 * lower edge. Quantiles below the median are found scanning up from the fastest bucket, the
 * others scanning down from the slowest (a p99.9 is a few buckets from the top). Reads
 * dense[start .. start + length) (a matrix column in place); NaN for an empty histogram.
 */
export function columnQuantilesU(
  dense: ArrayLike<number>,
  start: number,
  length: number,
  total: number,
  qs: readonly number[],
  out: Float32Array | Float64Array,
  offset: number,
  overflow: number,
): void {
  for (let i = 0; i < qs.length; i++) {
    if (!(total > 0)) {
      out[offset + i] = NaN;
      continue;
    }
    const q = qs[i] as number;
    const rank = Math.max(1, Math.ceil((q < 0 ? 0 : q > 1 ? 1 : q) * total));
    let b = 0;
    let below = 0;
    if (q <= 0.5) {
      let cum = 0;
      for (; b < length; b++) {
        const n = dense[start + b] as number;
        if (cum + n >= rank) break;
        cum += n;
      }
      below = cum;
    } else {
      // I/Os at or above the rank: total - rank + 1. Walk down until the tail holds them.
      // Reaching bucket 0 means it holds the rank, with nothing below it.
      const need = total - rank + 1;
      let tail = 0;
      for (b = length - 1; b > 0; b--) {
        tail += dense[start + b] as number;
        if (tail >= need) break;
      }
      below = b === 0 ? 0 : total - tail;
    }
    if (b >= length) b = length - 1;
    const n = dense[start + b] as number;
    out[offset + i] = b === overflow ? b : n > 0 ? b + (rank - below) / n : b;
  }
}

/**
 * Compare (A/B): two time ranges of the same source, a baseline and a comparison, as latency
 * distributions per disk and op class. Pure: the frames of each range come from the store
 * (pipeline/comparison.ts), which also picks their step; here they are summed, normalised to each
 * range's own count (so a busy hour and a quiet one compare by shape, not by volume), and
 * set against each other: percentiles baseline → comparison with the signed delta, and the
 * difference of the shares per bucket (comparison − baseline).
 */
import { addSparseInto, type BucketSchema, bucketCount, type Frame, type LatencyKind, phaseHist } from '@blkheat/shared-types';
import { ALL_REQUEST, type DiskKindOf } from './phase.js';
import { alignCeil, alignFloor } from './resolution.js';
import { MARK_QUANTILES, quantilesOf, type QuantileValue } from './percentiles.js';

/** [from, to) in unix seconds. */
export interface TimeRange {
  readonly from: number;
  readonly to: number;
}

/**
 * What the user chose to compare: a baseline and, when pinned, a comparison range; without
 * one the comparison is the visible range (it follows the view, also while live).
 */
export interface CompareChoice {
  readonly baseline: TimeRange;
  readonly comparison?: TimeRange | undefined;
}

/** The row of a disk that sums every class shown (the heat map's filter). */
export const ALL_CLASSES = '*';

/** One range's dense latency histogram of one disk and class, and its count. */
export interface RangeHistogram {
  readonly hist: Float64Array;
  readonly total: number;
}

/** Histograms per disk and class of one range (class ALL_CLASSES: their sum). */
export type RangeHistograms = ReadonlyMap<string, ReadonlyMap<string, RangeHistogram>>;

/**
 * [from, to) widened to whole steps of `step`: frames of a coarse step cover [ts, ts + step)
 * and cannot be split, so a range is compared over the whole steps that hold it (and says so).
 */
export function alignRange(r: TimeRange, step: number): TimeRange {
  const from = alignFloor(r.from, step);
  return { from, to: Math.max(from + step, alignCeil(r.to, step)) };
}

/**
 * Sums the frames starting in [range.from, range.to) per disk and class, and per disk over the
 * classes (ALL_CLASSES). `classes`: only these (empty = every class), as the heat maps filter.
 * Frames may be of any step; the caller aligns the range to it (alignRange).
 */
export function rangeHistograms(
  frames: readonly Frame[],
  range: TimeRange,
  opts: {
    readonly kind: LatencyKind;
    readonly classes: readonly string[];
    readonly schema: BucketSchema;
    /** Each disk's kind, for phaseHist() (default: every disk request-based). */
    readonly diskKind?: DiskKindOf | undefined;
  },
): RangeHistograms {
  const diskKind = opts.diskKind ?? ALL_REQUEST;
  const rows = bucketCount(opts.schema);
  const wanted = opts.classes.length > 0 ? new Set(opts.classes) : undefined;
  const acc = new Map<string, Map<string, { hist: Float64Array; total: number }>>();
  const slot = (dev: string, c: string): { hist: Float64Array; total: number } => {
    let disk = acc.get(dev);
    if (!disk) acc.set(dev, (disk = new Map()));
    let s = disk.get(c);
    if (!s) disk.set(c, (s = { hist: new Float64Array(rows), total: 0 }));
    return s;
  };
  for (const f of frames) {
    if (f.ts < range.from || f.ts >= range.to) continue;
    for (const d of f.disks) {
      const dk = diskKind(d.dev);
      for (const series of d.cls) {
        if (wanted && !wanted.has(series.c)) continue;
        const latency = phaseHist(series, opts.kind, dk);
        if (latency.length === 0) continue;
        addSparseInto(slot(d.dev, series.c).hist, latency);
        addSparseInto(slot(d.dev, ALL_CLASSES).hist, latency);
      }
    }
  }
  for (const disk of acc.values()) {
    for (const s of disk.values()) {
      let t = 0;
      for (let i = 0; i < s.hist.length; i++) t += s.hist[i] as number;
      s.total = t;
    }
  }
  return acc;
}

/** Each bucket's share of the histogram's count (all zeros for an empty one). */
export function shares(h: RangeHistogram): Float64Array {
  const out = new Float64Array(h.hist.length);
  if (!(h.total > 0)) return out;
  for (let i = 0; i < out.length; i++) out[i] = (h.hist[i] as number) / h.total;
  return out;
}

/**
 * Share per bucket of the comparison minus that of the baseline, each normalised to its own
 * count: +0.3 = 30 points more of the comparison's I/Os fall in this bucket. Undefined when
 * either side has no I/O (a difference with nothing is not a shape).
 */
export function shareDifference(baseline: RangeHistogram, comparison: RangeHistogram): Float64Array | undefined {
  if (!(baseline.total > 0) || !(comparison.total > 0)) return undefined;
  const a = shares(baseline);
  const b = shares(comparison);
  const out = new Float64Array(Math.max(a.length, b.length));
  for (let i = 0; i < out.length; i++) out[i] = (b[i] ?? 0) - (a[i] ?? 0);
  return out;
}

/** A percentile in both ranges (undefined: no I/O in that range) and comparison − baseline. */
export interface PercentileDelta {
  readonly label: string;
  readonly q: number;
  /** Bounds, as every percentile from a histogram (percentiles.ts: "≤ the bucket's top"). */
  readonly baseline: QuantileValue | undefined;
  readonly comparison: QuantileValue | undefined;
  /**
   * Seconds, signed (slower comparison > 0): the difference of the two bucket tops shown, so the
   * change itself is known to within a bucket of it; 0 when both are in one bucket. Undefined
   * unless both ranges have I/O, and when either is above the last bucket (nothing bounds it).
   */
  readonly delta: number | undefined;
}

/** p50/p90/p99/p99.9 of both ranges (MARK_QUANTILES, as the histograms mark them) and their deltas. */
export function percentileDeltas(baseline: RangeHistogram, comparison: RangeHistogram, schema: BucketSchema): PercentileDelta[] {
  const a = quantilesOf(baseline.hist, schema);
  const b = quantilesOf(comparison.hist, schema);
  return MARK_QUANTILES.map(({ q, label }) => {
    const x = a.find((v) => v.label === label);
    const y = b.find((v) => v.label === label);
    const bounded = x?.kind === 'bound' && y?.kind === 'bound';
    return { label, q, baseline: x, comparison: y, delta: bounded ? y.seconds - x.seconds : undefined };
  });
}

/** One disk and class compared. */
export interface CompareRow {
  /** Class name, or ALL_CLASSES. */
  readonly c: string;
  readonly baseline: RangeHistogram;
  readonly comparison: RangeHistogram;
  readonly deltas: readonly PercentileDelta[];
  /** comparison − baseline share per bucket (undefined when a side has no I/O). */
  readonly difference: Float64Array | undefined;
}

export interface CompareDisk {
  readonly dev: string;
  /** ALL_CLASSES first, then the classes by their count over both ranges. */
  readonly rows: readonly CompareRow[];
  /** Buckets [lo, hi) holding every count of either range (the charts' latency axis). */
  readonly lo: number;
  readonly hi: number;
  /** Largest share of any bucket in either range of any row (the overlay's y scale). */
  readonly maxShare: number;
  /** Largest |difference| of any row (the difference charts' symmetric scale). */
  readonly maxDiff: number;
}

const EMPTY: RangeHistogram = { hist: new Float64Array(0), total: 0 };

function emptyOf(rows: number): RangeHistogram {
  return { hist: new Float64Array(rows), total: 0 };
}

/** Sets two ranges' histograms against each other, per disk in `devs` order (disks with I/O in either). */
export function compareDistributions(
  baseline: RangeHistograms,
  comparison: RangeHistograms,
  devs: readonly string[],
  schema: BucketSchema,
): CompareDisk[] {
  const rows = bucketCount(schema);
  const out: CompareDisk[] = [];
  for (const dev of devs) {
    const a = baseline.get(dev);
    const b = comparison.get(dev);
    if (!a && !b) continue;
    const names = new Set([...(a?.keys() ?? []), ...(b?.keys() ?? [])]);
    const count = (c: string): number => (a?.get(c) ?? EMPTY).total + (b?.get(c) ?? EMPTY).total;
    const ordered = [...names].sort((x, y) =>
      x === ALL_CLASSES ? -1 : y === ALL_CLASSES ? 1 : count(y) - count(x) || (x < y ? -1 : x > y ? 1 : 0),
    );
    let lo = rows;
    let hi = 0;
    let maxShare = 0;
    let maxDiff = 0;
    const compared: CompareRow[] = ordered.map((c) => {
      const x = a?.get(c) ?? emptyOf(rows);
      const y = b?.get(c) ?? emptyOf(rows);
      for (const h of [x, y]) {
        const s = shares(h);
        for (let i = 0; i < s.length; i++) {
          const v = s[i] as number;
          if (v <= 0) continue;
          lo = Math.min(lo, i);
          hi = Math.max(hi, i + 1);
          maxShare = Math.max(maxShare, v);
        }
      }
      const difference = shareDifference(x, y);
      if (difference) for (const v of difference) maxDiff = Math.max(maxDiff, Math.abs(v));
      return { c, baseline: x, comparison: y, deltas: percentileDeltas(x, y, schema), difference };
    });
    out.push({ dev, rows: compared, lo: Math.min(lo, hi), hi, maxShare, maxDiff });
  }
  return out;
}

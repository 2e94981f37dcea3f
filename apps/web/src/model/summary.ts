/**
 * The summary of a visible range: per-disk histograms (from the heat map matrices), class and
 * disk breakdowns (from the frames), and the seconds its rates are over. Computed by one generator that
 * yields after each slice of about SUMMARY_SLICE disk-frames, so its caller (pipeline/visibleSummary.ts)
 * can run it to the end at once (a small range, an export) or one slice per task (a whole imported
 * snapshot: tens of thousands of disk-frames would otherwise hold the main thread for
 * hundreds of ms in one task).
 */
import type { BucketSchema, Frame, LatencyKind } from '@blkheat/shared-types';
import { BreakdownTally, type ClassSummary, type DiskPeak, type DiskSummary } from './breakdown.js';
import { type CgroupBreakdown, CgroupTally } from './cgroups.js';
import { type Known, unrecordedSeconds } from './gaps.js';
import type { HeatMatrix } from './heatmatrix.js';
import { quantilesOf, type QuantileValue } from './percentiles.js';
import { ALL_REQUEST, type DiskKindOf } from './phase.js';
import { type SizeLatency, SizeTally } from './sizeLatency.js';
import { type SubmitWaitNote, SubmitWaitTally } from './submitWait.js';

/** Disk-frames (one disk in one frame) summed per slice: about a millisecond's work, so a caller can stop near any time budget. */
export const SUMMARY_SLICE = 500;
/**
 * A disk-frame with up to this many classes is one unit of work; one with more counts as more
 * (a snapshot may have 4,096 classes on a disk: a frame of it is hundreds of ordinary ones, and
 * counting it as one summed a whole such file in one long task).
 */
const CLASSES_PER_UNIT = 8;

/** How much work summing frame `f` is, in disk-frames of up to CLASSES_PER_UNIT classes. */
function frameWeight(f: Frame): number {
  let w = 0;
  for (const d of f.disks) w += 1 + Math.floor(d.cls.length / CLASSES_PER_UNIT);
  return Math.max(1, w);
}

export interface DiskHistogram {
  readonly hist: Float64Array;
  readonly total: number;
  readonly quantiles: QuantileValue[];
}

export interface Summary {
  /** The aggregated range: the visible window widened to whole columns. */
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly perDisk: ReadonlyMap<string, DiskHistogram>;
  readonly maxShare: number;
  readonly classes: readonly ClassSummary[];
  /** The same per shown disk (each class's share of that disk's I/Os). */
  readonly classesByDisk: ReadonlyMap<string, readonly ClassSummary[]>;
  readonly disks: ReadonlyMap<string, DiskSummary>;
  /** Per disk with I/O: its busiest step (the peak beside the rate over windowSeconds). */
  readonly peaks: ReadonlyMap<string, DiskPeak>;
  /** Every class present in the window, for the filter. */
  readonly allClasses: readonly string[];
  /** Per shown disk: its cgroups (device latency; every class: `cg` is not split by class). */
  readonly cgroups: ReadonlyMap<string, CgroupBreakdown>;
  /** Per shown disk: size × device latency of the filtered classes (no cgroup split). */
  readonly sizes: ReadonlyMap<string, SizeLatency>;
  /**
   * Shown disks whose total latency is mostly waiting for a request (model/submitWait.ts), over
   * the filtered classes, whatever the phase on screen.
   */
  readonly submitWait: ReadonlyMap<string, SubmitWaitNote>;
  /**
   * The seconds of the range a rate ("N/s") is over: the whole range the source can speak for
   * (not the future past the live edge, not before the agent's oldest second or outside a
   * snapshot's range), less the seconds the agent is known not to have recorded (it was down).
   * Idle seconds count, with or without a frame: a rate over seconds with data only read a 2.5 s
   * burst in a 10 s view as its own rate (issue 29).
   */
  readonly windowSeconds: number;
  /** Seconds of the range the agent did not record (it was down): drawn as "no data". */
  readonly unrecorded: number;
}

export interface SummaryInput {
  /** Whole columns of `step`. */
  readonly from: number;
  readonly to: number;
  readonly step: number;
  /** The window's frames (all of them name classes for the filter; those in range are counted). */
  readonly frames: readonly Frame[];
  readonly matrices: ReadonlyMap<string, HeatMatrix>;
  /** Disks the class breakdown covers (the shown ones). */
  readonly devs: ReadonlySet<string>;
  /** The latency phase of the class breakdown (the heat maps' matrices are built for it already). */
  readonly kind: LatencyKind;
  /** Each disk's kind, for phaseHist() (default: every disk request-based). */
  readonly diskKind?: DiskKindOf | undefined;
  /** The class filter (size × latency is split by class); undefined = every class. */
  readonly classes?: ReadonlySet<string> | undefined;
  /** The schema of the frames' histograms and the matrices' rows. */
  readonly schema: BucketSchema;
  /** A snapshot's range (its seconds are covered), or undefined when live. */
  readonly snapshotRange: { readonly from: number; readonly to: number } | undefined;
  /**
   * Live: the seconds the source can speak for, from the agent's oldest second (undefined: not
   * known) to the live edge. Ignored for a snapshot (its range is).
   */
  readonly reach?: { readonly from: number | undefined; readonly to: number } | undefined;
  readonly known: Known;
}

/** How much work summing `frames` is (in frameWeight's units), counted until past `limit`. */
export function summaryWeight(frames: readonly Frame[], limit = Infinity): number {
  let w = 0;
  for (const f of frames) {
    w += frameWeight(f);
    if (w > limit) break;
  }
  return w;
}

/**
 * Computes the summary, yielding after each slice of frames. The caller must not change
 * `input.frames` or the matrices between steps (pipeline/visibleSummary.ts drops a run on any change).
 */
export function* summarize(input: SummaryInput, slice = SUMMARY_SLICE): Generator<void, Summary> {
  const { from, to, step, frames } = input;
  const diskKind = input.diskKind ?? ALL_REQUEST;
  const tally = new BreakdownTally({ from, to, devs: input.devs, kind: input.kind, diskKind }, input.schema);
  const cgroups = new CgroupTally({ from, to, devs: input.devs, kind: input.kind, diskKind }, input.schema);
  const sizes = new SizeTally({ from, to, devs: input.devs, classes: input.classes, kind: input.kind, diskKind }, input.schema);
  const waits = new SubmitWaitTally({ from, to, devs: input.devs, classes: input.classes, diskKind }, input.schema);
  let i = 0;
  while (i < frames.length) {
    let end = i;
    let weight = 0;
    while (end < frames.length && weight < slice) weight += frameWeight(frames[end++] as Frame);
    tally.add(frames, i, end);
    cgroups.add(frames, i, end);
    sizes.add(frames, i, end);
    waits.add(frames, i, end);
    i = end;
    if (i < frames.length) yield;
  }
  const perDisk = new Map<string, DiskHistogram>();
  let maxShare = 0;
  for (const [dev, m] of input.matrices) {
    const hist = m.sumColumns(from / step, to / step);
    let total = 0;
    let peak = 0;
    for (let r = 0; r < hist.length; r++) {
      const v = hist[r] as number;
      total += v;
      if (v > peak) peak = v;
    }
    if (total > 0) maxShare = Math.max(maxShare, peak / total);
    perDisk.set(dev, { hist, total, quantiles: quantilesOf(hist, input.schema) });
  }
  const any = input.matrices.values().next().value;
  const unrecorded = any ? unrecordedSeconds(any, from / step, to / step, input.known) : 0;
  return {
    windowSeconds: windowSeconds(input, any),
    unrecorded,
    from,
    to,
    step,
    perDisk,
    maxShare,
    classes: tally.classes(),
    classesByDisk: tally.classesByDisk(),
    disks: tally.disks(),
    peaks: tally.peaks(),
    allClasses: tally.allClasses(),
    cgroups: cgroups.result(),
    sizes: sizes.result(),
    submitWait: waits.result(),
  };
}

/** Summary.windowSeconds of an input (`m`: any of its matrices, for the seconds not recorded). */
function windowSeconds(input: SummaryInput, m: HeatMatrix | undefined): number {
  const { from, to, step } = input;
  const reach = input.snapshotRange ?? { from: input.reach?.from ?? -Infinity, to: input.reach?.to ?? Infinity };
  const lo = Math.max(from, reach.from ?? -Infinity);
  const hi = Math.min(to, reach.to);
  if (!(hi > lo)) return 0;
  // Whole columns inside the reach: a partial column at either end is not claimed as not recorded.
  const missing = m ? unrecordedSeconds(m, Math.ceil(lo / step), Math.floor(hi / step), input.known) : 0;
  return Math.max(0, hi - lo - missing);
}

/** Runs `summarize` to the end at once. */
export function summarizeNow(input: SummaryInput): Summary {
  const run = summarize(input);
  for (;;) {
    const r = run.next();
    if (r.done) return r.value;
  }
}

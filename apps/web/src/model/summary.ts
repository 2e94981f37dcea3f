/**
 * The summary of a visible range: per-disk histograms (from the heat map matrices), class and
 * disk breakdowns (from the frames), and the seconds its rates are over. Computed by running
 * tallies (RunningSummary) fed slices of about SUMMARY_SLICE disk-frames, so its caller
 * (pipeline/visibleSummary.ts) can run it to the end at once (a small range, an export) or one
 * slice per task (a whole imported snapshot: tens of thousands of disk-frames would otherwise hold
 * the main thread for hundreds of ms in one task), and add a live window's new seconds to the
 * tallies of the same range instead of summing it all again.
 */
import type { BucketSchema, Frame, LatencyKind } from '@blkheat/shared-types';
import { BreakdownTally, type ClassSummary, type DiskPeak, type DiskSummary } from './breakdown.js';
import { type CgroupBreakdown, CgroupTally } from './cgroups.js';
import { droppedFromFront } from './diskFrames.js';
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
 * The running tallies behind the summary of one range, fed the range's frames in order: a whole
 * range at once or a slice per task (summarize), and then, for a live window whose frames array
 * only grows at its end while the range stays the same (nine seconds in ten at a 10 s column),
 * just the new frames (extend). Re-summing the visible hour on every live second was the page's
 * biggest piece of JavaScript under load (bench/web, 45 k IOPS: 1.1 s of main thread in 30 s, in
 * tasks of 35 ms and more).
 *
 * `detached`: every summary read is a copy of the totals, so the frames added after it leave it as
 * it was (a summary on screen never changes under the page). Off for a one-off summary: a snapshot
 * can name thousands of classes per disk, and copying their histograms would cost more than the sum.
 */
export class RunningSummary {
  private readonly tally: BreakdownTally;
  private readonly cgroups: CgroupTally;
  private readonly sizes: SizeTally;
  private readonly waits: SubmitWaitTally;
  /** The frames fed so far, in order: what input.frames began with (less any dropped since). */
  private readonly fed: Frame[] = [];
  /**
   * The tallies count every frame from `from` on, whatever the range's end: while no frame starts
   * at or past it, that is the range, and a live range whose end moves on a column (the visible
   * window's end crosses a column one second before its start does) goes on without a new sum.
   */
  private readonly openEnded: boolean;

  constructor(
    private input: SummaryInput,
    readonly detached: boolean,
  ) {
    const { from, devs, kind, classes } = input;
    this.openEnded = detached && framesEndBefore(input.frames, 0, input.to);
    const to = this.openEnded ? Infinity : input.to;
    const diskKind = input.diskKind ?? ALL_REQUEST;
    this.tally = new BreakdownTally({ from, to, devs, kind, diskKind, detached }, input.schema);
    this.cgroups = new CgroupTally({ from, to, devs, kind, diskKind, detached }, input.schema);
    this.sizes = new SizeTally({ from, to, devs, classes, kind, diskKind, detached }, input.schema);
    this.waits = new SubmitWaitTally({ from, to, devs, classes, diskKind }, input.schema);
  }

  /**
   * Whether `next` is this range summed over the same frames array, grown only at its end since,
   * its start the same or later: then catchUp() after retarget(next) gives the summary
   * summarize(next) would. Everything but the frames, the matrices and the reach (read again by
   * each summary) must be the same, and the end too unless the tallies are open-ended and no frame
   * starts at or past the new one. A later start (a following hour moves it a column every few
   * seconds) takes back what the frames before it added instead of summing the range again: that
   * was most of the page's own work under load (bench/web's live profile, 2.3 s of 33 s).
   */
  follows(next: SummaryInput): boolean {
    const a = this.input;
    const frames = next.frames;
    return (
      this.detached &&
      next.frames === a.frames &&
      next.from >= a.from &&
      (next.to === a.to
        ? !this.openEnded || framesEndBefore(frames, this.fed.length, next.to)
        : this.openEnded && framesEndBefore(frames, 0, next.to)) &&
      next.step === a.step &&
      next.kind === a.kind &&
      next.schema === a.schema &&
      next.diskKind === a.diskKind &&
      next.snapshotRange === a.snapshotRange &&
      sameSet(next.devs, a.devs) &&
      sameSet(next.classes, a.classes) &&
      this.leavesFewInOrder(next.from) &&
      this.droppedFrom(frames, next.from) !== undefined
    );
  }

  /**
   * The frames fed that a start at `from` leaves out are at most a slice of work (retarget takes
   * them back at once, in the task that asks: a zoom from an hour into its last minute would take
   * back the other 59 minutes, more than summing the minute afresh), and all came before those it
   * keeps (a live window's are in time order): the tallies take them back from the front
   * (BreakdownTally's busiest step is a sliding maximum).
   */
  private leavesFewInOrder(from: number, slice = SUMMARY_SLICE): boolean {
    if (from === this.input.from) return true;
    let kept = false;
    let weight = 0;
    for (const f of this.fed) {
      if (f.ts >= from) kept = true;
      else if (f.ts >= this.input.from) {
        if (kept) return false;
        weight += frameWeight(f);
        if (weight > slice) return false;
      }
    }
    return true;
  }

  /** droppedFromFront() of the frames fed, when those dropped were all before `from`; undefined otherwise. */
  private droppedFrom(frames: readonly Frame[], from: number): number | undefined {
    const k = droppedFromFront(this.fed, frames);
    if (k === undefined) return undefined;
    for (let i = 0; i < k; i++) if ((this.fed[i] as Frame).ts >= from) return undefined;
    return k;
  }

  /**
   * Continues with `next` (follows(next) must hold): catchUp() then adds only the frames new since,
   * and reads the matrices and reach of `next`.
   */
  retarget(next: SummaryInput): this {
    if (!this.follows(next)) throw new Error('RunningSummary.retarget: not the same range over the same frames');
    if (next.from > this.input.from) for (const t of [this.tally, this.cgroups, this.sizes, this.waits]) t.startAt(this.fed, next.from);
    const dropped = this.droppedFrom(next.frames, next.from) ?? 0;
    if (dropped > 0) {
      this.tally.forget(this.fed, 0, dropped);
      this.fed.splice(0, dropped);
    }
    this.input = next;
    return this;
  }

  /** Feeds the frames not yet fed, yielding after each slice; then the summary. */
  *catchUp(slice = SUMMARY_SLICE): Generator<void, Summary> {
    const frames = this.input.frames;
    while (this.fed.length < frames.length) {
      let end = this.fed.length;
      let weight = 0;
      while (end < frames.length && weight < slice) weight += frameWeight(frames[end++] as Frame);
      this.feed(frames, end);
      if (this.fed.length < frames.length) yield;
    }
    return this.result(this.input);
  }

  private feed(frames: readonly Frame[], end: number): void {
    const start = this.fed.length;
    if (end <= start) return;
    this.tally.add(frames, start, end);
    this.cgroups.add(frames, start, end);
    this.sizes.add(frames, start, end);
    this.waits.add(frames, start, end);
    for (let i = start; i < end; i++) this.fed.push(frames[i] as Frame);
  }

  /** The summary of the frames fed, with the matrices and reach of `input` (they are read whole: cheap). */
  private result(input: SummaryInput): Summary {
    const { from, to, step } = input;
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
    const tally = this.tally;
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
      cgroups: this.cgroups.result(),
      sizes: this.sizes.result(),
      submitWait: this.waits.result(),
    };
  }
}

/** No frame of frames[start..] starts at or past `to` (a scan: a few thousand compares at most). */
function framesEndBefore(frames: readonly Frame[], start: number, to: number): boolean {
  for (let i = start; i < frames.length; i++) if ((frames[i] as Frame).ts >= to) return false;
  return true;
}

/** Same members (both undefined counts as the same). */
function sameSet(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/**
 * Computes the summary, yielding after each slice of frames. The caller must not change
 * `input.frames` or the matrices between steps (pipeline/visibleSummary.ts drops a run on any change).
 */
export function* summarize(input: SummaryInput, slice = SUMMARY_SLICE): Generator<void, Summary> {
  return yield* new RunningSummary(input, false).catchUp(slice);
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

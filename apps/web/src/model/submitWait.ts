/**
 * Time outside the device: when the wait for a request (submit wait, protocol 4: a frozen queue,
 * QoS throttling, no free tag) is most of what the application sees, the row head says so
 * ("p99 ≤ 420 ms, of which ≤ 420 ms waiting for a request on loop3"), whatever phase is on screen:
 * device latency alone would call such a disk fast.
 *
 * The rule: over the range shown, per disk, the p99 of the submit wait is at least half the p99
 * of the total latency (the two histograms hold the same I/Os: those whose submission was seen),
 * both read as the page shows them: the top of the bucket holding the rank (percentiles.ts).
 * Summed per disk over the classes shown (the class filter applies; `cg` has no submit wait).
 */
import {
  addSparseInto,
  type BucketSchema,
  bucketCount,
  denseTotal,
  type Frame,
  phaseHist,
  SUBMIT_CAUSE_WAIT,
  WBT_WAIT,
  SUBMIT_CAUSES,
  type SubmitCause,
} from '@blkheat/shared-types';
import { type DiskRange, forEachDiskInRange } from './diskFrames.js';
import { formatQuantile, P99, quantilesOf, type QuantileValue } from './percentiles.js';
import type { DiskKindOf } from './phase.js';

/** Submit wait p99 at least this share of the total p99: time outside the device dominates. */
export const SUBMIT_DOMINATES = 0.5;

/**
 * A cause (DiskFrame.causes) met by at least this share of the I/Os is named as the wait: the p99
 * is the slowest 1 %, so a cause that reached that many is the likely one behind it.
 */
export const CAUSE_NAMED = 0.01;

/** One disk's waits over the range, while frames are added. */
interface DiskWaits {
  readonly total: Float64Array;
  readonly submit: Float64Array;
  readonly causes: Partial<Record<SubmitCause, number>>;
  /** wbt's windows that held writes back (DiskFrame.wbt). */
  wbt: number;
  /** Seconds in which every tag was in use while bios waited (DiskFrame.tags_full). */
  tagsFull: number;
  /** Frames of the range that added to it (none left: the disk goes). */
  frames: number;
}

/** Marks of a disk's seconds (not counts of I/Os) that name a wait where no I/O's cause does. */
export interface DiskWaitMarks {
  readonly wbt?: number;
  readonly tagsFull?: number;
}

/** A disk whose total latency is mostly waiting for a request. */
export interface SubmitWaitNote {
  /** p99 of the total latency (a bound, as every percentile from a histogram). */
  readonly totalP99: QuantileValue;
  /** p99 of the submit wait. */
  readonly submitP99: QuantileValue;
  /**
   * The cause most of those I/Os met, where at least CAUSE_NAMED of them met one; else 'tags'
   * where every tag was in use while bios waited in some second of the range (DiskFrame.tags_full),
   * else 'wbt' where wbt held writes back on the disk (DiskFrame.wbt): marks of the disk, not of
   * its I/Os.
   */
  readonly cause?: SubmitCause | 'tags' | 'wbt';
}

/**
 * The note for a disk's dense total and submit-wait histograms, or undefined when the submit
 * wait does not dominate (or either has no I/O).
 */
export function submitWaitNote(
  total: ArrayLike<number>,
  submit: ArrayLike<number>,
  schema: BucketSchema,
  causes: Readonly<Partial<Record<SubmitCause, number>>> = {},
  marks: DiskWaitMarks = {},
): SubmitWaitNote | undefined {
  const [totalP99] = quantilesOf(total, schema, P99);
  const [submitP99] = quantilesOf(submit, schema, P99);
  if (totalP99 === undefined || submitP99 === undefined || !(totalP99.seconds > 0)) return undefined;
  if (submitP99.seconds < SUBMIT_DOMINATES * totalP99.seconds) return undefined;
  const ios = denseTotal(total);
  const named = SUBMIT_CAUSES.filter((c) => (causes[c] ?? 0) >= CAUSE_NAMED * ios).sort((a, b) => (causes[b] ?? 0) - (causes[a] ?? 0));
  const cause = named[0] ?? ((marks.tagsFull ?? 0) > 0 ? 'tags' : (marks.wbt ?? 0) > 0 ? 'wbt' : undefined);
  return { totalP99, submitP99, ...(cause ? { cause } : {}) };
}

/** "p99 ≤ 420 ms, of which ≤ 353 ms waiting for a tag on loop3" (or "… waiting for a request …" with no cause named). */
export function submitWaitText(note: SubmitWaitNote, diskName: string): string {
  const wait = `waiting ${note.cause ? causeWait(note.cause) : 'for a request'}`;
  return `p99 ${formatQuantile(note.totalP99)}, of which ${formatQuantile(note.submitP99)} ${wait} on ${diskName}`;
}

/** How a note's cause reads after "waiting" (the tags mark reads as io_uring's refusals do). */
function causeWait(cause: SubmitCause | 'tags' | 'wbt'): string {
  if (cause === 'wbt') return WBT_WAIT;
  return SUBMIT_CAUSE_WAIT[cause === 'tags' ? 'refused' : cause];
}

/**
 * Running per-disk total and submit-wait histograms of frames in [from, to) over `devs` and
 * `classes`, fed a slice at a time, whose start may move on (startAt).
 */
export class SubmitWaitTally {
  private readonly disks = new Map<string, DiskWaits>();

  constructor(
    private opts: DiskRange & {
      /** Classes counted; undefined = every class. */
      readonly classes?: ReadonlySet<string> | undefined;
      readonly diskKind: DiskKindOf;
    },
    private readonly schema: BucketSchema,
  ) {}

  add(frames: readonly Frame[], start = 0, end = frames.length): void {
    this.count(frames, start, end, this.opts, 1);
  }

  /** The range starts at `from` from now on: what the frames fed before it added is taken back (BreakdownTally.startAt). */
  startAt(fed: readonly Frame[], from: number): void {
    this.count(fed, 0, fed.length, { ...this.opts, to: Math.min(from, this.opts.to) }, -1);
    this.opts = { ...this.opts, from };
  }

  private count(frames: readonly Frame[], start: number, end: number, range: DiskRange, sign: 1 | -1): void {
    const { classes, diskKind } = this.opts;
    forEachDiskInRange(frames, start, end, range, (disk) => {
      const kind = diskKind(disk.dev);
      if (kind === 'bio') return; // no submit wait: bio → completion is all there is
      let acc: DiskWaits | undefined;
      for (const series of disk.cls) {
        if (series.w === undefined && series.t === undefined) continue;
        if (classes && !classes.has(series.c)) continue;
        if (!acc) {
          acc = this.disks.get(disk.dev);
          const rows = bucketCount(this.schema);
          if (!acc)
            this.disks.set(
              disk.dev,
              (acc = { total: new Float64Array(rows), submit: new Float64Array(rows), causes: {}, wbt: 0, tagsFull: 0, frames: 0 }),
            );
        }
        addSparseInto(acc.total, phaseHist(series, 'total', kind), sign);
        addSparseInto(acc.submit, phaseHist(series, 'submit', kind), sign);
      }
      // Causes are per disk (not per class): counted once the disk has classes shown.
      if (!acc) return;
      for (const c of SUBMIT_CAUSES) acc.causes[c] = (acc.causes[c] ?? 0) + sign * (disk.causes?.[c] ?? 0);
      acc.wbt += sign * (disk.wbt ?? 0);
      acc.tagsFull += sign * (disk.tags_full ?? 0);
      acc.frames += sign;
      if (acc.frames === 0) this.disks.delete(disk.dev);
    });
  }

  /** Per disk where the submit wait dominates: the note. */
  result(): Map<string, SubmitWaitNote> {
    const out = new Map<string, SubmitWaitNote>();
    for (const [dev, { total, submit, causes, wbt, tagsFull }] of this.disks) {
      const note = submitWaitNote(total, submit, this.schema, causes, { wbt, tagsFull });
      if (note) out.set(dev, note);
    }
    return out;
  }
}

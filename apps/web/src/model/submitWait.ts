/**
 * Time outside the device: when the wait for a request (submit wait, protocol 4: a frozen queue,
 * QoS throttling, no free tag) is most of what the application sees, the row head says so
 * ("p99 412 ms, of which 390 ms waiting for a request on loop3"), whatever phase is on screen:
 * device latency alone would call such a disk fast.
 *
 * The rule: over the range shown, per disk, the p99 of the submit wait is at least half the p99
 * of the total latency (the two histograms hold the same I/Os: those whose submission was seen).
 * Summed per disk over the classes shown (the class filter applies; `cg` has no submit wait).
 */
import { addSparseInto, type BucketSchema, bucketCount, type Frame, phaseHist, quantileSeconds } from '@blkheat/shared-types';
import { type DiskRange, forEachDiskInRange } from './diskFrames.js';
import { formatLatency } from './latency.js';
import type { DiskKindOf } from './phase.js';

/** Submit wait p99 at least this share of the total p99: time outside the device dominates. */
export const SUBMIT_DOMINATES = 0.5;

/** A disk whose total latency is mostly waiting for a request. */
export interface SubmitWaitNote {
  /** p99 of the total latency, seconds. */
  readonly totalP99: number;
  /** p99 of the submit wait, seconds. */
  readonly submitP99: number;
}

/**
 * The note for a disk's dense total and submit-wait histograms, or undefined when the submit
 * wait does not dominate (or either has no I/O).
 */
export function submitWaitNote(total: ArrayLike<number>, submit: ArrayLike<number>, schema: BucketSchema): SubmitWaitNote | undefined {
  const totalP99 = quantileSeconds(total, 0.99, schema);
  const submitP99 = quantileSeconds(submit, 0.99, schema);
  if (totalP99 === undefined || submitP99 === undefined || !(totalP99 > 0)) return undefined;
  return submitP99 >= SUBMIT_DOMINATES * totalP99 ? { totalP99, submitP99 } : undefined;
}

/** "p99 412 ms, of which 390 ms waiting for a request on loop3". */
export function submitWaitText(note: SubmitWaitNote, diskName: string): string {
  return `p99 ${formatLatency(note.totalP99)}, of which ${formatLatency(note.submitP99)} waiting for a request on ${diskName}`;
}

/** Running per-disk total and submit-wait histograms of frames in [from, to) over `devs` and `classes`, fed a slice at a time. */
export class SubmitWaitTally {
  private readonly disks = new Map<string, { total: Float64Array; submit: Float64Array }>();

  constructor(
    private readonly opts: DiskRange & {
      /** Classes counted; undefined = every class. */
      readonly classes?: ReadonlySet<string> | undefined;
      readonly diskKind: DiskKindOf;
    },
    private readonly schema: BucketSchema,
  ) {}

  add(frames: readonly Frame[], start = 0, end = frames.length): void {
    const { classes, diskKind } = this.opts;
    forEachDiskInRange(frames, start, end, this.opts, (disk) => {
      const kind = diskKind(disk.dev);
      if (kind === 'bio') return; // no submit wait: bio → completion is all there is
      let acc: { total: Float64Array; submit: Float64Array } | undefined;
      for (const series of disk.cls) {
        if (series.w === undefined && series.t === undefined) continue;
        if (classes && !classes.has(series.c)) continue;
        if (!acc) {
          acc = this.disks.get(disk.dev);
          const rows = bucketCount(this.schema);
          if (!acc) this.disks.set(disk.dev, (acc = { total: new Float64Array(rows), submit: new Float64Array(rows) }));
        }
        addSparseInto(acc.total, phaseHist(series, 'total', kind));
        addSparseInto(acc.submit, phaseHist(series, 'submit', kind));
      }
    });
  }

  /** Per disk where the submit wait dominates: the note. */
  result(): Map<string, SubmitWaitNote> {
    const out = new Map<string, SubmitWaitNote>();
    for (const [dev, { total, submit }] of this.disks) {
      const note = submitWaitNote(total, submit, this.schema);
      if (note) out.set(dev, note);
    }
    return out;
  }
}

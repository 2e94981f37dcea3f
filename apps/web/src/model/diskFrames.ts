/**
 * What a per-disk tally of a range reads (model/cgroups.ts, model/sizeLatency.ts): the disk
 * frames of the frames that start in [from, to), of the disks asked for. One place for the
 * range and disk test, so the tallies the panels show agree on which seconds and disks they sum.
 */
import type { DiskFrame, Frame } from '@blkheat/shared-types';

/** Frames starting in [from, to); only the disks in `devs` (undefined: every disk). */
export interface DiskRange {
  readonly from: number;
  readonly to: number;
  readonly devs?: ReadonlySet<string> | undefined;
}

/** Calls `each` with every disk frame of frames[start, end) inside `range`, in order. */
export function forEachDiskInRange(
  frames: readonly Frame[],
  start: number,
  end: number,
  range: DiskRange,
  each: (disk: DiskFrame) => void,
): void {
  const { from, to, devs } = range;
  for (let i = start; i < end; i++) {
    const f = frames[i] as Frame;
    if (f.ts < from || f.ts >= to) continue;
    for (const d of f.disks) if (!devs || devs.has(d.dev)) each(d);
  }
}

/**
 * How the model reads disk frames, in one place: which disk frames a per-disk tally of a range
 * reads (model/cgroups.ts, model/sizeLatency.ts), one range and disk test so the tallies the
 * panels show agree on which seconds and disks they sum; and the cgroup latency a matrix takes
 * from a disk frame, named in words here (the wire's `cg`: device latency since protocol 3, every
 * phase since 4). A class series' latency of a phase is
 * shared-types' phaseHist() (the one rule for it, model/phase.ts says what each phase is).
 */
import {
  type DiskFrame,
  type DiskInfo,
  type Frame,
  type LatencyKind,
  phaseCarried,
  phaseHist,
  type SparseHist,
} from '@blkheat/shared-types';

/** Frames starting in [from, to); only the disks in `devs` (undefined: every disk). */
export interface DiskRange {
  readonly from: number;
  readonly to: number;
  readonly devs?: ReadonlySet<string> | undefined;
}

/**
 * How many of the frames `fed` holds `frames` no longer begins with, when `frames` is `fed` with
 * its oldest frames dropped and new ones added at its end (a live window as it moves on:
 * pipeline/windowLoader.ts); undefined otherwise. Compares references: a few thousand at most.
 * Running tallies (model/summary.ts, model/throughput.ts) feed only the frames new since.
 */
export function droppedFromFront(fed: readonly Frame[], frames: readonly Frame[]): number | undefined {
  if (fed.length === 0) return 0;
  const k = frames.length > 0 ? fed.indexOf(frames[0] as Frame) : fed.length;
  if (k < 0 || frames.length < fed.length - k) return undefined;
  for (let i = k; i < fed.length; i++) if (frames[i - k] !== fed[i]) return undefined;
  return k;
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

/**
 * A disk's latency of `phase` charged to the cgroup `path` in one frame (undefined: none, or the
 * data splits no such latency by cgroup: no `cg`, or a `cg` from before protocol 4 for a phase
 * but device latency).
 */
export function cgroupLatency(disk: DiskFrame, path: string, phase: LatencyKind, kind: DiskInfo['kind']): SparseHist | undefined {
  const series = disk.cg?.find((g) => g.g === path);
  return series && phaseCarried(series, phase, kind) ? phaseHist(series, phase, kind) : undefined;
}

/** A disk range whose tallies read one latency phase (phaseHist()). */
export interface PhasedRange extends DiskRange {
  readonly kind: LatencyKind;
  /** Each disk's kind, for phaseHist() (default: every disk request-based). */
  readonly diskKind?: ((dev: string) => DiskInfo['kind']) | undefined;
}

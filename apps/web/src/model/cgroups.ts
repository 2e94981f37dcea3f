/**
 * Per-cgroup breakdown of a range (DiskFrame.cg, protocol 3): count, share and latency of the
 * phase on screen per cgroup path of each disk, and the cgroup filter's rules. The agent splits
 * the count and every latency phase by cgroup (device latency since protocol 3, queue, submit
 * wait and total since 4); op classes, sizes and bytes are not split, so a cgroup filter cannot
 * apply to them, nor to a phase older data does not split (the views say so instead of showing
 * them as if filtered). Where some frame of a range has no other phase by cgroup, its table is
 * of device latency (never a mix of phases), and `kind` says which phase it is.
 */
import {
  addCgroup,
  addSparseInto,
  type BucketSchema,
  bucketCount,
  CGROUP_NONE,
  CGROUP_OTHER,
  type Frame,
  LATENCY_KINDS,
  type LatencyKind,
  MAX_CGROUP_PATH_LENGTH,
  type PhaseAcc,
  phaseCarried,
  phaseHist,
  type SparseHist,
} from '@blkheat/shared-types';
import { type DiskRange, forEachDiskInRange, type PhasedRange } from './diskFrames.js';
import { ALL_REQUEST } from './phase.js';
import { quantilesOf, type QuantileValue } from './percentiles.js';

export interface CgroupSummary {
  /** The cgroup's path ("/" the root), CGROUP_NONE, CGROUP_OTHER or "cgroup#ID". */
  readonly g: string;
  readonly n: number;
  /** Share of the disk's I/Os split by cgroup in the range (0..1). */
  readonly share: number;
  /** Latency of the tally's phase (dense). */
  readonly hist: Float64Array;
  readonly quantiles: QuantileValue[];
}

/** One disk's cgroups over a range. */
export interface CgroupBreakdown {
  /** Busiest first. */
  readonly rows: readonly CgroupSummary[];
  /** Frames of the range that carried `cg` for this disk (0: the data has no per-cgroup split). */
  readonly framesWithCg: number;
  /** The phase of the rows' latency: the tally's, or device latency where some frame's `cg` lacked it (data before protocol 4). */
  readonly kind: LatencyKind;
  /** Frames of the range with I/O on this disk. */
  readonly framesWithIo: number;
}

const REMOVED_RE = /^cgroup#\d{1,20}$/;
// eslint-disable-next-line no-control-regex -- a path with control characters is refused on purpose
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/**
 * Why `g` cannot be a cgroup filter (undefined when it can): a path ("/" or "/a/b", no control
 * characters, no empty segment), or one of the names the protocol defines.
 */
export function cgroupProblem(g: string): string | undefined {
  if (g === CGROUP_NONE || g === CGROUP_OTHER || REMOVED_RE.test(g)) return undefined;
  if (g.length === 0) return 'empty';
  if (g.length > MAX_CGROUP_PATH_LENGTH) return `longer than ${MAX_CGROUP_PATH_LENGTH} characters`;
  if (!g.startsWith('/')) return `must be a path starting with "/", ${CGROUP_NONE}, ${CGROUP_OTHER} or cgroup#ID`;
  if (CONTROL_RE.test(g)) return 'contains control characters';
  if (g !== '/' && (g.endsWith('/') || g.includes('//'))) return 'has an empty path segment';
  return undefined;
}

/**
 * The cgroup filter as the heat maps apply it: to device latency always, to another phase where
 * the data splits it by cgroup (`cgroupPhases`: its `cg` carries it, protocol 4).
 */
export function cgroupFilterApplies(kind: LatencyKind, cgroupPhases: readonly LatencyKind[]): boolean {
  return kind === 'device' || cgroupPhases.includes(kind);
}

/** The cgroup filter in force: the chosen cgroup where it applies to the phase on screen, else none. */
export function cgroupInForce(cgroup: string | undefined, kind: LatencyKind, cgroupPhases: readonly LatencyKind[]): string | undefined {
  return cgroupFilterApplies(kind, cgroupPhases) ? cgroup : undefined;
}

/** The phases besides device latency a frame's `cg` carries (protocol 4: `q`, `w`, `t`), in LATENCY_KINDS order. */
export function cgroupPhasesOf(frame: Frame): LatencyKind[] {
  const has = { queue: false, submit: false, total: false };
  for (const d of frame.disks) {
    for (const g of d.cg ?? []) {
      has.queue ||= g.q !== undefined;
      has.submit ||= g.w !== undefined;
      has.total ||= g.t !== undefined;
    }
  }
  return LATENCY_KINDS.filter((k): k is 'queue' | 'submit' | 'total' => k !== 'device' && has[k]);
}

/**
 * Running per-disk cgroup totals of frames in [from, to) over `devs`, fed a slice at a time
 * (model/summary.ts), whose start may move on (startAt). Coarse (merged) frames sum the same:
 * `cg` adds per path.
 */
export class CgroupTally {
  /**
   * Per disk: its totals by cgroup path in the tally's phase and in device time (the fallback),
   * how many frames split its I/O by cgroup, how many of those by the phase too, how many had
   * any, and how many it had in the range (none left: the disk goes).
   */
  private readonly disks = new Map<
    string,
    {
      phase: Map<string, PhaseAcc>;
      device: Map<string, PhaseAcc>;
      framesWithCg: number;
      framesWithPhase: number;
      framesWithIo: number;
      frames: number;
    }
  >();

  constructor(
    private opts: PhasedRange & {
      /** Results copy the running totals, so frames added later leave them as read (model/summary.ts RunningSummary). */
      readonly detached?: boolean | undefined;
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
    const buckets = bucketCount(this.schema);
    const { kind } = this.opts;
    const diskKind = this.opts.diskKind ?? ALL_REQUEST;
    forEachDiskInRange(frames, start, end, range, (disk) => {
      let acc = this.disks.get(disk.dev);
      if (!acc) {
        acc = { phase: new Map(), device: new Map(), framesWithCg: 0, framesWithPhase: 0, framesWithIo: 0, frames: 0 };
        this.disks.set(disk.dev, acc);
      }
      acc.frames += sign;
      if (acc.frames === 0) this.disks.delete(disk.dev);
      if (disk.cls.length > 0) acc.framesWithIo += sign;
      if (!disk.cg) return;
      acc.framesWithCg += sign;
      const dk = diskKind(disk.dev);
      if (disk.cg.every((g) => phaseCarried(g, kind, dk))) acc.framesWithPhase += sign;
      for (const g of disk.cg) {
        countCgroup(acc.phase, g.g, g.n, buckets, phaseHist(g, kind, dk), sign);
        // The fallback, for a range of older data; device latency is the phase itself otherwise.
        if (kind !== 'device') countCgroup(acc.device, g.g, g.n, buckets, g.d, sign);
      }
    });
  }

  /** Per disk: its cgroups, busiest first (ties by path). */
  result(): Map<string, CgroupBreakdown> {
    const out = new Map<string, CgroupBreakdown>();
    for (const [dev, acc] of this.disks) {
      const { framesWithCg, framesWithIo } = acc;
      const kind = acc.framesWithPhase === framesWithCg ? this.opts.kind : 'device';
      const byPath = kind === this.opts.kind ? acc.phase : acc.device;
      let total = 0;
      for (const v of byPath.values()) total += v.n;
      const rows: CgroupSummary[] = [...byPath.entries()]
        .filter(([, v]) => v.n > 0)
        .map(([path, v]) => ({
          g: path,
          n: v.n,
          share: total > 0 ? v.n / total : 0,
          hist: this.opts.detached ? v.d.slice() : v.d,
          quantiles: quantilesOf(v.d, this.schema),
        }))
        .sort((x, y) => y.n - x.n || (x.g < y.g ? -1 : x.g > y.g ? 1 : 0));
      out.set(dev, { rows, framesWithCg, framesWithIo, kind });
    }
    return out;
  }
}

/** A cgroup's `n` I/Os of latency `hist` added to (sign 1) or taken back from (−1) its total by path. */
function countCgroup(into: Map<string, PhaseAcc>, g: string, n: number, buckets: number, hist: SparseHist, sign: 1 | -1): void {
  if (sign > 0) return addCgroup(into, g, n, buckets, { d: hist });
  const acc = into.get(g);
  if (!acc) throw new Error(`CgroupTally: ${g} taken back, never added`);
  acc.n -= n;
  addSparseInto(acc.d, hist, -1);
}

/** Per-disk cgroup breakdown of frames in [from, to) (all at once). */
export function cgroupBreakdown(frames: readonly Frame[], opts: PhasedRange, schema: BucketSchema): Map<string, CgroupBreakdown> {
  const t = new CgroupTally(opts, schema);
  t.add(frames);
  return t.result();
}

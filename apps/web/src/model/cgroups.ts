/**
 * Per-cgroup breakdown of a range (DiskFrame.cg, protocol 3): count, share and device latency
 * per cgroup path of each disk, and the cgroup filter's rules. The agent splits only the count
 * and the device latency by cgroup: op classes, the other latency phases (queue, submit wait,
 * total), sizes and bytes are not split,
 * so a cgroup filter cannot apply to them (the views say so instead of showing them as if
 * filtered).
 */
import {
  addCgroup,
  type BucketSchema,
  bucketCount,
  CGROUP_NONE,
  CGROUP_OTHER,
  type CgroupAcc,
  type Frame,
  type LatencyKind,
  MAX_CGROUP_PATH_LENGTH,
} from '@blkheat/shared-types';
import { type DiskRange, forEachDiskInRange } from './diskFrames.js';
import { quantilesOf, type QuantileValue } from './percentiles.js';

export interface CgroupSummary {
  /** The cgroup's path ("/" the root), CGROUP_NONE, CGROUP_OTHER or "cgroup#ID". */
  readonly g: string;
  readonly n: number;
  /** Share of the disk's I/Os split by cgroup in the range (0..1). */
  readonly share: number;
  /** Device latency (dense). */
  readonly hist: Float64Array;
  readonly quantiles: QuantileValue[];
}

/** One disk's cgroups over a range. */
export interface CgroupBreakdown {
  /** Busiest first. */
  readonly rows: readonly CgroupSummary[];
  /** Frames of the range that carried `cg` for this disk (0: the data has no per-cgroup split). */
  readonly framesWithCg: number;
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

/** The cgroup filter as the heat maps apply it: device latency only (`cg` has no queue, submit or total latency). */
export function cgroupFilterApplies(kind: LatencyKind): boolean {
  return kind === 'device';
}

/**
 * Running per-disk cgroup totals of frames in [from, to) over `devs`, fed a slice at a time
 * (model/summary.ts). Coarse (merged) frames sum the same: `cg` adds per path.
 */
export class CgroupTally {
  /** Per disk: its totals by cgroup path, and how many frames split its I/O by cgroup, and had any. */
  private readonly disks = new Map<string, { byPath: Map<string, CgroupAcc>; framesWithCg: number; framesWithIo: number }>();

  constructor(
    private readonly opts: DiskRange,
    private readonly schema: BucketSchema,
  ) {}

  add(frames: readonly Frame[], start = 0, end = frames.length): void {
    const buckets = bucketCount(this.schema);
    forEachDiskInRange(frames, start, end, this.opts, (disk) => {
      let acc = this.disks.get(disk.dev);
      if (!acc) this.disks.set(disk.dev, (acc = { byPath: new Map(), framesWithCg: 0, framesWithIo: 0 }));
      if (disk.cls.length > 0) acc.framesWithIo++;
      if (!disk.cg) return;
      acc.framesWithCg++;
      for (const { g: path, n: count, d: deviceLatency } of disk.cg) addCgroup(acc.byPath, path, count, buckets, deviceLatency);
    });
  }

  /** Per disk: its cgroups, busiest first (ties by path). */
  result(): Map<string, CgroupBreakdown> {
    const out = new Map<string, CgroupBreakdown>();
    for (const [dev, { byPath, framesWithCg, framesWithIo }] of this.disks) {
      let total = 0;
      for (const v of byPath.values()) total += v.n;
      const rows: CgroupSummary[] = [...byPath.entries()]
        .filter(([, v]) => v.n > 0)
        .map(([path, v]) => ({ g: path, n: v.n, share: total > 0 ? v.n / total : 0, hist: v.d, quantiles: quantilesOf(v.d, this.schema) }))
        .sort((x, y) => y.n - x.n || (x.g < y.g ? -1 : x.g > y.g ? 1 : 0));
      out.set(dev, { rows, framesWithCg, framesWithIo });
    }
    return out;
  }
}

/** Per-disk cgroup breakdown of frames in [from, to) (all at once). */
export function cgroupBreakdown(
  frames: readonly Frame[],
  opts: { from: number; to: number; devs?: ReadonlySet<string> | undefined },
  schema: BucketSchema,
): Map<string, CgroupBreakdown> {
  const t = new CgroupTally(opts, schema);
  t.add(frames);
  return t.result();
}

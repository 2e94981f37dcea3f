/**
 * Size × latency of a range (ClassSeries.sz, protocol 2): per disk, for each log2 size class
 * s (the smallest s with bytes <= 2^s), the count and the latency histogram of the phase on
 * screen of its I/Os. The size heat map draws it (columns: size classes, rows: latency buckets)
 * and the size histogram its column sums. Class filters apply (sz is per class); there is no
 * per-cgroup split of sizes. Sizes carry device latency since protocol 2 and every phase since
 * 4: where some frame of the range has no other phase by size, the whole tally is of device
 * latency (never a mix of phases), and `kind` says which phase it is.
 */
import {
  addSparseInto,
  type BucketSchema,
  bucketCount,
  type Frame,
  type LatencyKind,
  phaseCarried,
  phaseHist,
} from '@blkheat/shared-types';
import { type DiskRange, forEachDiskInRange, type PhasedRange } from './diskFrames.js';
import { ALL_REQUEST } from './phase.js';

/** Size classes are shared-types' (the agent filters samples by them too). */
export { sizeClassBytes, sizeClassOf } from '@blkheat/shared-types';

/** One disk's size × latency over a range. */
export interface SizeLatency {
  /** Size classes from the smallest to the largest with I/O, every one between included (an axis, not a list): the columns. */
  readonly sizes: readonly number[];
  /** Per column (same order as `sizes`): the count and the dense latency histogram of the tally's phase. */
  readonly counts: readonly number[];
  readonly hists: readonly Float64Array[];
  /** Busiest cell (size class × latency bucket). */
  readonly maxCell: number;
  /** Frames of the range whose classes carried `sz` (0: the data has no size split). */
  readonly framesWithSz: number;
  /** The phase the histograms are of: the tally's, or device latency where some frame's sizes lacked it (data before protocol 4). */
  readonly kind: LatencyKind;
}

/** One size class while a range is summed: its count, and its latency in the tally's phase and in device time (the fallback). */
interface SizeCell {
  count: number;
  readonly phase: Float64Array;
  readonly device: Float64Array;
}

/** Count of the cell (size class s, latency bucket b); 0 outside. */
export function sizeCell(m: SizeLatency, s: number, bucket: number): number {
  const i = m.sizes.indexOf(s);
  return i < 0 ? 0 : ((m.hists[i] as Float64Array)[bucket] ?? 0);
}

/**
 * Running per-disk size × latency of frames in [from, to) over `devs` and `classes`, fed a slice
 * at a time, whose start may move on (startAt).
 */
export class SizeTally {
  /**
   * Per disk: its size classes, how many frames split its classes by size, how many of those by
   * the phase too, and how many it had in the range (none left: the disk goes).
   */
  private readonly disks = new Map<
    string,
    { bySize: Map<number, SizeCell>; framesWithSz: number; framesWithPhase: number; frames: number }
  >();

  constructor(
    private opts: PhasedRange & {
      /** Classes counted; undefined = every class. */
      readonly classes?: ReadonlySet<string> | undefined;
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
    const { classes, kind } = this.opts;
    const diskKind = this.opts.diskKind ?? ALL_REQUEST;
    const buckets = bucketCount(this.schema);
    forEachDiskInRange(frames, start, end, range, (disk) => {
      let acc = this.disks.get(disk.dev);
      if (!acc) this.disks.set(disk.dev, (acc = { bySize: new Map(), framesWithSz: 0, framesWithPhase: 0, frames: 0 }));
      acc.frames += sign;
      if (acc.frames === 0) this.disks.delete(disk.dev);
      const dk = diskKind(disk.dev);
      let any = false;
      let carried = true;
      for (const series of disk.cls) {
        if (!series.sz) continue;
        any = true;
        if (!series.sz.every((z) => phaseCarried(z, kind, dk))) carried = false;
        if (classes && !classes.has(series.c)) continue;
        for (const z of series.sz) {
          let cell = acc.bySize.get(z.s);
          if (!cell) acc.bySize.set(z.s, (cell = { count: 0, phase: new Float64Array(buckets), device: new Float64Array(buckets) }));
          cell.count += sign * z.n;
          addSparseInto(cell.phase, phaseHist(z, kind, dk), sign);
          // The fallback, for a range of older data; device latency is the phase itself otherwise.
          if (kind !== 'device') addSparseInto(cell.device, z.d, sign);
        }
      }
      if (any) acc.framesWithSz += sign;
      if (any && carried) acc.framesWithPhase += sign;
    });
  }

  result(): Map<string, SizeLatency> {
    const out = new Map<string, SizeLatency>();
    for (const [dev, { bySize, framesWithSz, framesWithPhase }] of this.disks) {
      const kind = framesWithPhase === framesWithSz ? this.opts.kind : 'device';
      const present = [...bySize.keys()].filter((s) => (bySize.get(s)?.count ?? 0) > 0);
      const sizes: number[] = [];
      if (present.length > 0) for (let s = Math.min(...present); s <= Math.max(...present); s++) sizes.push(s);
      const rows = bucketCount(this.schema);
      const hists = sizes.map((s) => {
        const cell = bySize.get(s);
        const hist = kind === this.opts.kind ? cell?.phase : cell?.device;
        return hist ? (this.opts.detached ? hist.slice() : hist) : new Float64Array(rows);
      });
      let maxCell = 0;
      for (const h of hists) for (let b = 0; b < h.length; b++) maxCell = Math.max(maxCell, h[b] as number);
      out.set(dev, { sizes, counts: sizes.map((s) => bySize.get(s)?.count ?? 0), hists, maxCell, framesWithSz, kind });
    }
    return out;
  }
}

/** Per-disk size × latency of frames in [from, to) (all at once). */
export function sizeLatency(
  frames: readonly Frame[],
  opts: PhasedRange & { classes?: ReadonlySet<string> | undefined },
  schema: BucketSchema,
): Map<string, SizeLatency> {
  const t = new SizeTally(opts, schema);
  t.add(frames);
  return t.result();
}

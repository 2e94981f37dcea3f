/**
 * Size × latency of a range (ClassSeries.sz, protocol 2): per disk, for each log2 size class
 * s (the smallest s with bytes <= 2^s), the count and the device latency histogram of its
 * I/Os. The size heat map draws it (columns: size classes, rows: latency buckets) and the size
 * histogram its column sums. Class filters apply (sz is per class); there is no per-cgroup and
 * no queue-latency split of sizes.
 */
import { addSparseInto, type BucketSchema, bucketCount, type Frame } from '@blkheat/shared-types';
import { type DiskRange, forEachDiskInRange } from './diskFrames.js';

/** The size class of an I/O of `bytes` bytes: the smallest s with bytes <= 2^s (0 for 0 or 1 byte). */
export function sizeClassOf(bytes: number): number {
  let s = 0;
  while (2 ** s < bytes) s++;
  return s;
}

/** Largest I/O size of size class s, in bytes (2^s). */
export function sizeClassBytes(s: number): number {
  return 2 ** s;
}

/** One disk's size × latency over a range. */
export interface SizeLatency {
  /** Size classes from the smallest to the largest with I/O, every one between included (an axis, not a list): the columns. */
  readonly sizes: readonly number[];
  /** Per column (same order as `sizes`): the count and the dense device latency histogram. */
  readonly counts: readonly number[];
  readonly hists: readonly Float64Array[];
  /** Busiest cell (size class × latency bucket). */
  readonly maxCell: number;
  /** Frames of the range whose classes carried `sz` (0: the data has no size split). */
  readonly framesWithSz: number;
}

/** Count of the cell (size class s, latency bucket b); 0 outside. */
export function sizeCell(m: SizeLatency, s: number, bucket: number): number {
  const i = m.sizes.indexOf(s);
  return i < 0 ? 0 : ((m.hists[i] as Float64Array)[bucket] ?? 0);
}

/** Running per-disk size × latency of frames in [from, to) over `devs` and `classes`, fed a slice at a time. */
export class SizeTally {
  /** Per disk: count and dense device latency by size class, and how many frames split its classes by size. */
  private readonly disks = new Map<string, { bySize: Map<number, { count: number; hist: Float64Array }>; framesWithSz: number }>();

  constructor(
    private readonly opts: DiskRange & {
      /** Classes counted; undefined = every class. */
      readonly classes?: ReadonlySet<string> | undefined;
    },
    private readonly schema: BucketSchema,
  ) {}

  add(frames: readonly Frame[], start = 0, end = frames.length): void {
    const { classes } = this.opts;
    forEachDiskInRange(frames, start, end, this.opts, (disk) => {
      let acc = this.disks.get(disk.dev);
      if (!acc) this.disks.set(disk.dev, (acc = { bySize: new Map(), framesWithSz: 0 }));
      let any = false;
      for (const series of disk.cls) {
        if (!series.sz) continue;
        any = true;
        if (classes && !classes.has(series.c)) continue;
        for (const { s: sizeClass, n: count, d: deviceLatency } of series.sz) {
          let cell = acc.bySize.get(sizeClass);
          if (!cell) acc.bySize.set(sizeClass, (cell = { count: 0, hist: new Float64Array(bucketCount(this.schema)) }));
          cell.count += count;
          addSparseInto(cell.hist, deviceLatency);
        }
      }
      if (any) acc.framesWithSz++;
    });
  }

  result(): Map<string, SizeLatency> {
    const out = new Map<string, SizeLatency>();
    for (const [dev, { bySize, framesWithSz }] of this.disks) {
      const present = [...bySize.keys()].filter((s) => (bySize.get(s)?.count ?? 0) > 0);
      const sizes: number[] = [];
      if (present.length > 0) for (let s = Math.min(...present); s <= Math.max(...present); s++) sizes.push(s);
      const rows = bucketCount(this.schema);
      const hists = sizes.map((s) => bySize.get(s)?.hist ?? new Float64Array(rows));
      let maxCell = 0;
      for (const h of hists) for (let b = 0; b < h.length; b++) maxCell = Math.max(maxCell, h[b] as number);
      out.set(dev, { sizes, counts: sizes.map((s) => bySize.get(s)?.count ?? 0), hists, maxCell, framesWithSz });
    }
    return out;
  }
}

/** Per-disk size × latency of frames in [from, to) (all at once). */
export function sizeLatency(
  frames: readonly Frame[],
  opts: { from: number; to: number; devs?: ReadonlySet<string> | undefined; classes?: ReadonlySet<string> | undefined },
  schema: BucketSchema,
): Map<string, SizeLatency> {
  const t = new SizeTally(opts, schema);
  t.add(frames);
  return t.result();
}

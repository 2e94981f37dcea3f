/**
 * Summaries of a time range: per op class (count, share, latency distribution) and per disk
 * (completed I/Os, records dropped, starts missed). Counts come from the frames themselves,
 * not from heat map matrices, because matrices are already class-filtered and a breakdown must
 * show every class so the user can pick one.
 */
import {
  type BucketSchema,
  addSparseInto,
  bucketCount,
  conservedCount,
  type DiskFrame,
  type Frame,
  type LatencyKind,
  phaseHist,
  untimedCount,
} from '@blkheat/shared-types';
import { ALL_REQUEST, type DiskKindOf } from './phase.js';
import { quantilesOf, type QuantileValue } from './percentiles.js';

export interface ClassSummary {
  readonly c: string;
  /** Completed I/Os (matches /proc/diskstats). */
  readonly n: number;
  /** Of n: failed I/Os (Σ `e`, protocol 2), and by block status. */
  readonly failed: number;
  readonly errors: Readonly<Record<string, number>>;
  /** Share of all completed I/Os in the range over the chosen disks (0..1). */
  readonly share: number;
  /** Latency histogram of the chosen phase (dense). */
  readonly hist: Float64Array;
  readonly quantiles: QuantileValue[];
}

export interface DiskSummary {
  readonly dev: string;
  /** I/Os /proc/diskstats counts: timed ones of counted classes plus untimed ones (see conservedCount). */
  readonly n: number;
  /** Of n: I/Os the kernel counted that no probe saw (protocol 2). */
  readonly untimed: number;
  /** Failed I/Os (in their classes' counts). */
  readonly failed: number;
  /** Passthrough commands (not in n). */
  readonly passthrough: number;
  /** Sum of the device-latency histogram (≤ n: I/Os whose start was not seen have no latency). */
  readonly timed: number;
  readonly dropped: number;
  readonly missed: number;
  /** Completed I/Os per class. */
  readonly byClass: Readonly<Record<string, number>>;
}

/**
 * Running totals behind the breakdowns, fed frames a slice at a time: a range of a big snapshot
 * can be summed across several short tasks (pipeline/visibleSummary.ts yields between slices) and give
 * what one call over all the frames gives. One pass per frame serves all three results.
 */
export class BreakdownTally {
  /** Per class over the chosen disks: completed and failed I/Os, failures by status, the latency histogram. */
  private readonly byClass = new Map<string, { count: number; failed: number; errors: Record<string, number>; hist: Float64Array }>();
  private classTotal = 0;
  private readonly disk = new Map<string, DiskAcc>();
  private readonly seen = new Set<string>();

  constructor(
    /** Frames in [from, to) are counted; class breakdowns only over `devs` (undefined = every disk). */
    private readonly opts: {
      readonly from: number;
      readonly to: number;
      readonly devs?: ReadonlySet<string> | undefined;
      readonly kind: LatencyKind;
      /** Each disk's kind, for phaseHist() (default: every disk request-based). */
      readonly diskKind?: DiskKindOf | undefined;
    },
    /** The schema of the frames' histograms. */
    private readonly schema: BucketSchema,
  ) {}

  /** Counts frames[start, end). Every frame names its classes for `allClasses`, in range or not. */
  add(frames: readonly Frame[], start = 0, end = frames.length): void {
    const { from, to, devs, kind } = this.opts;
    const diskKind = this.opts.diskKind ?? ALL_REQUEST;
    for (let i = start; i < end; i++) {
      const f = frames[i] as Frame;
      const inside = f.ts >= from && f.ts < to;
      for (const d of f.disks) {
        for (const c of d.cls) this.seen.add(c.c);
        if (!inside) continue;
        this.addDisk(d);
        if (!devs || devs.has(d.dev)) {
          const dk = diskKind(d.dev);
          for (const series of d.cls) {
            let a = this.byClass.get(series.c);
            if (!a) this.byClass.set(series.c, (a = { count: 0, failed: 0, errors: {}, hist: new Float64Array(bucketCount(this.schema)) }));
            a.count += series.n;
            if (series.e) {
              for (const [status, k] of Object.entries(series.e)) {
                a.failed += k;
                a.errors[status] = (a.errors[status] ?? 0) + k;
              }
            }
            this.classTotal += series.n;
            addSparseInto(a.hist, phaseHist(series, kind, dk));
          }
        }
      }
    }
  }

  private addDisk(disk: DiskFrame): void {
    let a = this.disk.get(disk.dev);
    if (!a) this.disk.set(disk.dev, (a = { n: 0, untimed: 0, failed: 0, passthrough: 0, timed: 0, dropped: 0, missed: 0, byClass: {} }));
    a.dropped += disk.dropped ?? 0;
    a.missed += disk.missed ?? 0;
    a.n += conservedCount(disk);
    a.untimed += untimedCount(disk);
    for (const cls of disk.cls) {
      if (cls.pt) a.passthrough += cls.n;
      if (cls.e) for (const k in cls.e) a.failed += cls.e[k] ?? 0;
      for (let k = 1; k < cls.d.length; k += 2) a.timed += cls.d[k] as number;
      a.byClass[cls.c] = (a.byClass[cls.c] ?? 0) + cls.n;
    }
  }

  /**
   * Per-class summary, sorted by count. Percentiles are worked out when first read: the table
   * lists the busiest classes only (model/rowCap.ts), and a snapshot's frames may name many
   * thousands between them (4,096 each): 122,880 classes' percentiles held the page 300 ms.
   */
  classes(): ClassSummary[] {
    const out: ClassSummary[] = [];
    const total = this.classTotal;
    const schema = this.schema;
    for (const [name, a] of this.byClass) {
      let quantiles: QuantileValue[] | undefined;
      out.push({
        c: name,
        n: a.count,
        failed: a.failed,
        errors: a.errors,
        share: total > 0 ? a.count / total : 0,
        hist: a.hist,
        get quantiles() {
          return (quantiles ??= quantilesOf(a.hist, schema));
        },
      });
    }
    out.sort((x, y) => y.n - x.n || (x.c < y.c ? -1 : x.c > y.c ? 1 : 0));
    return out;
  }

  /** Per-disk totals. */
  disks(): Map<string, DiskSummary> {
    const out = new Map<string, DiskSummary>();
    for (const [dev, a] of this.disk) out.set(dev, { dev, ...a });
    return out;
  }

  /** Every class name seen, sorted. */
  allClasses(): string[] {
    return [...this.seen].sort();
  }
}

type DiskAcc = { -readonly [K in Exclude<keyof DiskSummary, 'dev' | 'byClass'>]: number } & { byClass: Record<string, number> };

/** Per-class summary of frames in [from, to) over `devs` (undefined = every disk), sorted by count. */
export function classBreakdown(
  frames: readonly Frame[],
  opts: { from: number; to: number; devs?: ReadonlySet<string> | undefined; kind: LatencyKind; diskKind?: DiskKindOf | undefined },
  schema: BucketSchema,
): ClassSummary[] {
  const t = new BreakdownTally(opts, schema);
  t.add(frames);
  return t.classes();
}

/** Per-disk totals of frames in [from, to) (histograms of `schema`). */
export function diskSummaries(frames: readonly Frame[], from: number, to: number, schema: BucketSchema): Map<string, DiskSummary> {
  const t = new BreakdownTally({ from, to, kind: 'device' }, schema);
  t.add(frames);
  return t.disks();
}

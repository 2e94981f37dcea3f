/**
 * Summaries of a time range: per op class (count, share, latency distribution), over the chosen
 * disks together or per disk (issue 29: mixed, loop0's 15 ms reads hid under a fast disk's p50),
 * and per disk (completed I/Os, records dropped, starts missed, the busiest step's rate). Counts
 * come from the frames themselves, not from heat map matrices, because matrices are already
 * class-filtered and a breakdown must show every class so the user can pick one.
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
  /** Share of all completed I/Os in the range over the chosen disks (per disk: of that disk's) (0..1). */
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
 * A disk's busiest step in a range: its I/Os per second (n as /proc/diskstats counts, over the
 * step) and the step, in seconds: the peak beside a rate over the whole range. Apart from
 * DiskSummary, whose sums are the same at any step; a peak depends on the step it is read at.
 */
export interface DiskPeak {
  readonly rate: number;
  readonly step: number;
}

/** One class's running totals on one disk. */
interface ClassAcc {
  count: number;
  failed: number;
  errors: Record<string, number>;
  hist: Float64Array;
}

/** What a BreakdownTally counts. */
interface BreakdownRange {
  /** Frames in [from, to) are counted; class breakdowns only over `devs` (undefined = every disk). */
  readonly from: number;
  readonly to: number;
  readonly devs?: ReadonlySet<string> | undefined;
  readonly kind: LatencyKind;
  /** Each disk's kind, for phaseHist() (default: every disk request-based). */
  readonly diskKind?: DiskKindOf | undefined;
  /** Results copy the running totals, so frames added later leave them as read (model/summary.ts RunningSummary). */
  readonly detached?: boolean | undefined;
}

/**
 * Running totals behind the breakdowns, fed frames a slice at a time: a range of a big snapshot
 * can be summed across several short tasks (pipeline/visibleSummary.ts yields between slices) and give
 * what one call over all the frames gives. One pass per frame serves all three results. A live
 * range's start may move on (startAt): what the frames it leaves out added is taken back, so the
 * totals are those of the frames left, as summing them afresh gives.
 */
export class BreakdownTally {
  /**
   * Per chosen disk, per class: completed and failed I/Os, failures by status, the latency
   * histogram. The table over every chosen disk sums them when read (classes()).
   */
  private readonly byDiskClass = new Map<string, Map<string, ClassAcc>>();
  /** classes() as last worked out (dropped by add()): with one disk, its table is the same list. */
  private together: ClassSummary[] | undefined;
  private readonly disk = new Map<string, DiskAcc>();
  /** A running (detached) tally, per disk: its disk-frames in the range, and per class the series of them that named it (a total goes when nothing is left in it). */
  private readonly diskFrames = new Map<string, number>();
  private readonly classSeries = new Map<string, Map<string, number>>();
  /** Per disk: its busiest steps in the range, in the order fed, each busier than every one after it (peaks() reads the first). */
  private readonly peak = new Map<string, PeakCandidate[]>();
  /** Every class named by a frame fed, with how many disk-frames named it (forget() takes them back). */
  private readonly seen = new Map<string, number>();

  constructor(
    private opts: BreakdownRange,
    /** The schema of the frames' histograms. */
    private readonly schema: BucketSchema,
  ) {}

  /** Counts frames[start, end). Every frame names its classes for `allClasses`, in range or not. */
  add(frames: readonly Frame[], start = 0, end = frames.length): void {
    this.count(frames, start, end, this.opts.from, this.opts.to, 1);
  }

  /**
   * The range starts at `from` from now on (not before its start): what the frames fed before it
   * added is taken back. `fed`: every frame fed so far, in the order fed, those of the range
   * before `from` ahead of the rest of the range (a live window's, in time order).
   */
  startAt(fed: readonly Frame[], from: number): void {
    if (from < this.opts.from) throw new Error(`BreakdownTally.startAt: ${from} is before the range's start ${this.opts.from}`);
    if (this.opts.detached !== true) throw new Error('BreakdownTally.startAt: only a detached (running) tally moves its start');
    this.count(fed, 0, fed.length, this.opts.from, Math.min(from, this.opts.to), -1);
    this.opts = { ...this.opts, from };
  }

  /**
   * Adds (sign 1) or takes back (−1) what the frames in [from, to) of frames[start, end) count;
   * frames added name their classes too, in the range or not (one pass for both).
   */
  private count(frames: readonly Frame[], start: number, end: number, from: number, to: number, sign: 1 | -1): void {
    const { devs, kind } = this.opts;
    const diskKind = this.opts.diskKind ?? ALL_REQUEST;
    this.together = undefined;
    for (let i = start; i < end; i++) {
      const f = frames[i] as Frame;
      if (sign > 0) for (const d of f.disks) for (const c of d.cls) this.seen.set(c.c, (this.seen.get(c.c) ?? 0) + 1);
      if (f.ts < from || f.ts >= to) continue;
      for (const d of f.disks) {
        this.addDisk(d, f.step, sign);
        if (!devs || devs.has(d.dev)) {
          const dk = diskKind(d.dev);
          let classes = this.byDiskClass.get(d.dev);
          if (!classes) this.byDiskClass.set(d.dev, (classes = new Map()));
          for (const series of d.cls) {
            let a = classes.get(series.c);
            if (!a) classes.set(series.c, (a = { count: 0, failed: 0, errors: {}, hist: new Float64Array(bucketCount(this.schema)) }));
            a.count += sign * series.n;
            if (series.e) {
              for (const [status, k] of Object.entries(series.e)) {
                // A status with no failure is not listed (so taking one back leaves what a fresh sum has).
                if (k === 0) continue;
                a.failed += sign * k;
                const left = (a.errors[status] ?? 0) + sign * k;
                if (left !== 0) a.errors[status] = left;
                else delete a.errors[status];
              }
            }
            addSparseInto(a.hist, phaseHist(series, kind, dk), sign);
          }
        }
        // Only a running tally's start moves (a snapshot's thousands of classes a disk are summed once).
        if (this.opts.detached === true) this.release(d, sign);
      }
    }
  }

  /** Counts the disk-frame's own and its classes' series in (sign 1) or out (−1); a disk or class with none left goes. */
  private release(disk: DiskFrame, sign: 1 | -1): void {
    const dev = disk.dev;
    let series = this.classSeries.get(dev);
    if (!series) this.classSeries.set(dev, (series = new Map()));
    for (const cls of disk.cls) {
      const left = (series.get(cls.c) ?? 0) + sign;
      if (left > 0) series.set(cls.c, left);
      else {
        series.delete(cls.c);
        delete this.disk.get(dev)?.byClass[cls.c];
        this.byDiskClass.get(dev)?.delete(cls.c);
      }
    }
    const frames = (this.diskFrames.get(dev) ?? 0) + sign;
    if (frames > 0) this.diskFrames.set(dev, frames);
    else {
      for (const m of [this.diskFrames, this.classSeries, this.disk, this.byDiskClass, this.peak]) m.delete(dev);
    }
  }

  private addDisk(disk: DiskFrame, step: number, sign: 1 | -1): void {
    let a = this.disk.get(disk.dev);
    if (!a) this.disk.set(disk.dev, (a = { n: 0, untimed: 0, failed: 0, passthrough: 0, timed: 0, dropped: 0, missed: 0, byClass: {} }));
    a.dropped += sign * (disk.dropped ?? 0);
    a.missed += sign * (disk.missed ?? 0);
    const n = conservedCount(disk);
    a.n += sign * n;
    if (step > 0 && n / step > 0) this.notePeak(disk, n / step, step, sign);
    a.untimed += sign * untimedCount(disk);
    for (const cls of disk.cls) {
      if (cls.pt) a.passthrough += sign * cls.n;
      if (cls.e) for (const k in cls.e) a.failed += sign * (cls.e[k] ?? 0);
      for (let k = 1; k < cls.d.length; k += 2) a.timed += sign * (cls.d[k] as number);
      a.byClass[cls.c] = (a.byClass[cls.c] ?? 0) + sign * cls.n;
    }
  }

  /**
   * The busiest step, as a sliding maximum: a step joins at the back once every busier-or-equal
   * one before it stays ahead (the first of equal peaks is the peak, as a fresh sum finds it), and
   * leaves from the front when the range's start passes it (steps leave in the order they came).
   */
  private notePeak(disk: DiskFrame, rate: number, step: number, sign: 1 | -1): void {
    let list = this.peak.get(disk.dev);
    if (!list) this.peak.set(disk.dev, (list = []));
    if (sign < 0) {
      if (list[0]?.disk === disk) list.shift();
      return;
    }
    while (list.length > 0 && (list[list.length - 1] as PeakCandidate).rate < rate) list.pop();
    list.push({ disk, rate, step });
  }

  /** Per-class summary over every chosen disk, sorted by count. */
  classes(): ClassSummary[] {
    return (this.together ??= this.classesTogether());
  }

  private classesTogether(): ClassSummary[] {
    const disks = [...this.byDiskClass.values()];
    const detached = this.opts.detached === true;
    if (disks.length <= 1) return classSummaries(disks[0] ?? new Map<string, ClassAcc>(), this.schema, detached);
    const parts = new Map<string, ClassAcc[]>();
    for (const classes of disks)
      for (const [name, a] of classes) {
        let list = parts.get(name);
        if (!list) parts.set(name, (list = []));
        list.push(a);
      }
    // Summed per class; a class seen on one disk only keeps that disk's totals (no copy).
    const merged = new Map<string, ClassAcc>();
    for (const [name, list] of parts) merged.set(name, list.length === 1 ? (list[0] as ClassAcc) : sumClasses(list));
    return classSummaries(merged, this.schema, detached);
  }

  /** Per chosen disk: its classes, each with its share of the disk's I/Os, sorted by count. */
  classesByDisk(): Map<string, ClassSummary[]> {
    const out = new Map<string, ClassSummary[]>();
    // One disk: the table over the disks is its own (a snapshot may name 4,096 classes: not twice).
    if (this.byDiskClass.size === 1) for (const dev of this.byDiskClass.keys()) out.set(dev, this.classes());
    else for (const [dev, classes] of this.byDiskClass) out.set(dev, classSummaries(classes, this.schema, this.opts.detached === true));
    return out;
  }

  /** Per-disk totals. */
  disks(): Map<string, DiskSummary> {
    const out = new Map<string, DiskSummary>();
    for (const [dev, a] of this.disk) out.set(dev, { dev, ...a, byClass: { ...a.byClass } });
    return out;
  }

  /** Per disk with I/O: its busiest step. */
  peaks(): Map<string, DiskPeak> {
    const out = new Map<string, DiskPeak>();
    for (const [dev, list] of this.peak) if (list[0]) out.set(dev, { rate: list[0].rate, step: list[0].step });
    return out;
  }

  /**
   * Takes back frames[start, end), fed before and all outside the range (a live window dropped
   * them from its front): they counted only as naming their classes.
   */
  forget(frames: readonly Frame[], start: number, end: number): void {
    const { from, to } = this.opts;
    for (let i = start; i < end; i++) {
      const f = frames[i] as Frame;
      if (f.ts >= from && f.ts < to) throw new Error(`BreakdownTally.forget: the frame at ${f.ts} is in the range`);
      for (const d of f.disks)
        for (const c of d.cls) {
          const n = (this.seen.get(c.c) ?? 0) - 1;
          if (n > 0) this.seen.set(c.c, n);
          else this.seen.delete(c.c);
        }
    }
  }

  /** Every class name seen, sorted. */
  allClasses(): string[] {
    return [...this.seen.keys()].sort();
  }
}

/** The totals of one class over several disks. */
function sumClasses(list: readonly ClassAcc[]): ClassAcc {
  const first = list[0] as ClassAcc;
  const sum: ClassAcc = { count: 0, failed: 0, errors: {}, hist: new Float64Array(first.hist.length) };
  for (const a of list) {
    sum.count += a.count;
    sum.failed += a.failed;
    for (const [status, k] of Object.entries(a.errors)) sum.errors[status] = (sum.errors[status] ?? 0) + k;
    for (let i = 0; i < sum.hist.length; i++) sum.hist[i] = (sum.hist[i] as number) + (a.hist[i] as number);
  }
  return sum;
}

/**
 * Class summaries of running totals, each with its share of their I/Os, sorted by count.
 * Percentiles are worked out when first read: the table lists the busiest classes only
 * (model/rowCap.ts), and a snapshot's frames may name many thousands between them (4,096 each):
 * 122,880 classes' percentiles held the page 300 ms. `detached`: each histogram and error count
 * is a copy, not the running total (which frames added later change).
 */
function classSummaries(classes: ReadonlyMap<string, ClassAcc>, schema: BucketSchema, detached: boolean): ClassSummary[] {
  let total = 0;
  for (const a of classes.values()) total += a.count;
  const out: ClassSummary[] = [];
  for (const [name, a] of classes) {
    let quantiles: QuantileValue[] | undefined;
    const hist = detached ? a.hist.slice() : a.hist;
    out.push({
      c: name,
      n: a.count,
      failed: a.failed,
      errors: detached ? { ...a.errors } : a.errors,
      share: total > 0 ? a.count / total : 0,
      hist,
      get quantiles() {
        return (quantiles ??= quantilesOf(hist, schema));
      },
    });
  }
  out.sort((x, y) => y.n - x.n || (x.c < y.c ? -1 : x.c > y.c ? 1 : 0));
  return out;
}

/** A step that is or may become a disk's busiest (BreakdownTally.notePeak). */
interface PeakCandidate {
  readonly disk: DiskFrame;
  readonly rate: number;
  readonly step: number;
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

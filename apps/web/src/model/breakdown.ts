/**
 * Summaries of a time range: per op class (count, share, latency distribution) and per disk
 * (completed I/Os, records dropped, starts missed). Counts come from the frames themselves,
 * not from heat map matrices, because matrices are already class-filtered and a breakdown must
 * show every class so the user can pick one.
 */
import {
  type BucketSchema,
  BUCKET_SCHEMA,
  addSparseInto,
  bucketCount,
  conservedCount,
  type Frame,
  type LatencyKind,
  untimedCount,
} from '@blkheat/shared-types';
import { quantilesOf, type QuantileValue } from './percentiles.js';

export interface ClassSummary {
  readonly c: string;
  /** Completed I/Os (matches /proc/diskstats). */
  readonly n: number;
  /** Share of all completed I/Os in the range over the chosen disks (0..1). */
  readonly share: number;
  /** Latency histogram of the chosen kind (dense). */
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

function inRange(f: Frame, from: number, to: number): boolean {
  return f.ts >= from && f.ts < to;
}

/** Per-class summary of frames in [from, to) over `devs` (undefined = every disk), sorted by count. */
export function classBreakdown(
  frames: readonly Frame[],
  opts: { from: number; to: number; devs?: ReadonlySet<string> | undefined; kind: LatencyKind },
  schema: BucketSchema = BUCKET_SCHEMA,
): ClassSummary[] {
  const acc = new Map<string, { n: number; hist: Float64Array }>();
  let total = 0;
  for (const f of frames) {
    if (!inRange(f, opts.from, opts.to)) continue;
    for (const disk of f.disks) {
      if (opts.devs && !opts.devs.has(disk.dev)) continue;
      for (const cls of disk.cls) {
        let a = acc.get(cls.c);
        if (!a) acc.set(cls.c, (a = { n: 0, hist: new Float64Array(bucketCount(schema)) }));
        a.n += cls.n;
        total += cls.n;
        addSparseInto(a.hist, opts.kind === 'device' ? cls.d : cls.q);
      }
    }
  }
  const out: ClassSummary[] = [];
  for (const [c, a] of acc) {
    out.push({ c, n: a.n, share: total > 0 ? a.n / total : 0, hist: a.hist, quantiles: quantilesOf(a.hist, undefined, schema) });
  }
  out.sort((x, y) => y.n - x.n || (x.c < y.c ? -1 : x.c > y.c ? 1 : 0));
  return out;
}

/** Per-disk totals of frames in [from, to). */
export function diskSummaries(frames: readonly Frame[], from: number, to: number): Map<string, DiskSummary> {
  type Acc = { -readonly [K in Exclude<keyof DiskSummary, 'dev' | 'byClass'>]: number } & { byClass: Record<string, number> };
  const acc = new Map<string, Acc>();
  for (const f of frames) {
    if (!inRange(f, from, to)) continue;
    for (const disk of f.disks) {
      let a = acc.get(disk.dev);
      if (!a) acc.set(disk.dev, (a = { n: 0, untimed: 0, failed: 0, passthrough: 0, timed: 0, dropped: 0, missed: 0, byClass: {} }));
      a.dropped += disk.dropped ?? 0;
      a.missed += disk.missed ?? 0;
      a.n += conservedCount(disk);
      a.untimed += untimedCount(disk);
      for (const cls of disk.cls) {
        if (cls.pt) a.passthrough += cls.n;
        for (const e of Object.values(cls.e ?? {})) a.failed += e;
        for (let k = 1; k < cls.d.length; k += 2) a.timed += cls.d[k] as number;
        a.byClass[cls.c] = (a.byClass[cls.c] ?? 0) + cls.n;
      }
    }
  }
  const out = new Map<string, DiskSummary>();
  for (const [dev, a] of acc) out.set(dev, { dev, ...a });
  return out;
}

/** Every class name seen in the frames, sorted. */
export function classesIn(frames: readonly Frame[]): string[] {
  const set = new Set<string>();
  for (const f of frames) for (const d of f.disks) for (const c of d.cls) set.add(c.c);
  return [...set].sort();
}

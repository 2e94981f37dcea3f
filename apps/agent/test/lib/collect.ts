/**
 * Test helpers around a real collector on the real kernel: gather its frames and samples,
 * wait for a given second, find quiet second boundaries for exact diskstats comparisons.
 */
import {
  addSparseInto,
  classOp,
  conservedCount,
  denseHist,
  type DiskFrame,
  type Frame,
  type IoSample,
  lowerBoundSeconds,
  type SparseHist,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { completionWitness as kitCompletionWitness, sleep, type CleanupContext, type CompletionWitness } from '@blkheat/testkit';
import { createCollector, type Collector, type CollectorOptions } from '../../src/collector/index.js';
import { kernelFactsOf } from '../../src/collector/host/kernel-facts.js';

export interface Recording {
  readonly collector: Collector;
  readonly frames: Frame[];
  readonly samples: IoSample[];
  /** Samples by the second whose frame they were emitted with (the collector's attribution). */
  readonly samplesBySecond: Map<number, IoSample[]>;
  /** Resolves once the frame of `second` has been emitted. */
  waitForSecond(second: number, timeoutMs?: number): Promise<void>;
}

/**
 * Where an I/O could have gone missing, for assertion messages: completions no program run saw
 * (recursion misses), entries lost between the kernel and the harvest, and the kernel counters.
 */
export function lossReport(collector: Collector): string {
  const { recursionMisses, harvestLost, lateIos, kernel } = collector.stats();
  return `recursion misses ${recursionMisses}, lost between kernel and harvest ${harvestLost}, late ${lateIos}, kernel counters ${JSON.stringify(kernel)}`;
}

/**
 * ftrace's witness of one disk's completions (testkit's completionWitness) on this kernel: it
 * knows whether the kernel hides pid 1's context from BPF (KernelFacts.hidesInitContext).
 */
export function completionWitness(t: CleanupContext, disk: { readonly name: string; readonly dev: string }): CompletionWitness {
  return kitCompletionWitness(t, disk, kernelFactsOf(undefined).hidesInitContext);
}

export async function record(t: CleanupContext, options: CollectorOptions = {}): Promise<Recording> {
  const collector = await createCollector(options);
  t.after(() => collector.close());
  const frames: Frame[] = [];
  const samples: IoSample[] = [];
  const samplesBySecond = new Map<number, IoSample[]>();
  let pending: IoSample[] = [];
  collector.listen({
    samples: (s) => {
      samples.push(...s);
      pending.push(...s);
    },
    frame: (f) => {
      frames.push(f);
      samplesBySecond.set(f.ts, pending);
      pending = [];
    },
  });
  return {
    collector,
    frames,
    samples,
    samplesBySecond,
    async waitForSecond(second, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      while (!frames.some((f) => f.ts >= second)) {
        if (Date.now() > end) throw new Error(`no frame for second ${second} within ${timeoutMs} ms (last: ${frames.at(-1)?.ts})`);
        await sleep(50);
      }
    },
  };
}

/** What disk `dev` did in each second from `from` to `last`, both included, in frame order. */
export function* diskSeconds(frames: readonly Frame[], dev: string, from: number, last: number): Generator<DiskFrame> {
  for (const f of frames) {
    if (f.ts < from || f.ts > last) continue;
    for (const d of f.disks) if (d.dev === dev) yield d;
  }
}

/** I/O counts and their summed dense latency histogram, by group (cgroup, size class, ...). */
export type GroupTotals<K> = Map<K, { n: number; d: Float64Array }>;

/** Adds `n` I/Os with sparse latency histogram `d` to group `key`. */
export function addToGroup<K>(groups: GroupTotals<K>, key: K, n: number, d: SparseHist): void {
  let acc = groups.get(key);
  if (!acc) groups.set(key, (acc = { n: 0, d: denseHist() }));
  acc.n += n;
  addSparseInto(acc.d, d);
}

/** Completed I/Os per disk dev over frames with from <= ts < to, as /proc/diskstats counts them (timed + untimed). */
export function countsByDisk(frames: readonly Frame[], from: number, to: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    for (const d of f.disks) out.set(d.dev, (out.get(d.dev) ?? 0) + conservedCount(d));
  }
  return out;
}

/** One class's totals: count, dense histograms of each phase, and I/Os whose submission was not seen. */
export interface ClassTotal {
  n: number;
  readonly d: Float64Array;
  readonly q: Float64Array;
  readonly w: Float64Array;
  readonly t: Float64Array;
  wu: number;
}

/** Per class of one disk: count and summed dense device/queue/submit/total histograms over [from, to). */
export function classTotals(frames: readonly Frame[], dev: string, from = 0, to = Infinity): Map<string, ClassTotal> {
  const out = new Map<string, ClassTotal>();
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    for (const disk of f.disks) {
      if (disk.dev !== dev) continue;
      for (const c of disk.cls) {
        let acc = out.get(c.c);
        if (!acc) out.set(c.c, (acc = { n: 0, d: denseHist(), q: denseHist(), w: denseHist(), t: denseHist(), wu: 0 }));
        acc.n += c.n;
        addSparseInto(acc.d, c.d);
        addSparseInto(acc.q, c.q);
        addSparseInto(acc.w, c.w ?? []);
        addSparseInto(acc.t, c.t ?? []);
        acc.wu += c.wu ?? 0;
      }
    }
  }
  return out;
}

/** The reads of a disk over [from, to): every read class summed. */
export function readTotals(totals: Map<string, ClassTotal>): ClassTotal {
  const sum = (pick: (c: ClassTotal) => Float64Array): Float64Array => {
    const out = new Float64Array(pick([...totals.values()][0] as ClassTotal).length);
    for (const [cls, c] of totals) if (classOp(cls) === 'Read') pick(c).forEach((v, i) => (out[i] = (out[i] as number) + v));
    return out;
  };
  const reads = [...totals].filter(([cls]) => classOp(cls) === 'Read').map(([, c]) => c);
  return {
    n: reads.reduce((n, c) => n + c.n, 0),
    wu: reads.reduce((n, c) => n + c.wu, 0),
    d: sum((c) => c.d),
    q: sum((c) => c.q),
    w: sum((c) => c.w),
    t: sum((c) => c.t),
  };
}

/** Seconds as milliseconds, one decimal: "12.3 ms". */
export const ms = (s: number): string => `${(s * 1e3).toFixed(1)} ms`;
/** A latency bucket as its bounds: "(10.0 ms, 11.9 ms]". */
export const bucketText = (k: number): string => `(${ms(lowerBoundSeconds(k))}, ${ms(upperBoundSeconds(k))}]`;

// Quiet boundaries and per-group counts live in testkit (bench/soak uses them too).
export { groupCountsByDisk, quietBoundary, type QuietBoundary } from '@blkheat/testkit';

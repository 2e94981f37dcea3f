/**
 * Test helpers around a real collector on the real kernel: gather its frames and samples,
 * wait for a given second, find quiet second boundaries for exact diskstats comparisons.
 */
import {
  addSparseInto,
  classOp,
  conservedCount,
  denseHist,
  OP_GROUPS,
  type Frame,
  type IoSample,
  type OpGroup,
} from '@blkheat/shared-types';
import { readDiskstats, completedRequests, sleep, type CleanupContext, type DiskStats } from '@blkheat/testkit';
import { createCollector, type Collector, type CollectorOptions } from '../../src/collector/index.js';

export interface Recording {
  readonly collector: Collector;
  readonly frames: Frame[];
  readonly samples: IoSample[];
  /** Samples by the second whose frame they were emitted with (the collector's attribution). */
  readonly samplesBySecond: Map<number, IoSample[]>;
  /** Resolves once the frame of `second` has been emitted. */
  waitForSecond(second: number, timeoutMs?: number): Promise<void>;
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

/** Completed I/Os per disk dev over frames with from <= ts < to, as /proc/diskstats counts them (timed + untimed). */
export function countsByDisk(frames: readonly Frame[], from: number, to: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    for (const d of f.disks) out.set(d.dev, (out.get(d.dev) ?? 0) + conservedCount(d));
  }
  return out;
}

/** Per class of one disk: count and summed dense device/queue histograms over [from, to). */
export function classTotals(
  frames: readonly Frame[],
  dev: string,
  from = 0,
  to = Infinity,
): Map<string, { n: number; d: Float64Array; q: Float64Array }> {
  const out = new Map<string, { n: number; d: Float64Array; q: Float64Array }>();
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    for (const disk of f.disks) {
      if (disk.dev !== dev) continue;
      for (const c of disk.cls) {
        let acc = out.get(c.c);
        if (!acc) out.set(c.c, (acc = { n: 0, d: denseHist(), q: denseHist() }));
        acc.n += c.n;
        addSparseInto(acc.d, c.d);
        addSparseInto(acc.q, c.q);
      }
    }
  }
  return out;
}

export interface QuietBoundary {
  /** Unix second starting at the boundary. */
  readonly second: number;
  /** /proc/diskstats read just after it. */
  readonly stats: Map<string, DiskStats>;
}

/**
 * A wall-clock second boundary with no I/O completing on the named disks within `marginMs`
 * of it on either side, and /proc/diskstats as of that boundary. Comparing frame sums between
 * two such boundaries with diskstats deltas is then exact, whatever the disks do in between.
 */
export async function quietBoundary(names: readonly string[], marginMs = 4, attempts = 30): Promise<QuietBoundary> {
  for (let i = 0; i < attempts; i++) {
    const boundary = (Math.floor(Date.now() / 1000) + 1) * 1000;
    await sleep(boundary - marginMs - Date.now());
    const before = readDiskstats();
    await sleep(Math.max(0, boundary + marginMs - Date.now()));
    const after = readDiskstats();
    if (Date.now() > boundary + 3 * marginMs) continue; // woke up too late to trust the window
    const quiet = names.every((n) => {
      const a = before.get(n);
      const b = after.get(n);
      return a !== undefined && b !== undefined && completedRequests(a) === completedRequests(b) && b.inFlight === 0;
    });
    if (quiet) return { second: boundary / 1000, stats: after };
  }
  throw new Error(`no quiet second boundary on ${names.join(', ')} in ${attempts} s`);
}

/**
 * Per disk and /proc/diskstats op group, over frames with from <= ts < to: the I/Os counted in
 * classes diskstats counts (not `pt`), and the untimed ones. By class name, which is enough for
 * the ops tests make (Read, Write, Flush, Discard); the agent itself groups by op value.
 */
export function groupCountsByDisk(
  frames: readonly Frame[],
  from: number,
  to: number,
): Map<string, { counted: Record<OpGroup, number>; untimed: Record<OpGroup, number> }> {
  const out = new Map<string, { counted: Record<OpGroup, number>; untimed: Record<OpGroup, number> }>();
  const zero = (): Record<OpGroup, number> => ({ read: 0, write: 0, discard: 0, flush: 0 });
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    for (const d of f.disks) {
      let acc = out.get(d.dev);
      if (!acc) out.set(d.dev, (acc = { counted: zero(), untimed: zero() }));
      for (const c of d.cls) {
        if (c.pt) continue;
        const op = classOp(c.c);
        const g: OpGroup = op === 'Read' ? 'read' : op === 'Flush' ? 'flush' : op === 'Discard' ? 'discard' : 'write';
        acc.counted[g] += c.n;
      }
      for (const g of OP_GROUPS) acc.untimed[g] += d.untimed?.[g] ?? 0;
    }
  }
  return out;
}

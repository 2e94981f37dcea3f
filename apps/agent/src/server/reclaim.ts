/**
 * Memory given back after a burst of client work: backfill churn, snapshots nobody read, a
 * flood of junk messages. What a burst leaves is garbage (answers written, buffers of sockets
 * gone), and an agent that is idle afterwards allocates little, so nothing would give it back:
 * without this, 100 unread snapshots leave the agent 90 MiB bigger for good. The steps:
 *
 * - Full garbage collections, two checks apart (see finishReclaim). V8 may otherwise leave the
 *   garbage for minutes. Node offers no collection without --expose-gc at start; the flag set
 *   at run time exposes `gc` to a new context, which is what this takes.
 * - Then the C heap's free pages, which the collections have just freed (Buffers live there):
 *   the C library keeps them for reuse until asked (the caller passes the addon's
 *   releaseFreeHeap: server/ never touches the BPF addon itself).
 *
 * When: the process stands RECLAIM_GROWTH_BYTES above its mark (watched every
 * RECLAIM_CHECK_MS, a read of /proc/self/statm) and the history reads are idle. A collection
 * costs tens of ms, so there are RECLAIM_MIN_GAP_MS at least between two. Memory that was
 * really needed (history caches filling) is found so by a reclaim that gives little back: it
 * becomes the new mark, and is not collected for again until the process grows past it. A
 * reclaim in the middle of a burst leaves the mark where it was, so the end of the burst gets
 * its own.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const RECLAIM_GROWTH_BYTES = 16 * 1024 * 1024;
export const RECLAIM_CHECK_MS = 2000;
export const RECLAIM_MIN_GAP_MS = 10_000;
export const RECLAIM_WORTH_BYTES = 8 * 1024 * 1024;

export interface ReclaimOptions {
  /** True while client work is under way (history reads): reclaiming waits for it to end. */
  readonly busy: () => boolean;
  /** Gives the C heap's free pages back (the addon's releaseFreeHeap); absent: collection only. */
  readonly releaseFreeHeap?: (() => boolean) | undefined;
  readonly log: (line: string) => void;
  /** For tests: the process's resident bytes, and a full collection. */
  readonly rss?: () => number;
  readonly collect?: () => void;
}

export class MemoryReclaimer {
  /**
   * The RSS the agent is expected to come back to: where it started, or the lowest seen since.
   * A reclaim that gives back less than RECLAIM_WORTH_BYTES raises it to where the reclaim
   * left the agent: that memory is in use (history caches, the sample ring), not garbage.
   */
  private mark: number;
  private lastAt = -Infinity;
  private trimBroken = false;
  /** A reclaim under way: the RSS it started from, and its next step (one per check). */
  private pending: { readonly before: number; next: 'compact' | 'trim' } | undefined;
  private readonly timer: NodeJS.Timeout;
  private counters = { reclaims: 0, releasedBytes: 0 };

  private readonly rss: () => number;
  private readonly collect: () => void;

  constructor(private readonly options: ReclaimOptions) {
    this.rss = options.rss ?? (() => process.memoryUsage.rss());
    this.collect = options.collect ?? (() => void collectGarbage());
    this.mark = this.rss();
    this.timer = setInterval(() => this.check(), RECLAIM_CHECK_MS);
    this.timer.unref();
  }

  /** Reclaims done, and the RSS they gave back in all. */
  stats(): { readonly reclaims: number; readonly releasedBytes: number } {
    return { ...this.counters };
  }

  close(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    if (this.pending?.next === 'compact') {
      this.collect();
      this.pending.next = 'trim';
      return;
    }
    if (this.pending) {
      this.finishReclaim(this.pending.before);
      this.pending = undefined;
      return;
    }
    const rss = this.rss();
    if (rss < this.mark) this.mark = rss;
    if (rss < this.mark + RECLAIM_GROWTH_BYTES || this.options.busy()) return;
    if (Date.now() - this.lastAt < RECLAIM_MIN_GAP_MS) return;
    this.lastAt = Date.now();
    this.collect();
    this.pending = { before: rss, next: 'compact' };
  }

  /**
   * A reclaim takes three checks. The first collects. At the second, V8 has swept what that
   * freed (on threads of its own), so another collection can compact the old space's pages,
   * not only free objects in them (after backfill churn, one collection leaves 145-150 MiB, two
   * leave 124). At the third, the Buffers both freed are back in the C heap (V8 frees their
   * memory on a thread of its own, after the collection), and its free pages go back to the
   * system.
   */
  private finishReclaim(before: number): void {
    if (this.options.releaseFreeHeap && !this.trimBroken) {
      try {
        this.options.releaseFreeHeap();
      } catch (e) {
        // The addon not built: memory is then only as good as the collection makes it, said once.
        this.trimBroken = true;
        this.options.log(`serve: cannot give freed memory back to the system: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const after = this.rss();
    this.counters.reclaims++;
    this.counters.releasedBytes += Math.max(0, before - after);
    if (before - after < RECLAIM_WORTH_BYTES) this.mark = after;
  }
}

let collect: (() => void) | null | undefined;

/** Runs a full collection; false where the runtime offers none. */
export function collectGarbage(): boolean {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const gc: unknown = runInNewContext('gc');
      collect = typeof gc === 'function' ? () => void gc() : null;
    } catch {
      collect = null;
    }
  }
  if (!collect) return false;
  collect();
  return true;
}

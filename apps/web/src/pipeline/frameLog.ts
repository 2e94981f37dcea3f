/**
 * A time-ordered list of frames with one entry per start second, plus which span of seconds
 * is known to be complete ("covered": every second in it was sent, so an absent frame means
 * the second was not recorded; see model/gaps.ts). Used for the live buffer (1 s frames, trimmed to a maximum age) and for an
 * imported snapshot (its own step, never trimmed).
 * In pipeline/: the source (source.ts) holds both logs.
 */
import type { Frame } from '@blkheat/shared-types';

export class FrameLog {
  private list: Frame[] = [];
  /** Seconds [coveredFrom, coveredTo) are complete. */
  coveredFrom: number | undefined;
  coveredTo: number | undefined;
  /** Bumped on every change. */
  version = 0;

  constructor(readonly maxAge = Infinity) {}

  get frames(): readonly Frame[] {
    return this.list;
  }

  get size(): number {
    return this.list.length;
  }

  get last(): Frame | undefined {
    return this.list[this.list.length - 1];
  }

  /** Inserts frames (any order); a second already present is kept as is. Returns the new ones. */
  insert(frames: readonly Frame[]): Frame[] {
    const added: Frame[] = [];
    for (const f of frames) {
      const last = this.list[this.list.length - 1];
      if (!last || f.ts > last.ts) {
        this.list.push(f);
        added.push(f);
        continue;
      }
      const i = this.lowerBound(f.ts);
      if (this.list[i]?.ts === f.ts) continue;
      this.list.splice(i, 0, f);
      added.push(f);
    }
    if (added.length > 0) {
      this.version++;
      this.trim();
    }
    return added;
  }

  /** Records that [from, to) is complete; extends the covered span when contiguous with it. */
  cover(from: number, to: number): void {
    if (this.coveredFrom === undefined || this.coveredTo === undefined || from > this.coveredTo || to < this.coveredFrom) {
      // Disjoint (first call, or after data was lost for good): the newer span wins.
      if (this.coveredTo === undefined || to >= this.coveredTo) {
        this.coveredFrom = from;
        this.coveredTo = to;
      }
    } else {
      this.coveredFrom = Math.min(this.coveredFrom, from);
      this.coveredTo = Math.max(this.coveredTo, to);
    }
    this.version++;
    this.trim();
  }

  /** True when every second of [from, to) is known. */
  covers(from: number, to: number): boolean {
    return this.coveredFrom !== undefined && this.coveredTo !== undefined && this.coveredFrom <= from && to <= this.coveredTo;
  }

  /** Frames with from ≤ ts < to. */
  range(from: number, to: number): Frame[] {
    return this.list.slice(this.lowerBound(from), this.lowerBound(to));
  }

  clear(): void {
    this.list = [];
    this.coveredFrom = undefined;
    this.coveredTo = undefined;
    this.version++;
  }

  /** Index of the first frame with ts ≥ t. */
  private lowerBound(t: number): number {
    let lo = 0;
    let hi = this.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.list[mid] as Frame).ts < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private trim(): void {
    if (!Number.isFinite(this.maxAge)) return;
    const newest = Math.max(this.coveredTo ?? -Infinity, (this.last?.ts ?? -Infinity) + 1);
    const cutoff = newest - this.maxAge;
    const i = this.lowerBound(cutoff);
    if (i > 0) this.list.splice(0, i);
    if (this.coveredFrom !== undefined && this.coveredFrom < cutoff) this.coveredFrom = cutoff;
  }
}

/**
 * Sample budget control. The kernel keeps, per second, up to `outlierBudget` records of I/Os
 * that reach a new highest bucket (the slowest are always kept) and up to `fairBudget` records
 * chosen at random with probability fairThreshold / 2^32. The agent sets that probability from
 * the previous second's I/O rate, resets the budget counters ahead of time, and enforces the
 * total per second again on its side (a safety net for the kernel's reset race).
 */

import type { IoSample } from '@blkheat/shared-types';

export class SampleBudget {
  readonly outlierBudget: number;
  readonly fairBudget: number;

  constructor(readonly perSecond: number) {
    if (!Number.isInteger(perSecond) || perSecond < 0)
      throw new RangeError(`sample budget must be a non-negative integer, got ${perSecond}`);
    this.outlierBudget = perSecond === 0 ? 0 : Math.max(1, Math.floor(perSecond / 4));
    this.fairBudget = perSecond - this.outlierBudget;
  }

  /** Random-sampling threshold (u32) for a second expected to complete `expectedIos` I/Os. */
  fairThreshold(expectedIos: number): number {
    if (this.fairBudget === 0) return 0;
    if (expectedIos <= this.fairBudget) return 0xffffffff;
    return Math.floor((this.fairBudget / expectedIos) * 0xffffffff) >>> 0;
  }
}

/**
 * The agent's side of the per-second budget: the records kept for each second until that
 * second's frame goes out, and per disk the records refused because the second's budget was
 * spent. The kernel's per-second cap can overshoot by a record when two CPUs race on its reset;
 * the budget is a promise, so it is kept here, and a refused record is counted as dropped.
 */
export class SampleLedger {
  private readonly kept = new Map<number, IoSample[]>();
  private readonly refused = new Map<number, Map<number, number>>();

  constructor(private readonly perSecond: number) {}

  /** Keeps the record `make()` builds for second `slot` of shown disk `diskDev`, unless that second's budget is spent. */
  offer(slot: number, diskDev: number, make: () => IoSample): void {
    const list = this.kept.get(slot);
    if ((list?.length ?? 0) >= this.perSecond) {
      let perDisk = this.refused.get(slot);
      if (!perDisk) this.refused.set(slot, (perDisk = new Map()));
      perDisk.set(diskDev, (perDisk.get(diskDev) ?? 0) + 1);
      return;
    }
    if (list) list.push(make());
    else this.kept.set(slot, [make()]);
  }

  /** Records refused over the budget in second `slot`, by shown disk dev_t. */
  refusedIn(slot: number): ReadonlyMap<number, number> | undefined {
    return this.refused.get(slot);
  }

  /**
   * The kept records of every second up to `slot` (seconds a clock step left behind too), oldest
   * second first, one array per second; those seconds are forgotten.
   */
  release(slot: number): IoSample[][] {
    const out: IoSample[][] = [];
    for (const [s, samples] of [...this.kept.entries()].sort(([a], [b]) => a - b)) {
      if (s > slot) break;
      this.kept.delete(s);
      if (samples.length > 0) out.push(samples);
    }
    for (const s of [...this.refused.keys()]) if (s <= slot) this.refused.delete(s);
    return out;
  }
}

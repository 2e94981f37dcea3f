/**
 * Sample budget control. The kernel keeps, per second, up to `outlierBudget` records of I/Os
 * that reach a new highest bucket (the slowest are always kept) and up to `fairBudget` records
 * chosen at random with probability fairThreshold / 2^32. The agent sets that probability from
 * the previous second's I/O rate, resets the budget counters ahead of time, and enforces the
 * total per second again on its side (a safety net for the kernel's reset race).
 */

export const DEFAULT_SAMPLE_BUDGET = 2000;

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

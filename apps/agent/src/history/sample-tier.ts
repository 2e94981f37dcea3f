/**
 * One tier of the samples kept on disk (sample-archive.ts): its segment files, the oldest second
 * it keeps, and which of a second's samples it keeps.
 */
import { type IoSample, spreadHash } from '@blkheat/shared-types';
import type { Segment } from './segment.js';
import type { TierSpec } from './tier.js';

export class SampleTier {
  readonly segments: Segment[] = [];
  /**
   * The oldest second this tier keeps samples of: where its oldest segment starts to hold them
   * (or where recording into the directory began), moved on as segments are deleted. Seconds
   * before it: no longer kept; after it, a second without samples had none taken.
   */
  since: number | undefined;
  constructor(readonly spec: TierSpec) {}

  get step(): number {
    return this.spec.step;
  }
  get bytes(): number {
    return this.segments.reduce((n, s) => n + s.bytes, 0);
  }
  get firstTs(): number | undefined {
    for (const s of this.segments) if (s.firstTs !== undefined) return s.firstTs;
    return undefined;
  }
  get lastTs(): number | undefined {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const ts = this.segments[i]?.lastTs;
      if (ts !== undefined) return ts;
    }
    return undefined;
  }
  dropOldest(): number {
    if (this.segments.length <= 1) return 0;
    const oldest = this.segments.shift() as Segment;
    const bytes = oldest.bytes;
    oldest.remove();
    this.since = Math.max(this.since ?? 0, oldest.end);
    return bytes;
  }
}

/** Of a second's samples, what a tier of `step` keeps: outliers first, then one in `step` of the rest, budget / step at most. */
export function thinned(samples: readonly IoSample[], step: number, budgetPerSecond: number): IoSample[] {
  const cap = Math.ceil(budgetPerSecond / step);
  const kept: IoSample[] = [];
  for (const s of samples) if (s.outlier && kept.length < cap) kept.push(s);
  for (const s of samples) {
    if (kept.length >= cap) break;
    if (!s.outlier && spreadHash(s.ts_us, s.sector, s.d_ns) % step === 0) kept.push(s);
  }
  return kept;
}

/**
 * Which disk is worst now (issue 29: the page never ranked the disks or said which one is the
 * problem). A disk with an I/O stuck now (in flight, or waiting for a request, longer than the
 * stuck threshold in the newest live frame: stuck.ts) comes first, the longest wait first: it is
 * hurting now, and no completed latency says so yet. Then the disks by the p99 of the visible
 * range in the latency phase on screen (phase.ts; the summary's histograms are of it), slowest
 * first: by its bucket, then by its value (two bounds in one bucket cannot be told apart).
 * Failed I/Os in the range (faults) break ties, and rank a disk with nothing else to show.
 */
import { formatCount } from './format.js';
import { formatLatency } from './latency.js';
import { labelledQuantile, type QuantileValue } from './percentiles.js';
import { stuckAgeS, type StuckState } from './stuck.js';

export interface DiskStanding {
  readonly dev: string;
  /** How long its oldest stuck I/O (or waiting bio) has waited, seconds; undefined: nothing stuck. */
  readonly stuckS?: number | undefined;
  /** p99 of the visible range, as the page shows it; undefined: no I/O timed. */
  readonly p99?: QuantileValue | undefined;
  /** Failed I/Os in the visible range. */
  readonly failed: number;
}

/** What the ranking is made of, per disk. */
export interface StandingInput {
  readonly devs: readonly string[];
  readonly p99: (dev: string) => QuantileValue | undefined;
  readonly stuck: (dev: string) => StuckState | undefined;
  readonly failed: (dev: string) => number;
}

/** The disks of `input.devs` with something to rank (stuck, timed I/O or failures), worst first. */
export function rankDisks(input: StandingInput): DiskStanding[] {
  const out: DiskStanding[] = [];
  for (const dev of new Set(input.devs)) {
    const s = input.stuck(dev);
    const standing: DiskStanding = { dev, stuckS: s ? stuckAgeS(s) : undefined, p99: input.p99(dev), failed: input.failed(dev) };
    if (standing.stuckS !== undefined || standing.p99 !== undefined || standing.failed > 0) out.push(standing);
  }
  return out.sort(worseFirst);
}

function worseFirst(a: DiskStanding, b: DiskStanding): number {
  const stuck = (b.stuckS ?? -1) - (a.stuckS ?? -1);
  if (stuck !== 0) return stuck;
  const bucket = (b.p99?.bucket ?? -1) - (a.p99?.bucket ?? -1);
  if (bucket !== 0) return bucket;
  const p99 = (b.p99?.seconds ?? -1) - (a.p99?.seconds ?? -1);
  if (p99 !== 0) return p99;
  if (a.failed !== b.failed) return b.failed - a.failed;
  return a.dev < b.dev ? -1 : a.dev > b.dev ? 1 : 0;
}

/** "stuck 12.3 s · p99 ≤ 38.1 s · 3 failed": why a disk ranks where it does. */
export function standingText(s: DiskStanding): string {
  const parts: string[] = [];
  if (s.stuckS !== undefined) parts.push(`stuck ${formatLatency(s.stuckS)}`);
  if (s.p99) parts.push(labelledQuantile(s.p99));
  if (s.failed > 0) parts.push(`${formatCount(s.failed)} failed`);
  return parts.join(' · ');
}

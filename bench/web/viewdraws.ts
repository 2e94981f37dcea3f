/**
 * What the page's views cost over a span, from the render scheduler's own timings (the test
 * hook's renderStats, read before and after): per kind of view (the heat maps, the throughput
 * strips, the histograms, the overlays, the time axis), how many draws, their total and their
 * median. Times are wall times: a draw the page's thread spent preempted counts that wait, so
 * the total follows the machine's load, while the median mostly does not.
 */
import type { BlkheatHook } from '@blkheat/shared-types';
import { median } from './clicks.ts';

type RenderStats = ReturnType<BlkheatHook['renderStats']>;

export interface ViewDraws {
  /** "heat", "tput", "hist", "overlay", "time-axis": the view key up to its first colon. */
  readonly kind: string;
  readonly draws: number;
  readonly totalMs: number;
  readonly medianMs: number;
}

const KIND_NAMES: Readonly<Record<string, string>> = {
  heat: 'heat maps',
  tput: 'throughput strips',
  hist: 'histograms',
  overlay: 'overlays',
  'time-axis': 'time axis',
};

/**
 * The draws made between two reads, per kind, costliest first. A view drawn more often than the
 * scheduler keeps timings for counts only the draws it kept (their number is what is summed).
 */
export function viewDrawsBetween(before: RenderStats, after: RenderStats): ViewDraws[] {
  const byKind = new Map<string, number[]>();
  for (const [key, timings] of Object.entries(after.timings)) {
    const drawn = (after.draws[key] ?? 0) - (before.draws[key] ?? 0);
    if (drawn <= 0) continue;
    const kind = key.split(':')[0] ?? key;
    const list = byKind.get(kind) ?? [];
    list.push(...timings.slice(-Math.min(drawn, timings.length)));
    byKind.set(kind, list);
  }
  return [...byKind]
    .map(([kind, ms]) => ({ kind, draws: ms.length, totalMs: ms.reduce((a, b) => a + b, 0), medianMs: median(ms) }))
    .sort((a, b) => b.totalMs - a.totalMs);
}

/** One line: "throughput strips 844 ms in 360 draws (median 0.6 ms); heat maps …". */
export function describeViewDraws(views: readonly ViewDraws[]): string {
  if (views.length === 0) return 'no view drawn';
  return views
    .map((v) => `${KIND_NAMES[v.kind] ?? v.kind} ${Math.round(v.totalMs)} ms in ${v.draws} draws (median ${v.medianMs.toFixed(2)} ms)`)
    .join('; ');
}

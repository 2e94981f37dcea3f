/**
 * How finely to fetch and draw a time window: one heat map column per step, with no more
 * columns than device pixels (so nearest-neighbour blitting never drops a column, and a spike
 * stays visible because coarser columns are sums, not samples). Steps come from a fixed 1-2-5
 * ladder so panning and zooming reuse the same column boundaries (Perfetto's "snap to
 * resolution"), and they are multiples of the source's finest step.
 */

export const STEP_LADDER: readonly number[] = Object.freeze([
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
]);

/** Most columns one data window may hold (also the agent's MAX_FRAMES_PER_ANSWER). */
export const MAX_WINDOW_COLUMNS = 3600;

/**
 * The smallest step on the ladder that is a multiple of `minStep` and puts at most `pixels`
 * columns in `span` seconds.
 */
export function chooseStep(span: number, pixels: number, minStep = 1): number {
  const want = Math.max(minStep, span / Math.max(1, Math.floor(pixels)));
  // The source's own step, off the ladder or not (a fleet's live columns of 3 s, a snapshot's 4 s),
  // rather than the first ladder step it divides (60 s for 4 s).
  if (want <= minStep) return minStep;
  for (const s of STEP_LADDER) if (s >= want && s % minStep === 0) return s;
  // Beyond the ladder: whole multiples of the minimum step.
  return Math.ceil(want / minStep) * minStep;
}

export function alignFloor(t: number, step: number): number {
  return Math.floor(t / step) * step;
}

export function alignCeil(t: number, step: number): number {
  return Math.ceil(t / step) * step;
}

/** [from, to) widened to whole columns of `step`. */
export function snapRange(from: number, to: number, step: number): { from: number; to: number } {
  const a = alignFloor(from, step);
  let b = alignCeil(to, step);
  if (b <= a) b = a + step;
  return { from: a, to: b };
}

/**
 * The data window to fetch around a visible window: `factor`× its span centred on it (so pans
 * of up to a screen either way need no fetch), capped at `maxColumns` columns and clipped to
 * `[lowest, highest)` when given, then snapped to whole columns.
 */
export function bufferedRange(
  from: number,
  to: number,
  step: number,
  opts: { factor?: number; maxColumns?: number; lowest?: number; highest?: number } = {},
): { from: number; to: number } {
  const span = to - from;
  const factor = opts.factor ?? 3;
  const maxCols = opts.maxColumns ?? MAX_WINDOW_COLUMNS;
  const total = Math.min(span * factor, maxCols * step);
  const extra = Math.max(0, total - span) / 2;
  let a = from - extra;
  let b = to + extra;
  if (opts.highest !== undefined && b > opts.highest) {
    a -= b - opts.highest;
    b = opts.highest;
  }
  if (opts.lowest !== undefined && a < opts.lowest) a = opts.lowest;
  const snapped = snapRange(a, Math.max(b, a + step), step);
  if ((snapped.to - snapped.from) / step > maxCols) snapped.from = snapped.to - maxCols * step;
  return snapped;
}

/** True when `inner` lies inside `outer`. */
export function covers(outer: { from: number; to: number }, inner: { from: number; to: number }): boolean {
  return outer.from <= inner.from && inner.to <= outer.to;
}

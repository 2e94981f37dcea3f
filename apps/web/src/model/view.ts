/**
 * The visible time window and the gestures that move it. Following live, the window is the
 * last `span` seconds up to the newest frame; any zoom or pan pauses it on a fixed range, and
 * "back to live" resumes following with the span last used live.
 */

export interface ViewState {
  readonly following: boolean;
  /** Width in seconds (the live width while following). */
  readonly span: number;
  /** [from, to) in unix seconds; fractional while a gesture is under way. */
  readonly from: number;
  readonly to: number;
}

export interface ViewLimits {
  readonly minSpan: number;
  readonly maxSpan: number;
  /** Oldest second data exists for (history start); undefined = unbounded. */
  readonly lowest?: number | undefined;
  /** Live edge (end of the newest frame); undefined = unbounded. */
  readonly highest?: number | undefined;
}

export const LIVE_SPANS: readonly { span: number; label: string }[] = Object.freeze([
  { span: 60, label: '1m' },
  { span: 300, label: '5m' },
  { span: 900, label: '15m' },
  { span: 3600, label: '1h' },
]);

export function liveView(edge: number, span: number): ViewState {
  return { following: true, span, from: edge - span, to: edge };
}

export function fixedView(from: number, to: number): ViewState {
  return { following: false, span: to - from, from, to };
}

function clampSpan(span: number, l: ViewLimits): number {
  return Math.min(l.maxSpan, Math.max(l.minSpan, span));
}

/** Slides [from, to) inside the limits without changing its width (when it fits). */
function clampWindow(from: number, to: number, l: ViewLimits): ViewState {
  const span = to - from;
  let a = from;
  // Allow looking a little past the edges, not into empty space.
  const slack = span * 0.05;
  if (l.highest !== undefined && a + span > l.highest + slack) a = l.highest + slack - span;
  if (l.lowest !== undefined && a < l.lowest - slack) a = Math.min(l.lowest - slack, (l.highest ?? Infinity) + slack - span);
  return fixedView(a, a + span);
}

/** Zooms by `factor` (< 1 = in) keeping time `at` at the same place on screen. */
export function zoomAt(v: ViewState, at: number, factor: number, l: ViewLimits): ViewState {
  const span = clampSpan((v.to - v.from) * factor, l);
  const frac = v.to > v.from ? (at - v.from) / (v.to - v.from) : 0.5;
  const from = at - frac * span;
  return clampWindow(from, from + span, l);
}

export function panBy(v: ViewState, seconds: number, l: ViewLimits): ViewState {
  return clampWindow(v.from + seconds, v.to + seconds, l);
}

/** The window a drag from time a to time b selects (at least minSpan wide). */
export function dragView(a: number, b: number, l: ViewLimits): ViewState {
  let from = Math.min(a, b);
  let to = Math.max(a, b);
  if (to - from < l.minSpan) {
    const mid = (from + to) / 2;
    from = mid - l.minSpan / 2;
    to = mid + l.minSpan / 2;
  }
  return clampWindow(from, to, l);
}

/** Integer-second version of a view, for URLs and fetches. */
export function roundView(v: ViewState): ViewState {
  if (v.following) return v;
  const from = Math.floor(v.from);
  const to = Math.max(from + 1, Math.ceil(v.to));
  return fixedView(from, to);
}

/**
 * Which data window the view wants (windowLoader.ts loads it): its step for the plot's width,
 * and [from, to) buffered around the visible range, or reaching back from the live edge while
 * following. Also when a load under way already serves a newer want, and where a following
 * window ends once loaded.
 * This is the window loader's arithmetic only: it reads the UI store, fetches and publishes
 * nothing; windowLoader.ts does the loading.
 */
import { alignCeil, alignFloor, bufferedRange, chooseStep, MAX_WINDOW_COLUMNS } from '../model/resolution.js';
import type { ViewState } from '../model/view.js';
import type { UiReader } from '../store/uiStore.js';
import type { DataSource } from './source.js';

export interface Want {
  readonly step: number;
  readonly from: number;
  readonly to: number;
  readonly following: boolean;
}

/** A want with the visible range it was worked out for. */
export type VisibleWant = Want & { readonly visible: ViewState };

/** The window the view wants now, with the visible range it was worked out for. */
export function wantedWindow(uiStore: UiReader, source: DataSource): VisibleWant {
  const ui = uiStore.getState();
  const edge = source.edge();
  const visible = source.visible();
  const px = Math.max(50, ui.plotWidth * ui.dpr);
  const step = chooseStep(visible.to - visible.from, px, source.minStep());
  const highest = alignCeil(edge, step);
  // No buffer before the source's oldest second, but the visible part before it stays in the
  // window: there it is drawn as "no data" (see windowKnown), not left blank like a quiet disk.
  const oldest = source.lowest();
  const lowest = oldest === undefined ? undefined : Math.min(oldest, visible.from);
  if (visible.following) {
    const b = highest;
    let a = alignFloor(edge - 2 * visible.span, step);
    if (lowest !== undefined) a = Math.max(a, alignFloor(lowest, step));
    if ((b - a) / step > MAX_WINDOW_COLUMNS) a = b - MAX_WINDOW_COLUMNS * step;
    return { step, from: a, to: Math.max(b, a + step), following: true, visible };
  }
  const r = bufferedRange(visible.from, visible.to, step, { lowest, highest: Math.max(highest, alignCeil(visible.to, step)) });
  return { step, from: r.from, to: r.to, following: false, visible };
}

/**
 * A window [from, to) at the want's step holds what a view that is not following shows: its
 * visible range (from the source's oldest second, `floor`, on) up to the data's end (`edge`).
 * The buffer past the visible range may fall short of a newer edge: it is not reloaded for that.
 */
export function holdsVisible(w: { readonly from: number; readonly to: number }, want: VisibleWant, floor: number, edge: number): boolean {
  return w.from <= Math.max(want.visible.from, floor) && w.to >= Math.min(want.visible.to, alignCeil(edge, want.step));
}

/**
 * A load under way for `pending` (same step, same disks) serves `want` too:
 *  - following, the live edge moving does not restart it (its fetch would be dropped each second,
 *    and an agent slower than that to answer would never get the window on screen); see reachTo;
 *  - not following, when it holds the visible range (holdsVisible, as a loaded window is kept):
 *    the data's end moving while a first window is asked for only moves the buffer past the
 *    view. Restarting there asked a fleet for its whole range twice (bench/fleet-scale: a 1 h
 *    page's heat maps 1.98 s instead of ~1.6 s at 1,000 hosts).
 */
export function continues(pending: Want, want: VisibleWant, floor: number, edge: number): boolean {
  if (pending.step !== want.step || pending.following !== want.following) return false;
  return want.following ? pending.from <= want.from : holdsVisible(pending, want, floor, edge);
}

/**
 * Where a window loaded for `want` at `step` ends: following, it reaches the live seconds that
 * came while the load was under way (up to the live log's `coveredTo`), so none is left out.
 */
export function reachTo(want: Want, step: number, coveredTo: number | undefined): number {
  return want.following && coveredTo !== undefined ? Math.max(want.to, alignCeil(coveredTo, step)) : want.to;
}

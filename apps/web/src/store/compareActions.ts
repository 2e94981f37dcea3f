/**
 * The compare (A/B) actions: which ranges are compared. They write the choice into the UI store
 * (and so the URL); pipeline/comparison.ts sums the ranges. The rest of what the user can do is
 * in actions.ts.
 */
import { alignRange, type TimeRange } from '../model/compare.js';
import { visibleRange } from './actions.js';
import { useUi } from './uiStore.js';

/** The visible range becomes the baseline; the comparison stays as it was (pinned, or the view). */
export function setBaselineFromView(): void {
  const r = visibleRange();
  if (r) replaceBaseline(r);
}

/** `baseline` replaces the baseline; a pinned comparison stays. */
function replaceBaseline(baseline: TimeRange): void {
  const cur = useUi.getState().compare;
  useUi.setState({ compare: cur?.comparison ? { baseline, comparison: cur.comparison } : { baseline } });
}

/** [a, b) becomes the baseline (a Ctrl/⌘-drag), widened to whole columns of `step` as the heat map draws them. */
export function setBaseline(a: number, b: number, step: number): void {
  replaceBaseline(alignRange({ from: a, to: b }, step));
}

/** The visible range becomes the comparison (pinned: it stays when the view moves on). */
export function setComparisonFromView(): void {
  const r = visibleRange();
  const cur = useUi.getState().compare;
  if (!r || !cur) return;
  useUi.setState({ compare: { baseline: cur.baseline, comparison: r } });
}

/** The comparison follows the visible range again. */
export function compareWithView(): void {
  const cur = useUi.getState().compare;
  if (cur?.comparison) useUi.setState({ compare: { baseline: cur.baseline } });
}

export function clearCompare(): void {
  useUi.setState({ compare: undefined });
}

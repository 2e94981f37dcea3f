/**
 * The columns of the current window a strip draws (the visible range, whole steps), and a key that
 * changes whenever what they hold may have: the strips recompute their series only then.
 */
import { useData } from '../store/pipelineStore.js';

export interface VisibleColumns {
  readonly col0: number;
  readonly col1: number;
  /** Window, data version, frames held, step and columns. */
  readonly key: string;
}

/** The visible columns of the current window, or undefined without one. */
export function visibleColumns(): VisibleColumns | undefined {
  const d = useData.getState();
  const cur = d.window;
  if (!cur) return undefined;
  const col0 = Math.floor(d.visible.from / cur.step);
  const col1 = Math.ceil(d.visible.to / cur.step);
  return { col0, col1, key: `${cur.id}/${d.dataVersion}/${cur.frames.length}/${cur.step}/${col0}/${col1}` };
}

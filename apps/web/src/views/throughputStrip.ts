/**
 * Keeps a disk's throughput strip (render/throughput.ts) fed: the series of the visible columns
 * from the data window's frames (model/throughput.ts), cached per data version and view. Each
 * draw with data records what it drew (series, lane scales and captions) in the scheduler's
 * registry, for the test hook.
 */
import { ThroughputColumns, type ThroughputSeries, throughputSeries } from '../model/throughput.js';
import { renderContext } from '../render/contract.js';
import { type DrawFn, DrawnKind } from '../render/scheduler.js';
import { paintThroughput, type ThroughputLanes } from '../render/throughput.js';
import { useData } from '../store/pipelineStore.js';
import { useHover, useUi } from '../store/uiStore.js';
import { renderTheme, resolvedTheme } from './theme.js';
import { visibleColumns } from './visibleColumns.js';

export interface DrawnThroughput extends ThroughputLanes {
  readonly series: ThroughputSeries;
}

/** What a strip drew last (kept from its last draw with data: a draw without any clears the canvas only). */
export const THROUGHPUT_DRAWN = new DrawnKind<DrawnThroughput, HTMLCanvasElement>('throughput');

/** The series of `dev` over the visible columns of the current window (uncached). */
export function visibleThroughput(dev: string): ThroughputSeries | undefined {
  const cur = useData.getState().window;
  const cols = visibleColumns();
  if (!cur || !cols) return undefined;
  return throughputSeries(cur.frames, dev, cur.step, cols.col0, cols.col1);
}

/** A draw function for the strip of `dev` on `canvas()`, `size()` CSS px. */
export function throughputDraw(dev: string, canvas: () => HTMLCanvasElement | null, size: () => { width: number; height: number }): DrawFn {
  let key = '';
  let series: ThroughputSeries | undefined;
  let columns: ThroughputColumns | undefined;
  return (record) => {
    const el = canvas();
    const { width, height } = size();
    const d = useData.getState();
    const cur = d.window;
    if (!el || !cur || width <= 0 || height <= 0) return;
    const cols = visibleColumns();
    if (cols && cols.key !== key) {
      key = cols.key;
      // A live window's new seconds are added to the column totals, not summed again with the whole window.
      if (!columns || columns.step !== cur.step || !columns.catchUp(cur.frames)) {
        columns = new ThroughputColumns(dev, cur.step);
        columns.catchUp(cur.frames);
      }
      series = columns.series(cols.col0, cols.col1);
    }
    const ui = useUi.getState();
    const hv = useHover.getState();
    const rc = renderContext({ from: d.visible.from, to: d.visible.to, uLo: 0, uHi: 1, width, height, dpr: ui.dpr }, cur.step);
    const lanes = paintThroughput(
      el,
      rc,
      series,
      { cursor: hv.t !== undefined && !hv.drag ? hv.t : undefined },
      renderTheme(resolvedTheme(ui.theme)),
    );
    if (series && lanes) record(THROUGHPUT_DRAWN, el, { series, ...lanes });
  };
}

/**
 * Keeps a disk's throughput strip (render/throughput.ts) fed: the series of the visible columns
 * from the data window's frames (model/throughput.ts), cached per data version and view, and
 * those of the wider window its bars are painted for. Each draw with data records what it drew
 * (series, lane scales and captions) in the scheduler's registry, for the test hook.
 */
import { ThroughputColumns, type ThroughputSeries, throughputSeries } from '../model/throughput.js';
import { renderContext } from '../render/contract.js';
import { type DrawFn, DrawnKind } from '../render/scheduler.js';
import { type ThroughputLanes, ThroughputStrip } from '../render/throughput.js';
import { useData } from '../store/pipelineStore.js';
import { useHover, useUi } from '../store/uiStore.js';
import { renderTheme, resolvedTheme } from './theme.js';
import { visibleColumns } from './visibleColumns.js';

export interface DrawnThroughput extends ThroughputLanes {
  readonly series: ThroughputSeries;
  /** The bars painted whole, or only the columns that changed and slid. */
  readonly painted: 'full' | 'incremental';
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

/**
 * A draw function for the strip of `dev`: its bars on `bars()`, slid while live, and its captions
 * and cursor on `labels()` above them (render/throughput.ts ThroughputStrip), `size()` CSS px.
 */
export function throughputDraw(
  dev: string,
  bars: () => HTMLCanvasElement | null,
  labels: () => HTMLCanvasElement | null,
  size: () => { width: number; height: number },
): DrawFn {
  let key = '';
  let series: ThroughputSeries | undefined;
  let columns: ThroughputColumns | undefined;
  let strip: ThroughputStrip | undefined;
  return (record) => {
    const el = bars();
    const over = labels();
    const { width, height } = size();
    const d = useData.getState();
    const cur = d.window;
    if (!el || !over || !cur || width <= 0 || height <= 0) return;
    if (strip?.bars !== el || strip.labels !== over) strip = new ThroughputStrip(el, over);
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
    const fed = columns;
    if (!fed) return;
    const drawn = strip.draw(
      rc,
      series,
      (c0, c1) => fed.series(c0, c1),
      { cursor: hv.t !== undefined && !hv.drag ? hv.t : undefined },
      renderTheme(resolvedTheme(ui.theme)),
    );
    if (series && drawn) record(THROUGHPUT_DRAWN, el, { series, scales: drawn.scales, captions: drawn.captions, painted: drawn.kind });
  };
}

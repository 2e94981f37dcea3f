/**
 * Keeps a disk's throughput strip (render/throughput.ts) fed: the series of the visible columns
 * from the data window's frames (model/throughput.ts), cached per data version and view, and
 * what was last drawn (series and lane scales) for the tooltip and the test hook.
 */
import { type ThroughputSeries, throughputSeries } from '../model/throughput.js';
import { renderContext } from '../render/contract.js';
import { paintThroughput, type ThroughputScales } from '../render/throughput.js';
import { useData } from '../store/dataStore.js';
import { useHover, useUi } from '../store/store.js';
import { renderTheme, resolvedTheme } from './theme.js';

export interface DrawnThroughput {
  readonly series: ThroughputSeries;
  readonly scales: ThroughputScales;
}

const drawn = new Map<string, DrawnThroughput>();

/** What the strip of `dev` shows now (undefined before its first draw with data). */
export function drawnThroughput(dev: string): DrawnThroughput | undefined {
  return drawn.get(dev);
}

/** The series of `dev` over the visible columns of the current window (uncached). */
export function visibleThroughput(dev: string): ThroughputSeries | undefined {
  const d = useData.getState();
  const cur = d.window;
  if (!cur) return undefined;
  return throughputSeries(cur.frames, dev, cur.step, Math.floor(d.visible.from / cur.step), Math.ceil(d.visible.to / cur.step));
}

/** A draw function for the strip of `dev` on `canvas()`, `size()` CSS px. */
export function throughputDraw(
  dev: string,
  canvas: () => HTMLCanvasElement | null,
  size: () => { width: number; height: number },
): { draw: () => void; dispose: () => void } {
  let key = '';
  let series: ThroughputSeries | undefined;
  const draw = (): void => {
    const el = canvas();
    const { width, height } = size();
    const d = useData.getState();
    const cur = d.window;
    if (!el || !cur || width <= 0 || height <= 0) return;
    const k = `${cur.id}/${d.dataVersion}/${cur.frames.length}/${cur.step}/${Math.floor(d.visible.from / cur.step)}/${Math.ceil(d.visible.to / cur.step)}`;
    if (k !== key) {
      key = k;
      series = visibleThroughput(dev);
    }
    const ui = useUi.getState();
    const hv = useHover.getState();
    const rc = renderContext({ from: d.visible.from, to: d.visible.to, uLo: 0, uHi: 1, width, height, dpr: ui.dpr }, cur.step);
    const scales = paintThroughput(
      el,
      rc,
      series,
      { cursor: hv.t !== undefined && !hv.drag ? hv.t : undefined },
      renderTheme(resolvedTheme(ui.theme)),
    );
    if (series && scales) drawn.set(dev, { series, scales });
  };
  return { draw, dispose: () => drawn.delete(dev) };
}

/**
 * The test hook's reads of the heat maps: their cells (counts in the data window, the busiest,
 * the unrecorded columns, the colour scale), where a cell is on the page and the pixels drawn
 * there. Where comes from what the overlay drew (the render context it recorded in the
 * scheduler's registry): a point the hook names is where the page drew the cell.
 */
import { unrecordedRuns } from './model/gaps.js';
import { useData } from './store/pipelineStore.js';
import { windowKnown, windowScale } from './store/shownWindow.js';
import { useUi } from './store/uiStore.js';
import type { BlkheatHook, HookCell } from './testhookApi.js';
import { canvasPixel, inViewport } from './testhookPage.js';
import { type HeatGeometry, heatGeometry } from './views/geometry.js';
import { drawnHeat } from './views/useDiskDrawing.js';

/** The heat map of `dev` as drawn: its overlay (the pointer layer) and the geometry of its cells. */
function heatOf(dev: string): { el: HTMLCanvasElement; g: HeatGeometry } | undefined {
  const d = drawnHeat(dev);
  return d && { el: d.canvas, g: heatGeometry(() => ({ rect: d.canvas.getBoundingClientRect(), rc: d.value.rc })) };
}

function cellOf(dev: string, col: number, bucket: number): HookCell | undefined {
  const cur = useData.getState().window;
  const m = cur?.matrices.get(dev);
  if (!cur || !m) return undefined;
  return { dev, col, from: col * m.step, to: (col + 1) * m.step, bucket, count: m.count(col, bucket) };
}

/**
 * The centre of a drawn cell in viewport coordinates, scrolling the page as needed: first the
 * heat map into view, then (if the cell is still off screen, or under something else such as
 * a notice) the cell to the middle of the viewport.
 */
function cellInViewport(dev: string, ts: number, bucket: number): { x: number; y: number } | undefined {
  const heat = heatOf(dev);
  if (!heat) return undefined;
  const { el, g } = heat;
  let p = g.centre(ts, bucket);
  if (!p) return undefined; // not drawn: outside the time window or the latency range
  if (!inViewport(p)) {
    el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    p = g.centre(ts, bucket);
  }
  const covered = (q: { x: number; y: number }): boolean => document.elementFromPoint(q.x, q.y) !== el;
  if (p && (!inViewport(p) || covered(p))) {
    const dx = p.x < 0 || p.x >= window.innerWidth ? p.x - window.innerWidth / 2 : 0;
    window.scrollBy(dx, p.y - window.innerHeight / 2);
    p = g.centre(ts, bucket);
  }
  return p && inViewport(p) ? p : undefined;
}

export function heatmapReads(): Pick<
  BlkheatHook,
  'cellAt' | 'cellCenter' | 'column' | 'hottestCell' | 'scale' | 'unrecorded' | 'pixelAt' | 'overlayPixelAt'
> {
  return {
    column(dev, ts) {
      const m = useData.getState().window?.matrices.get(dev);
      if (!m) return undefined;
      const col = m.columnOf(ts);
      if (col < m.start || col >= m.end) return undefined;
      return { from: col * m.step, step: m.step, counts: Array.from(m.column(col)) };
    },
    cellAt(x, y) {
      for (const dev of useData.getState().shownDevs) {
        const hit = heatOf(dev)?.g.hit(x, y);
        if (hit) return cellOf(dev, hit.col, hit.bucket);
      }
      return undefined;
    },
    cellCenter(dev, ts, bucket) {
      return cellInViewport(dev, ts, bucket);
    },
    hottestCell(dev, minBucket = 0, maxBucket = Infinity) {
      const d = useData.getState();
      const m = d.window?.matrices.get(dev);
      if (!m) return undefined;
      const c0 = Math.max(m.start, Math.floor(d.visible.from / m.step));
      const c1 = Math.min(m.end, Math.ceil(d.visible.to / m.step));
      let best: HookCell | undefined;
      for (let c = c0; c < c1; c++) {
        for (let r = Math.max(0, minBucket); r <= Math.min(m.rows - 1, maxBucket); r++) {
          const n = m.count(c, r);
          if (n > 0 && (!best || n > best.count)) best = { dev, col: c, from: c * m.step, to: (c + 1) * m.step, bucket: r, count: n };
        }
      }
      return best;
    },
    scale(dev) {
      const norm = useUi.getState().norm;
      const sc = windowScale(useData.getState().window, dev, norm);
      return sc ? { max: sc.max, kind: sc.kind, shared: norm === 'shared' } : undefined;
    },
    unrecorded(dev, from, to) {
      const cur = useData.getState().window;
      const m = cur?.matrices.get(dev);
      if (!cur || !m) return [];
      const out: number[] = [];
      for (const [a, b] of unrecordedRuns(
        m,
        Math.floor(from / m.step),
        Math.ceil(to / m.step),
        windowKnown(cur, useUi.getState().agent?.historyFrom),
      )) {
        for (let c = a; c < b; c++) out.push(c * m.step);
      }
      return out;
    },
    pixelAt(dev, x, y) {
      return canvasPixel('heatmap', dev, x, y);
    },
    overlayPixelAt(dev, x, y) {
      return canvasPixel('heatmap-overlay', dev, x, y);
    },
  };
}

/**
 * Keeps one disk's canvases drawn: registers its heat map, overlay and histogram renderers
 * with the scheduler (one animation frame per redraw) and its geometry for hit-testing,
 * invalidates each on the store changes that concern it, and binds the heat map's gestures.
 * The drawing itself is in render/ (heatLayers.ts, overlay.ts with incidents.ts, histogram.ts,
 * axes.ts, throughput.ts for the strip under the heat map).
 */
import { type RefObject, useEffect } from 'react';
import { renderContext, type RenderContext } from '../render/contract.js';
import { renderLatencyAxis, renderShareAxis } from '../render/axes.js';
import { HeatLayers } from '../render/heatLayers.js';
import { paintHistogram } from '../render/histogram.js';
import { drawOverlay, type OverlayMarks } from '../render/overlay.js';
import { scheduler } from '../render/scheduler.js';
import { useData } from '../store/dataStore.js';
import { windowKnown, windowScale } from '../store/dataWindow.js';
import { useHover, useUi } from '../store/store.js';
import { heatmapGeometry, registerGeometry } from './geometry.js';
import { forgetIncidents, incidentMarks } from './incidents.js';
import { bindHeatmapGestures } from './interactions.js';
import { paletteFor, renderTheme, resolvedTheme } from './theme.js';
import { throughputDraw } from './throughputStrip.js';
import type { Size } from './useElementSize.js';

export interface DiskElements {
  readonly heat: RefObject<HTMLCanvasElement | null>;
  readonly gaps: RefObject<HTMLCanvasElement | null>;
  readonly lines: RefObject<HTMLCanvasElement | null>;
  readonly overlay: RefObject<HTMLCanvasElement | null>;
  readonly hist: RefObject<HTMLCanvasElement | null>;
  /** The throughput strip under the heat map (as wide as the plot). */
  readonly tput: RefObject<HTMLCanvasElement | null>;
  /** Its height, CSS px. */
  readonly tputHeight: number;
  readonly yAxis: RefObject<SVGGElement | null>;
  readonly shareAxis: RefObject<SVGGElement | null>;
  /** The plot's size in CSS px (kept by the row as it is laid out). */
  readonly plotSize: RefObject<Size>;
  /** Width of the histogram canvas, CSS px. */
  readonly histWidth: number;
}

/** The heat map's render context right now (shared by drawing, hit-testing and the overlay). */
function heatContext(width: number, height: number): RenderContext | undefined {
  const d = useData.getState();
  const cur = d.window;
  if (!cur || width <= 0 || height <= 0) return undefined;
  const v = d.visible;
  return renderContext({ from: v.from, to: v.to, uLo: cur.yLo, uHi: cur.yHi, width, height, dpr: useUi.getState().dpr }, cur.step);
}

/** What the overlay of `dev` marks now, from the data (incidents), the hover and the selection. */
function overlayMarks(dev: string): OverlayMarks {
  const hv = useHover.getState();
  const sel = useData.getState().selection;
  const drag = hv.drag;
  const cmp = useData.getState().compare;
  return {
    compare: cmp ? { baseline: cmp.baseline, comparison: cmp.comparison } : undefined,
    incidents: incidentMarks(dev),
    cursor: hv.t !== undefined && !drag ? hv.t : undefined,
    cell: hv.dev === dev && hv.col !== undefined && hv.bucket !== undefined && !drag ? { col: hv.col, bucket: hv.bucket } : undefined,
    // A size × latency cell spans the whole range at one bucket, of one size only: not a heat map cell.
    selection: sel && sel.dev === dev && sel.kind === useUi.getState().kind && sel.sizeClass === undefined ? sel : undefined,
    drag: drag && (drag.kind === 'zoom' || drag.kind === 'baseline' || (drag.kind === 'box' && drag.dev === dev)) ? drag : undefined,
  };
}

export function useDiskDrawing(dev: string, el: DiskElements): void {
  useEffect(() => {
    const heat = el.heat.current;
    const lines = el.lines.current;
    const layers = heat && lines ? new HeatLayers(heat, lines, el.gaps.current ?? undefined) : undefined;
    const size = el.plotSize;
    let yKey = '';

    const drawHeat = (): void => {
      const cur = useData.getState().window;
      const rc = heatContext(size.current.width, size.current.height);
      if (!layers || !cur || !rc) return;
      const ui = useUi.getState();
      const themeName = resolvedTheme(ui.theme);
      const theme = renderTheme(themeName);
      layers.draw(
        rc,
        cur.matrices.get(dev),
        cur.tracks.get(dev),
        {
          palette: paletteFor(themeName),
          scale: windowScale(cur, dev, ui.norm) ?? cur.scale,
          percentiles: ui.percentiles,
          lineColours: theme.percentiles,
          gapColour: theme.gap,
        },
        windowKnown(cur, ui.agent?.historyFrom),
      );
      const key = `${JSON.stringify(cur.schema)}/${cur.yLo}/${cur.yHi}/${rc.viewport.height}`;
      if (key !== yKey && el.yAxis.current) {
        yKey = key;
        renderLatencyAxis(el.yAxis.current, cur.yLo, cur.yHi, cur.schema, rc.viewport.height);
      }
    };

    const drawMarks = (): void => {
      const canvas = el.overlay.current;
      const rc = heatContext(size.current.width, size.current.height);
      if (!canvas || !rc) return;
      drawOverlay(canvas, rc, overlayMarks(dev), renderTheme(resolvedTheme(useUi.getState().theme)));
    };

    const drawHist = (): void => {
      const canvas = el.hist.current;
      const d = useData.getState();
      const cur = d.window;
      const s = d.summary;
      const h = size.current.height;
      if (!canvas || !cur || !s || h <= 0) return;
      const ui = useUi.getState();
      const hv = useHover.getState();
      const hd = s.perDisk.get(dev);
      paintHistogram(
        canvas,
        { from: 0, to: 1, uLo: cur.yLo, uHi: cur.yHi, width: el.histWidth, height: h, dpr: ui.dpr },
        {
          hist: hd?.hist ?? [],
          total: hd?.total ?? 0,
          quantiles: hd?.quantiles ?? [],
          maxShare: s.maxShare,
          highlight: hv.dev === dev && hv.bucket !== undefined ? hv.bucket : undefined,
        },
        renderTheme(resolvedTheme(ui.theme)),
      );
      if (el.shareAxis.current) renderShareAxis(el.shareAxis.current, s.maxShare, el.histWidth);
    };

    const tput = throughputDraw(
      dev,
      () => el.tput.current,
      () => ({ width: size.current.width, height: el.tputHeight }),
    );

    const unregister = [
      scheduler.register(`heat:${dev}`, drawHeat),
      scheduler.register(`tput:${dev}`, tput.draw),
      tput.dispose,
      scheduler.register(`overlay:${dev}`, drawMarks),
      () => forgetIncidents(dev),
      scheduler.register(`hist:${dev}`, drawHist),
      registerGeometry(dev, () => {
        const overlay = el.overlay.current;
        const rc = heatContext(size.current.width, size.current.height);
        const cur = useData.getState().window;
        if (!overlay || !rc || !cur) return undefined;
        return { rect: overlay.getBoundingClientRect(), rc, step: cur.step };
      }),
      useHover.subscribe((s, p) => {
        if (s.t !== p.t || s.dev !== p.dev || s.col !== p.col || s.bucket !== p.bucket || s.drag !== p.drag) {
          scheduler.invalidate(`overlay:${dev}`);
          if (s.t !== p.t || s.drag !== p.drag) scheduler.invalidate(`tput:${dev}`);
          if ((s.dev === dev || p.dev === dev) && (s.bucket !== p.bucket || s.dev !== p.dev)) scheduler.invalidate(`hist:${dev}`);
        }
      }),
      useUi.subscribe((s, p) => {
        if (s.theme !== p.theme) {
          scheduler.invalidate(`hist:${dev}`);
          scheduler.invalidate(`tput:${dev}`);
        }
        if (s.colour !== p.colour || s.norm !== p.norm) scheduler.invalidate(`heat:${dev}`);
      }),
      useData.subscribe((s, p) => {
        if (s.summaryVersion !== p.summaryVersion || s.summary !== p.summary) scheduler.invalidate(`hist:${dev}`);
        if (s.selection !== p.selection || s.compare !== p.compare) scheduler.invalidate(`overlay:${dev}`);
      }),
    ];
    const overlay = el.overlay.current;
    const unbind = overlay ? bindHeatmapGestures(overlay, dev, () => heatmapGeometry(dev)) : undefined;
    return () => {
      for (const u of unregister) u();
      unbind?.();
    };
  }, [dev, el]);
}

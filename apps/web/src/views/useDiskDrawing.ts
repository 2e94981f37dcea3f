/**
 * Keeps one disk's canvases drawn: registers its heat map, overlay and histogram renderers
 * with the scheduler (one animation frame per redraw), invalidates each on the store changes
 * that concern it, and binds the heat map's gestures (hit-tested with the geometry in force
 * now). The overlay records what it drew (the render context, so where each cell is, and the
 * incident marks) in the scheduler's registry for the test hook. The drawing itself is in
 * render/ (heatLayers.ts, overlay.ts with incidents.ts, histogram.ts, axes.ts, throughput.ts
 * for the strip under the heat map).
 */
import { type RefObject, useEffect } from 'react';
import { renderContext, type RenderContext } from '../render/contract.js';
import { renderLatencyAxis, renderShareAxis } from '../render/axes.js';
import { HeatLayers } from '../render/heatLayers.js';
import { paintHistogram } from '../render/histogram.js';
import type { IncidentMarks } from '../render/incidents.js';
import { drawOverlay, type OverlayMarks } from '../render/overlay.js';
import { type DrawFn, type Drawn, DrawnKind, scheduler } from '../render/scheduler.js';
import { useData } from '../store/pipelineStore.js';
import { shownQuantiles, windowKnown, windowScale } from '../store/shownWindow.js';
import { useHover, useUi } from '../store/uiStore.js';
import { heatGeometry } from './geometry.js';
import { incidentMarks } from './incidents.js';
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
  /** The throughput strip under the heat map (as wide as the plot): its bars (slid while live) and its captions above them. */
  readonly tput: RefObject<HTMLCanvasElement | null>;
  readonly tputLabels: RefObject<HTMLCanvasElement | null>;
  /** Its height, CSS px. */
  readonly tputHeight: number;
  readonly yAxis: RefObject<SVGGElement | null>;
  readonly shareAxis: RefObject<SVGGElement | null>;
  /** The plot's size in CSS px (kept by the row as it is laid out). */
  readonly plotSize: RefObject<Size>;
  /** Width of the histogram canvas, CSS px. */
  readonly histWidth: number;
}

/** The scheduler keys of a disk's views (its heat map, throughput strip, overlay and histogram). */
export function diskViews(dev: string): { heat: string; tput: string; overlay: string; hist: string } {
  return { heat: `heat:${dev}`, tput: `tput:${dev}`, overlay: `overlay:${dev}`, hist: `hist:${dev}` };
}

/** What a heat map's overlay drew: the render context (where each cell is) and the incident marks. */
export interface DrawnHeat {
  readonly rc: RenderContext;
  readonly incidents: IncidentMarks | undefined;
}

export const HEAT_DRAWN = new DrawnKind<DrawnHeat, HTMLCanvasElement>('heat-overlay');

/** What the heat map of `dev` drew last, on its overlay (the layer pointers land on). */
export function drawnHeat(dev: string): Drawn<DrawnHeat, HTMLCanvasElement> | undefined {
  return scheduler.drawn(diskViews(dev).overlay, HEAT_DRAWN);
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
    // The share axis under the histogram changes with the largest share only: each live second
    // brings a new summary, and an axis written again is a style and layout pass for nothing.
    let shareKey = '';

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

    const drawMarks: DrawFn = (record) => {
      const canvas = el.overlay.current;
      const rc = heatContext(size.current.width, size.current.height);
      if (!canvas || !rc) return;
      const marks = overlayMarks(dev);
      drawOverlay(canvas, rc, marks, renderTheme(resolvedTheme(useUi.getState().theme)));
      record(HEAT_DRAWN, canvas, { rc, incidents: marks.incidents });
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
          quantiles: shownQuantiles(d, dev),
          maxShare: s.maxShare,
          highlight: hv.dev === dev && hv.bucket !== undefined ? hv.bucket : undefined,
        },
        renderTheme(resolvedTheme(ui.theme)),
      );
      const key = `${s.maxShare}/${el.histWidth}`;
      if (key !== shareKey && el.shareAxis.current) {
        shareKey = key;
        renderShareAxis(el.shareAxis.current, s.maxShare, el.histWidth);
      }
    };

    const tput = throughputDraw(
      dev,
      () => el.tput.current,
      () => el.tputLabels.current,
      () => ({ width: size.current.width, height: el.tputHeight }),
    );

    const keys = diskViews(dev);
    const unregister = [
      scheduler.register(keys.heat, drawHeat),
      scheduler.register(keys.tput, tput),
      scheduler.register(keys.overlay, drawMarks),
      scheduler.register(keys.hist, drawHist),
      useHover.subscribe((s, p) => {
        if (s.t !== p.t || s.dev !== p.dev || s.col !== p.col || s.bucket !== p.bucket || s.drag !== p.drag) {
          scheduler.invalidate(keys.overlay);
          if (s.t !== p.t || s.drag !== p.drag) scheduler.invalidate(keys.tput);
          if ((s.dev === dev || p.dev === dev) && (s.bucket !== p.bucket || s.dev !== p.dev)) scheduler.invalidate(keys.hist);
        }
      }),
      useUi.subscribe((s, p) => {
        if (s.theme !== p.theme) {
          scheduler.invalidate(keys.hist);
          scheduler.invalidate(keys.tput);
        }
        if (s.colour !== p.colour || s.norm !== p.norm) scheduler.invalidate(keys.heat);
      }),
      useData.subscribe((s, p) => {
        if (s.summaryVersion !== p.summaryVersion || s.summary !== p.summary || s.rankSamples !== p.rankSamples)
          scheduler.invalidate(keys.hist);
        if (s.selection !== p.selection || s.compare !== p.compare) scheduler.invalidate(keys.overlay);
      }),
    ];
    const overlay = el.overlay.current;
    // Gestures hit-test with the geometry in force now (a wheel turn lands before the redraw it causes).
    const geometry = heatGeometry(() => {
      const rc = heatContext(size.current.width, size.current.height);
      return overlay && rc ? { rect: overlay.getBoundingClientRect(), rc } : undefined;
    });
    const unbind = overlay ? bindHeatmapGestures(overlay, dev, geometry) : undefined;
    return () => {
      for (const u of unregister) u();
      unbind?.();
    };
  }, [dev, el]);
}

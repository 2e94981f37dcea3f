/**
 * A heat map on screen: the cell canvas, the percentile-line canvas above it and (optionally)
 * a "no data" canvas below it for seconds the agent did not record, drawn for a
 * RenderContext. Two paths:
 *
 *   full         every canvas repainted for a window a little wider than the visible one
 *                (by contract.ts slackFor), anchored at the window's start;
 *   incremental  the window only slid right at the same scale (live) and columns changed
 *                (a new second): only those columns are recoloured, re-blitted, re-traced and
 *                their "no data" bands redrawn, and the canvases are shifted left with a CSS
 *                transform (the compositor moves them; nothing else is repainted). When the
 *                slack is used up, a full paint re-anchors.
 *
 * Everything else (zoom, pan, resize, colours, new data window) is a full paint.
 */
import type { CountScale } from '../model/colour.js';
import { type Known, NOTHING_KNOWN, unrecordedRuns } from '../model/gaps.js';
import type { HeatMatrix } from '../model/heatmatrix.js';
import type { PercentileTrack } from '../model/percentiles.js';
import {
  clearedCanvas,
  pageContext,
  prepareCanvas,
  pxPerSecond,
  type RenderContext,
  renderContext,
  slackFor,
  type SlideAnchor,
  slidesWithin,
  slideTransform,
} from './contract.js';
import { paintRuns } from './gaps.js';
import { HeatmapBitmap } from './heatmap.js';
import { PercentileLayer } from './percentileLines.js';

export interface LayerStyle {
  readonly palette: Uint32Array;
  readonly scale: CountScale;
  readonly percentiles: boolean;
  readonly lineColours: readonly string[];
  /** Colour of the "no data" hatching. */
  readonly gapColour?: string | undefined;
}

interface Anchor extends SlideAnchor {
  readonly uLo: number;
  readonly uHi: number;
  readonly matrix: HeatMatrix;
  readonly track: PercentileTrack | undefined;
  readonly style: LayerStyle;
  /** The known range the "no data" bands were drawn for (advances while live). */
  known: Known;
}

export interface FullPaintTimings {
  /** Colouring cells into the ImageData, and putImageData of it. */
  colourMs: number;
  uploadMs: number;
  /** drawImage of the visible columns. */
  blitMs: number;
  /** Percentiles (derived where stale), traced, rasterized and uploaded. */
  linesMs: number;
  /** "No data" bands. */
  gapsMs: number;
}

export interface DrawResult {
  readonly kind: 'full' | 'incremental' | 'empty';
  readonly columns: number;
}

/** Writes a canvas's CSS width and transform only when they change (writes cost a style pass). */
function setStyle(c: HTMLCanvasElement, width: string, transform: string): void {
  if (c.style.width !== width) c.style.width = width;
  if (c.style.transform !== transform) c.style.transform = transform;
}

/**
 * Device pixels per CSS pixel of the cell and line canvases: at most one. Both hold flat pixels
 * on the CSS pixel grid (cells are flat colour; the lines are hand-rasterized runs one CSS pixel
 * wide, never antialiased: render/percentileLines.ts), so the compositor upscales them exactly
 * at an integer DPR (`image-rendering: pixelated`, heatmaps.css) off the main thread. At DPR 2,
 * rasterizing the cells' blit took 2.7 ms of a 4.7 ms full redraw (bench/web, 2,700 × 600
 * device pixels), and rasterizing the lines into four times the pixels 2.0 ms of JavaScript
 * against 1.1 at DPR 1. A line still covers one CSS pixel, on the cells' own grid. The "no data"
 * bands keep the device's resolution: their hatching is stroked and antialiased.
 */
function flatDpr(dpr: number): number {
  return Math.min(dpr, 1);
}

/** `rc` for the cell and line canvases: the same window and size at their resolution (flatDpr). */
function flatContext(rc: RenderContext): RenderContext {
  const vp = rc.viewport;
  const dpr = flatDpr(vp.dpr);
  return dpr === vp.dpr ? rc : renderContext({ ...vp, dpr }, rc.step);
}

/** The column after the last of `runs` (ascending, not empty). */
function lastEnd(runs: readonly (readonly [number, number])[]): number {
  return (runs[runs.length - 1] as readonly [number, number])[1];
}

export class HeatLayers {
  private bitmap: HeatmapBitmap | undefined;
  private readonly lines = new PercentileLayer();
  private anchor: Anchor | undefined;
  /** What the "no data" canvas holds ('' = unknown): a full paint with the same skips it. */
  private gapsKey = '';
  /**
   * Where the "no data" canvas's bands end (the column after the rightmost painted since it was
   * cleared; -Infinity: none): a live second whose new columns lie past it and hold no band leave
   * the canvas alone. Touched, it would be handed to the compositor again, every second, for
   * every disk.
   */
  private gapsTo = -Infinity;

  constructor(
    private readonly heat: HTMLCanvasElement,
    private readonly linesCanvas: HTMLCanvasElement,
    private readonly gapsCanvas?: HTMLCanvasElement,
  ) {}

  private canvases(): HTMLCanvasElement[] {
    return this.gapsCanvas ? [this.gapsCanvas, this.heat, this.linesCanvas] : [this.heat, this.linesCanvas];
  }

  /** The next draw is a full paint (`recolour`: every cell coloured again, too). */
  invalidate(recolour = false): void {
    this.anchor = undefined;
    if (recolour) this.bitmap?.invalidate();
  }

  /** What the parts of the last full paint cost, in ms of JavaScript (benchmarks). */
  get lastFull(): FullPaintTimings {
    return this.timings;
  }

  private timings: FullPaintTimings = { colourMs: 0, uploadMs: 0, blitMs: 0, linesMs: 0, gapsMs: 0 };

  /**
   * Draws `matrix` (and its percentile `track`) for `rc`. `known`: where a column without any
   * frame was not recorded (model/gaps.ts), drawn as "no data" when there is a gaps canvas.
   */
  draw(
    rc: RenderContext,
    matrix: HeatMatrix | undefined,
    track: PercentileTrack | undefined,
    style: LayerStyle,
    known: Known = NOTHING_KNOWN,
  ): DrawResult {
    const vp = rc.viewport;
    if (!matrix) {
      this.clear(vp.width, vp.height, vp.dpr);
      return { kind: 'empty', columns: 0 };
    }
    if (this.bitmap?.matrix !== matrix) {
      this.bitmap = new HeatmapBitmap(matrix);
      this.anchor = undefined;
    }
    this.bitmap.setColours(style.palette, style.scale);
    const a = this.anchor;
    const canSlide =
      a !== undefined &&
      slidesWithin(a, rc) &&
      a.matrix === matrix &&
      a.track === track &&
      a.style.palette === style.palette &&
      a.style.scale === style.scale &&
      a.style.percentiles === style.percentiles &&
      a.style.gapColour === style.gapColour &&
      a.style.lineColours === style.lineColours &&
      a.known.from === known.from &&
      a.uLo === vp.uLo &&
      a.uHi === vp.uHi;
    if (!canSlide) return this.full(rc, matrix, track, style, pxPerSecond(rc), known);
    return this.slide(a, rc, matrix, track, style, known);
  }

  private clear(width: number, height: number, dpr: number): void {
    for (const c of this.canvases()) {
      const ctx = prepareCanvas(c, width, height, c === this.gapsCanvas ? dpr : flatDpr(dpr));
      ctx?.clearRect(0, 0, width, height);
      setStyle(c, `${width}px`, '');
    }
    this.gapsKey = '';
    this.gapsTo = -Infinity;
    this.lines.forget();
    this.anchor = undefined;
  }

  private full(
    rc: RenderContext,
    matrix: HeatMatrix,
    track: PercentileTrack | undefined,
    style: LayerStyle,
    pxPerSec: number,
    known: Known,
  ): DrawResult {
    const vp = rc.viewport;
    const wide = vp.width + slackFor(vp.width);
    const arc = renderContext({ ...vp, to: vp.from + wide / pxPerSec, width: wide }, rc.step);
    const flat = flatContext(arc);
    const ctx = prepareCanvas(this.heat, wide, vp.height, flat.viewport.dpr);
    const lctx = prepareCanvas(this.linesCanvas, wide, vp.height, flat.viewport.dpr);
    for (const c of this.canvases()) setStyle(c, `${wide}px`, '');
    const tg = performance.now();
    if (this.gapsCanvas) this.fullGaps(this.gapsCanvas, arc, matrix, known, style.gapColour);
    const gapsMs = performance.now() - tg;
    const bmp = this.bitmap as HeatmapBitmap;
    const st = bmp.sync();
    const t0 = performance.now();
    if (ctx) {
      ctx.clearRect(0, 0, wide, vp.height);
      bmp.draw(ctx, flat);
    }
    const t1 = performance.now();
    if (lctx) {
      if (style.percentiles && track) {
        const up = this.lines.render(flat, track, style.lineColours);
        if (up.w > 0 && up.h > 0) lctx.putImageData(up.image, 0, 0, up.x, up.y, up.w, up.h);
      } else {
        lctx.clearRect(0, 0, wide, vp.height);
        this.lines.forget();
      }
    }
    this.timings = { colourMs: st.colourMs ?? 0, uploadMs: st.uploadMs ?? 0, blitMs: t1 - t0, linesMs: performance.now() - t1, gapsMs };
    this.anchor = {
      rc: arc,
      pxPerSec,
      width: vp.width,
      height: vp.height,
      dpr: vp.dpr,
      uLo: vp.uLo,
      uHi: vp.uHi,
      matrix,
      track,
      style,
      known,
    };
    return { kind: 'full', columns: st.columns };
  }

  /**
   * Repaints the "no data" canvas for a full paint, unless it already shows exactly that
   * (same place, size, colour and runs: new counts or colours elsewhere leave it alone).
   */
  private fullGaps(canvas: HTMLCanvasElement, arc: RenderContext, matrix: HeatMatrix, known: Known, colour: string | undefined): void {
    const vp = arc.viewport;
    const step = matrix.step;
    const runs = colour ? unrecordedRuns(matrix, Math.floor(vp.from / step), Math.ceil(vp.to / step), known) : [];
    const key = `${arc.time.scale}/${arc.time.offset}/${vp.width}x${vp.height}@${vp.dpr}/${colour}/${step}/${runs.join(';')}`;
    if (key === this.gapsKey) return;
    if (runs.length === 0 && this.gapsTo === -Infinity) {
      // Blank, and to stay blank: sized (and its transform set) for the slides to come, not touched.
      prepareCanvas(canvas, vp.width, vp.height, vp.dpr);
      this.gapsKey = key;
      return;
    }
    const ctx = clearedCanvas(canvas, vp);
    if (!ctx) return;
    this.gapsTo = colour && paintRuns(ctx, arc, runs, step, colour) > 0 ? lastEnd(runs) : -Infinity;
    this.gapsKey = key;
  }

  private slide(
    a: Anchor,
    rc: RenderContext,
    matrix: HeatMatrix,
    track: PercentileTrack | undefined,
    style: LayerStyle,
    known: Known,
  ): DrawResult {
    const bmp = this.bitmap as HeatmapBitmap;
    const st = bmp.sync();
    const arc = a.rc;
    const flat = flatContext(arc);
    const vp = arc.viewport;
    const step = matrix.step;
    // "No data" bands: the changed columns, and those the known range's end moved over.
    let gLo = st.columns > 0 ? st.lo : Infinity;
    let gHi = st.columns > 0 ? st.hi : -Infinity;
    if (known.to !== a.known.to) {
      const lo = Math.min(known.to, a.known.to);
      const hi = Math.max(known.to, a.known.to);
      gLo = Math.min(gLo, Math.floor((Number.isFinite(lo) ? lo : hi) / step));
      gHi = Math.max(gHi, Math.ceil((Number.isFinite(hi) ? hi : lo) / step));
      a.known = known;
    }
    if (this.gapsCanvas && style.gapColour && gLo < gHi && Number.isFinite(gLo) && Number.isFinite(gHi)) {
      const runs = unrecordedRuns(matrix, gLo, gHi, known);
      const gctx = runs.length === 0 && gLo >= this.gapsTo ? null : pageContext(this.gapsCanvas);
      if (gctx) {
        const dpr = vp.dpr;
        const x0 = Math.round((arc.time.scale * gLo * step + arc.time.offset) * dpr) / dpr;
        const x1 = Math.round((arc.time.scale * gHi * step + arc.time.offset) * dpr) / dpr;
        gctx.clearRect(x0, 0, x1 - x0, vp.height);
        if (paintRuns(gctx, arc, runs, step, style.gapColour) > 0) this.gapsTo = Math.max(this.gapsTo, lastEnd(runs));
        this.gapsKey = '';
      }
    }
    if (st.columns > 0) {
      const ctx = pageContext(this.heat);
      if (ctx) {
        // The changed columns' pixels, snapped like HeatmapBitmap.draw snaps them (at the cell canvas's resolution).
        const dpr = flat.viewport.dpr;
        const x0 = Math.round((arc.time.scale * st.lo * step + arc.time.offset) * dpr) / dpr;
        const x1 = Math.round((arc.time.scale * st.hi * step + arc.time.offset) * dpr) / dpr;
        ctx.clearRect(x0, 0, x1 - x0, vp.height);
        bmp.draw(ctx, { ...flat, viewport: { ...flat.viewport, from: st.lo * step, to: st.hi * step } });
      }
      const lctx = pageContext(this.linesCanvas);
      if (lctx && style.percentiles && track) {
        const up = this.lines.renderColumns(flat, track, style.lineColours, st.lo, st.hi);
        if (up.w > 0 && up.h > 0) lctx.putImageData(up.image, 0, 0, up.x, up.y, up.w, up.h);
      }
    }
    // Slide: the anchored canvases move left by how far the window moved.
    const t = slideTransform(a, rc);
    if (this.heat.style.transform !== t) for (const c of this.canvases()) c.style.transform = t;
    return { kind: 'incremental', columns: st.columns };
  }
}

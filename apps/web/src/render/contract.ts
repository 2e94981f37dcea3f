/**
 * The one contract every canvas view renders through (Perfetto's track contract): a visible
 * window (time × latency), a size in CSS pixels, a device pixel ratio, the resolution of the
 * data (seconds per column) and the derived maps. Renderers are plain functions of
 * (context, data, RenderContext); they hold no state about where they are on the page.
 */
import { type Affine, bucketToCss, timeToCss, type Viewport } from '../model/coords.js';

export interface RenderContext {
  readonly viewport: Viewport;
  /** Seconds per data column. */
  readonly step: number;
  /** time → css x. */
  readonly time: Affine;
  /** bucket u → css y. */
  readonly bucket: Affine;
}

export function renderContext(viewport: Viewport, step: number): RenderContext {
  return { viewport, step, time: timeToCss(viewport), bucket: bucketToCss(viewport) };
}

/**
 * Options of every canvas on the page (pageContext): `desynchronized` hands a canvas's pixels to
 * the compositor when they are drawn, instead of with the page's next commit. Without it,
 * chromium with software compositing (no GPU: VMs, remote desktops, headless) copies every
 * visible canvas into the commit of every frame that changes anything on the page, drawn or not:
 * 1-8 ms a canvas, five to thirty canvases here, most frames (bench/web's import: 25-74 ms of a
 * frame's commit; a throwaway page of four untouched 1222 × 256 canvases and a changing line of
 * text, 80 copies in 20 frames, none with the option).
 */
const PAGE_CANVAS: CanvasRenderingContext2DSettings = { desynchronized: true };

/**
 * The 2D context of a canvas on the page. The first getContext call fixes a canvas's options, so
 * every on-page canvas is first asked for here (offscreen scratch canvases are not composited).
 */
export function pageContext(canvas: HTMLCanvasElement): CanvasRenderingContext2D | null {
  return canvas.getContext('2d', PAGE_CANVAS);
}

/**
 * Sizes a canvas's backing store for `dpr` (only when it changed: resizing clears it) and
 * returns its context scaled so callers draw in CSS pixels.
 */
export function prepareCanvas(canvas: HTMLCanvasElement, width: number, height: number, dpr: number): CanvasRenderingContext2D | null {
  const w = Math.max(1, Math.round(width * dpr));
  const h = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const ctx = pageContext(canvas);
  if (!ctx) return null;
  ctx.setTransform(w / width, 0, 0, h / height, 0, 0);
  return ctx;
}

/**
 * What each drawn element (an axis's svg group, a canvas) shows, as its renderer's key: one map
 * for the page, dropped with the element.
 */
const shown = new WeakMap<object, string>();

/**
 * True when `target` already shows exactly `key` (its renderer's inputs, as a string); otherwise
 * records it, and the caller draws. A live second brings a new frame and, moments later, a new
 * summary, and each invalidates the views: a view whose inputs did not change draws nothing (a
 * canvas drawn again is also handed to the compositor again). Only for elements drawn by the one
 * renderer that keys them.
 */
export function alreadyShown(target: object, key: string): boolean {
  if (shown.get(target) === key) return true;
  shown.set(target, key);
  return false;
}

/** The extent of a line of text in a font: what renderers read of canvas TextMetrics. */
export interface TextBox {
  readonly width: number;
  /** Above and below the alphabetic baseline: the font's, whatever the glyphs (fontBoundingBox). */
  readonly ascent: number;
  readonly descent: number;
}

/** Measured texts, by font and text; a few hundred at most (cleared past that, never grows with use). */
const measured = new Map<string, TextBox>();

/**
 * `text` measured in `ctx`'s current font. The labels drawn each live second (the strips' scales,
 * the histograms' percentiles) are mostly the ones drawn the second before, and a measureText
 * call cost ~30 µs here (7 ms of a 20 s profile of the quiet live page, for three strips alone).
 */
export function measuredText(ctx: CanvasRenderingContext2D, text: string): TextBox {
  const key = `${ctx.font}\n${text}`;
  let box = measured.get(key);
  if (!box) {
    if (measured.size >= 512) measured.clear();
    const m = ctx.measureText(text);
    box = { width: m.width, ascent: m.fontBoundingBoxAscent, descent: m.fontBoundingBoxDescent };
    measured.set(key, box);
  }
  return box;
}

/**
 * Each canvas's pixel buffer, kept from one paint to the next (dropped with the canvas), for
 * renderers that write pixels rather than draw. A new ImageData per paint costs more than the
 * drawing: its fresh memory is faulted in page by page as the pixels first touch it (bench/web's
 * live page, an hour following at 45 k IOPS: the offset scatter took 24 ms a paint, once a
 * second; 3–6 ms with the buffer kept and cleared).
 */
const keptImages = new WeakMap<HTMLCanvasElement, ImageData>();

/** The canvas's kept ImageData at the canvas's size, every pixel transparent: a new one when the size changed. */
export function keptImage(canvas: HTMLCanvasElement, ctx: CanvasRenderingContext2D): ImageData {
  const kept = keptImages.get(canvas);
  if (kept && kept.width === canvas.width && kept.height === canvas.height) {
    new Uint32Array(kept.data.buffer).fill(0);
    return kept;
  }
  const image = ctx.createImageData(canvas.width, canvas.height);
  keptImages.set(canvas, image);
  return image;
}

/**
 * Extra width, CSS px, painted to the right of the visible window by the layers that slide while
 * live (the heat maps' cells, lines and "no data" bands, the throughput strips' bars): the live
 * seconds it takes to use it up pass with no paint of the whole canvas.
 */
export function slackFor(width: number): number {
  return Math.round(Math.max(48, width * 0.125));
}

/**
 * Where a layer that slides while live was painted last (contract of heatLayers.ts and
 * throughput.ts): `rc` is the anchored window, wider than the visible one by slackFor, at
 * `pxPerSec`, for a view of `width` × `height` CSS px at `dpr`.
 */
export interface SlideAnchor {
  readonly rc: RenderContext;
  readonly pxPerSec: number;
  readonly width: number;
  readonly height: number;
  readonly dpr: number;
}

/** Pixels per second of the window of `rc`. */
export function pxPerSecond(rc: RenderContext): number {
  const vp = rc.viewport;
  return vp.width / (vp.to - vp.from);
}

/**
 * Whether the window of `rc` is part of what was painted at `a`: the same size, resolution and
 * scale, inside the anchored window. The layer's own inputs (data, colours) are its to compare.
 */
export function slidesWithin(a: SlideAnchor, rc: RenderContext): boolean {
  const vp = rc.viewport;
  const pxPerSec = pxPerSecond(rc);
  return (
    a.width === vp.width &&
    a.height === vp.height &&
    a.dpr === vp.dpr &&
    Math.abs(a.pxPerSec - pxPerSec) <= 1e-9 * pxPerSec &&
    vp.from >= a.rc.viewport.from &&
    vp.to <= a.rc.viewport.to
  );
}

/** The CSS transform that shows the window of `rc` on a canvas painted at `a`: moved left by how far the window moved, on the device pixel grid. */
export function slideTransform(a: SlideAnchor, rc: RenderContext): string {
  const dx = (rc.viewport.from - a.rc.viewport.from) * a.pxPerSec;
  return dx === 0 ? '' : `translateX(${-Math.round(dx * a.dpr) / a.dpr}px)`;
}

/** A canvas off the page, to draw pixels into and blit from: an OffscreenCanvas where there is one. */
export type Surface = OffscreenCanvas | HTMLCanvasElement;
export type Surface2D = OffscreenCanvasRenderingContext2D | CanvasRenderingContext2D;

/** A new off-page canvas of `width` × `height` pixels and its 2D context (not composited: no pageContext). */
export function scratchSurface(width: number, height: number): { canvas: Surface; ctx: Surface2D } {
  if (typeof OffscreenCanvas !== 'undefined') {
    const canvas = new OffscreenCanvas(width, height);
    const ctx = canvas.getContext('2d');
    if (ctx) return { canvas, ctx };
  }
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('2D canvas unavailable');
  return { canvas, ctx };
}

/** A canvas's size in CSS pixels and its device pixel ratio. */
export interface CanvasBox {
  readonly width: number;
  readonly height: number;
  readonly dpr: number;
}

/** prepareCanvas, then cleared: how a renderer that repaints its whole canvas starts. */
export function clearedCanvas(canvas: HTMLCanvasElement, box: CanvasBox): CanvasRenderingContext2D | null {
  const ctx = prepareCanvas(canvas, box.width, box.height, box.dpr);
  ctx?.clearRect(0, 0, box.width, box.height);
  return ctx;
}

/** Themed colours renderers need (read from CSS custom properties by the views). */
export interface RenderTheme {
  readonly background: string;
  readonly foreground: string;
  readonly muted: string;
  readonly grid: string;
  readonly accent: string;
  readonly bar: string;
  readonly selection: string;
  /** Loud marks: stuck I/O, failed I/Os. */
  readonly alert: string;
  /** Requeues (a warning, quieter than failures). */
  readonly warn: string;
  /** Hatching of "no data" (not recorded) bands. */
  readonly gap: string;
  /** Per percentile line, in LINE_QUANTILES order. */
  readonly percentiles: readonly string[];
  /** Per histogram mark, in MARK_QUANTILES order. */
  readonly marks: readonly string[];
  readonly font: string;
}

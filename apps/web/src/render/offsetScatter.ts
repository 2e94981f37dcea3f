/**
 * The offset scatter's points: one CSS pixel per sampled I/O (dpr × dpr device pixels), written
 * into an ImageData and put at once (thousands of points, no path per point). The slowest are
 * drawn last so an outlier is never hidden under a fast I/O on the same pixel; the brushed box
 * and a brush under way are outlined above them.
 */
import { color } from 'd3';
import type { BucketSchema, IoSample, LatencyKind } from '@blkheat/shared-types';
import { packRgba } from '../model/colour.js';
import { apply, timeToCss } from '../model/coords.js';
import {
  latencyPaletteIndex,
  type OffsetBox,
  type OffsetViewport,
  sampleLatencyNs,
  samplePixel,
  sectorToCss,
} from '../model/offsetScatter.js';
import { clearedCanvas, keptImage } from './contract.js';

/** How the points are coloured: by latency in the heat maps' window and palette, or by class. */
export type ScatterColouring =
  | {
      readonly by: 'latency';
      readonly kind: LatencyKind;
      readonly uLo: number;
      readonly uHi: number;
      readonly schema: BucketSchema;
      readonly palette: Uint32Array;
    }
  | { readonly by: 'class'; readonly kind: LatencyKind; readonly colours: ReadonlyMap<string, string> };

/** Packed RGBA of a CSS colour (class colours are hex). */
function packCss(css: string): number {
  const c = color(css)?.rgb();
  return c ? packRgba(Math.round(c.r), Math.round(c.g), Math.round(c.b), 255) : 0;
}

/** Each sample list's draw order, for the phase it was sorted by (a list is never changed once shown). */
const orders = new WeakMap<readonly IoSample[], { readonly kind: LatencyKind; readonly order: readonly IoSample[] }>();

/**
 * The order points are drawn in: fastest first, unknown latency before every known one. Kept per
 * list: a live view paints every second as it slides, while its samples change every few seconds
 * (sorting 2,000 of them each paint was about half of the scatter's time on the quiet live page).
 */
export function drawOrder(rows: readonly IoSample[], kind: LatencyKind): readonly IoSample[] {
  const kept = orders.get(rows);
  if (kept?.kind === kind) return kept.order;
  const order = rows
    .map((s, i) => ({ s, i, v: sampleLatencyNs(s, kind) ?? -1 }))
    .sort((a, b) => a.v - b.v || a.i - b.i)
    .map((p) => p.s);
  orders.set(rows, { kind, order });
  return order;
}

export function paintOffsetScatter(
  canvas: HTMLCanvasElement,
  vp: OffsetViewport,
  rows: readonly IoSample[],
  colouring: ScatterColouring,
  marks: {
    readonly box?: OffsetBox | undefined;
    readonly brush?: OffsetBox | undefined;
    /** Truncated answer: samples after this time were not loaded (shaded, so it does not read as idle). */
    readonly unloadedFrom?: number | undefined;
    readonly colour: string;
    readonly muted: string;
    readonly gap: string;
  },
): void {
  const ctx = clearedCanvas(canvas, vp);
  if (!ctx) return;
  const w = canvas.width;
  const h = canvas.height;
  const image = keptImage(canvas, ctx);
  const words = new Uint32Array(image.data.buffer);
  const classWords = new Map<string, number>();
  const unknown = packCss(marks.muted);
  for (const s of drawOrder(rows, colouring.kind)) {
    const p = samplePixel(s, vp);
    if (!p) continue;
    let word: number;
    if (colouring.by === 'latency') {
      const ns = sampleLatencyNs(s, colouring.kind);
      word = ns === null ? unknown : (colouring.palette[latencyPaletteIndex(ns, colouring.uLo, colouring.uHi, colouring.schema)] as number);
    } else {
      let c = classWords.get(s.c);
      if (c === undefined) classWords.set(s.c, (c = packCss(colouring.colours.get(s.c) ?? marks.muted)));
      word = c;
    }
    // The CSS pixel (x, y) covers device pixels [x·dpr, (x+1)·dpr) in each direction.
    const x0 = Math.round(p.x * vp.dpr);
    const y0 = Math.round(p.y * vp.dpr);
    const x1 = Math.min(w, Math.round((p.x + 1) * vp.dpr));
    const y1 = Math.min(h, Math.round((p.y + 1) * vp.dpr));
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) words[y * w + x] = word;
  }
  ctx.putImageData(image, 0, 0);
  const t = timeToCss(vp);
  const y = sectorToCss(vp);
  if (marks.unloadedFrom !== undefined) {
    const x0 = Math.max(0, Math.ceil(apply(t, marks.unloadedFrom)) + 1);
    if (x0 < vp.width) {
      ctx.save();
      ctx.globalAlpha = 0.18;
      ctx.fillStyle = marks.gap;
      ctx.fillRect(x0, 0, vp.width - x0, vp.height);
      ctx.restore();
    }
  }
  const outline = (b: OffsetBox, dashed: boolean): void => {
    const xa = apply(t, b.from);
    const xb = apply(t, b.to);
    const ya = apply(y, b.sectorHi);
    const yb = apply(y, b.sectorLo);
    ctx.save();
    ctx.strokeStyle = marks.colour;
    ctx.lineWidth = 1;
    if (dashed) ctx.setLineDash([4, 3]);
    ctx.strokeRect(Math.round(xa) - 0.5, Math.round(ya) - 0.5, Math.round(xb - xa) + 1, Math.round(yb - ya) + 1);
    ctx.restore();
  };
  if (marks.box) outline(marks.box, false);
  if (marks.brush) outline(marks.brush, true);
}

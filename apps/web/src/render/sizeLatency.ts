/**
 * The size × latency heat map and its size histogram. Cells are coloured with the main heat
 * map's CountScale and palette (model/colour.ts) into an ImageData at data resolution (one
 * pixel per size class × bucket) and scaled up nearest-neighbour, as render/heatmap.ts does;
 * the histogram is one bar per size class on the same x columns.
 */
import type { CountScale } from '../model/colour.js';
import { apply, timeToCss, bucketToCss, type Viewport } from '../model/coords.js';
import type { SizeLatency } from '../model/sizeLatency.js';
import { clearedCanvas, type RenderTheme, scratchSurface, type Surface, type Surface2D } from './contract.js';

/**
 * The grid as a viewport: x is the column index of a size class (0..sizes.length), y the
 * latency bucket window [uLo, uHi), so the coordinate maps of model/coords.ts apply as they are.
 */
export function sizeGridViewport(m: SizeLatency, uLo: number, uHi: number, width: number, height: number, dpr: number): Viewport {
  return { from: 0, to: Math.max(1, m.sizes.length), uLo, uHi, width, height, dpr };
}

/** A panel canvas's cells at data resolution: their pixels, and the off-page canvas they are blitted from. */
interface CellScratch {
  readonly image: ImageData;
  readonly surface: { readonly canvas: Surface; readonly ctx: Surface2D };
}

const scratches = new WeakMap<HTMLCanvasElement, CellScratch>();

/**
 * The scratch of `canvas` for a grid of `cols` × `rows` cells, kept while the grid's size stays: a
 * new off-page canvas each live second was a new canvas resource to make and to collect.
 */
function scratchFor(canvas: HTMLCanvasElement, cols: number, rows: number): CellScratch {
  const kept = scratches.get(canvas);
  if (kept && kept.image.width === cols && kept.image.height === rows) return kept;
  const made = { image: new ImageData(cols, rows), surface: scratchSurface(cols, rows) };
  scratches.set(canvas, made);
  return made;
}

export function paintSizeLatency(
  canvas: HTMLCanvasElement,
  vp: Viewport,
  m: SizeLatency,
  scale: CountScale,
  palette: Uint32Array,
  marks: { readonly selected?: { readonly col: number; readonly bucket: number } | undefined; readonly colour: string },
): void {
  const ctx = clearedCanvas(canvas, vp);
  if (!ctx) return;
  const cols = m.sizes.length;
  const rows = Math.max(0, Math.floor(vp.uHi) - Math.floor(vp.uLo));
  if (cols === 0 || rows === 0) return;
  const scratch = scratchFor(canvas, cols, rows);
  const image = scratch.image;
  const words = new Uint32Array(image.data.buffer);
  for (let c = 0; c < cols; c++) {
    const h = m.hists[c] as Float64Array;
    for (let r = 0; r < rows; r++) {
      const count = h[Math.floor(vp.uLo) + r] ?? 0;
      // Row 0 of the image is the top: the highest latency.
      words[(rows - 1 - r) * cols + c] = palette[scale.index(count)] as number;
    }
  }
  scratch.surface.ctx.putImageData(image, 0, 0);
  const off = scratch.surface.canvas;
  ctx.imageSmoothingEnabled = false;
  const x = timeToCss(vp);
  const y = bucketToCss(vp);
  const top = apply(y, Math.floor(vp.uLo) + rows);
  ctx.drawImage(off, apply(x, 0), top, apply(x, cols) - apply(x, 0), apply(y, Math.floor(vp.uLo)) - top);
  const sel = marks.selected;
  if (sel) {
    // The selected cell outlined just outside its edges (cells may be 4 px tall: an outline
    // inside would hide the colour it was picked by).
    ctx.strokeStyle = marks.colour;
    ctx.lineWidth = 2;
    const y0 = apply(y, sel.bucket + 1);
    ctx.strokeRect(apply(x, sel.col) - 1, y0 - 1, apply(x, sel.col + 1) - apply(x, sel.col) + 2, apply(y, sel.bucket) - y0 + 2);
  }
}

/** Count per size class, bars up from the bottom on the heat map's x columns, scaled to the tallest. */
export function paintSizeHistogram(canvas: HTMLCanvasElement, vp: Viewport, m: SizeLatency, theme: RenderTheme): void {
  const ctx = clearedCanvas(canvas, vp);
  if (!ctx) return;
  const max = Math.max(0, ...m.counts);
  if (max <= 0) return;
  const x = timeToCss(vp);
  ctx.fillStyle = theme.bar;
  m.counts.forEach((n, c) => {
    if (n <= 0) return;
    const h = Math.max(1, (n / max) * vp.height);
    const x0 = apply(x, c);
    ctx.fillRect(x0 + 1, vp.height - h, Math.max(1, apply(x, c + 1) - x0 - 2), h);
  });
}

/**
 * The size × latency heat map and its size histogram. Cells are coloured with the main heat
 * map's CountScale and palette (model/colour.ts) into an ImageData at data resolution (one
 * pixel per size class × bucket) and scaled up nearest-neighbour, as render/heatmap.ts does;
 * the histogram is one bar per size class on the same x columns.
 */
import type { CountScale } from '../model/colour.js';
import { apply, timeToCss, bucketToCss, type Viewport } from '../model/coords.js';
import type { SizeLatency } from '../model/sizeLatency.js';
import { clearedCanvas, type RenderTheme } from './contract.js';

/**
 * The grid as a viewport: x is the column index of a size class (0..sizes.length), y the
 * latency bucket window [uLo, uHi), so the coordinate maps of model/coords.ts apply as they are.
 */
export function sizeGridViewport(m: SizeLatency, uLo: number, uHi: number, width: number, height: number, dpr: number): Viewport {
  return { from: 0, to: Math.max(1, m.sizes.length), uLo, uHi, width, height, dpr };
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
  const image = new ImageData(cols, rows);
  const words = new Uint32Array(image.data.buffer);
  for (let c = 0; c < cols; c++) {
    const h = m.hists[c] as Float64Array;
    for (let r = 0; r < rows; r++) {
      const count = h[Math.floor(vp.uLo) + r] ?? 0;
      // Row 0 of the image is the top: the highest latency.
      words[(rows - 1 - r) * cols + c] = palette[scale.index(count)] as number;
    }
  }
  const off = document.createElement('canvas');
  off.width = cols;
  off.height = rows;
  off.getContext('2d')?.putImageData(image, 0, 0);
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

/** Sparklines in table rows: a latency distribution (bars over buckets, the class breakdown) and a value over time (a line, the fleet ranking). */
import { alreadyShown, type CanvasBox, clearedCanvas } from './contract.js';

/**
 * A latency distribution: bars over buckets [uLo, uHi), scaled to the tallest. A row's counts
 * change every live second while its bars, 18 px tall, mostly do not: a canvas that shows them
 * already is left alone (alreadyShown).
 */
export function paintSpark(
  canvas: HTMLCanvasElement,
  hist: ArrayLike<number>,
  uLo: number,
  uHi: number,
  size: CanvasBox,
  colour: string,
): void {
  const { width: W, height: H, dpr } = size;
  const r0 = Math.floor(uLo);
  const r1 = Math.ceil(uHi);
  let max = 0;
  for (let r = r0; r < r1; r++) max = Math.max(max, hist[r] ?? 0);
  // Each bar's height in device pixels, as drawn (0: none).
  const heights: number[] = [];
  for (let r = r0; r < r1; r++) {
    const v = max > 0 ? (hist[r] ?? 0) : 0;
    heights.push(v > 0 ? Math.round(Math.max(1, (v / max) * H) * dpr) : 0);
  }
  if (alreadyShown(canvas, `${W}x${H}@${dpr} ${uLo}:${uHi} ${colour} ${heights.join()}`)) return;
  const ctx = clearedCanvas(canvas, size);
  if (!ctx) return;
  ctx.fillStyle = colour;
  const w = W / Math.max(1, uHi - uLo);
  for (const [i, hd] of heights.entries()) {
    if (hd <= 0) continue;
    const h = hd / dpr;
    ctx.fillRect((r0 + i - uLo) * w, H - h, Math.max(1, w - 0.5), h);
  }
}

/**
 * A value over time as a sparkline (a fleet ranked row's p99 per step): a line on a log scale
 * from `lo` to `hi` (shared by the rows, so heights compare), broken where a step has no value.
 */
export function paintLineSpark(
  canvas: HTMLCanvasElement,
  values: readonly (number | null)[],
  lo: number,
  hi: number,
  size: CanvasBox,
  colour: string,
): void {
  const { width: W, height: H } = size;
  const ctx = clearedCanvas(canvas, size);
  if (!ctx || values.length === 0 || !(lo > 0) || !(hi > lo)) return;
  const y = (v: number): number => H - 1 - ((Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo))) * (H - 2);
  const x = (i: number): number => (values.length === 1 ? W / 2 : (i / (values.length - 1)) * (W - 2) + 1);
  ctx.strokeStyle = colour;
  ctx.fillStyle = colour;
  ctx.lineWidth = 1.25;
  ctx.beginPath();
  let drawing = false;
  values.forEach((v, i) => {
    if (v === null || !(v > 0)) {
      drawing = false;
      return;
    }
    const px = x(i);
    const py = Math.min(H - 1, Math.max(1, y(v)));
    if (drawing) ctx.lineTo(px, py);
    else ctx.moveTo(px, py);
    // A lone step between gaps still shows: a dot.
    if (!drawing && (values[i + 1] ?? null) === null) ctx.fillRect(px - 1, py - 1, 2, 2);
    drawing = true;
  });
  ctx.stroke();
}

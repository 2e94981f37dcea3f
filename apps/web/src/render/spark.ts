/** A latency distribution as a sparkline (the class breakdown): bars over buckets [uLo, uHi), scaled to the tallest. */
import { type CanvasBox, clearedCanvas } from './contract.js';

export function paintSpark(
  canvas: HTMLCanvasElement,
  hist: ArrayLike<number>,
  uLo: number,
  uHi: number,
  size: CanvasBox,
  colour: string,
): void {
  const { width: W, height: H } = size;
  const ctx = clearedCanvas(canvas, size);
  if (!ctx) return;
  let max = 0;
  for (let r = Math.floor(uLo); r < Math.ceil(uHi); r++) max = Math.max(max, hist[r] ?? 0);
  if (max <= 0) return;
  ctx.fillStyle = colour;
  const w = W / Math.max(1, uHi - uLo);
  for (let r = Math.floor(uLo); r < Math.ceil(uHi); r++) {
    const v = hist[r] ?? 0;
    if (v <= 0) continue;
    const h = Math.max(1, (v / max) * H);
    ctx.fillRect((r - uLo) * w, H - h, Math.max(1, w - 0.5), h);
  }
}

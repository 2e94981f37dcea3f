/**
 * Colour scales as horizontal ramps: the heat map palette (the legend, each disk's scale in its
 * head line) and the diverging scale of the compare view's differences (−1 left, +1 right).
 */
import { divergingColour, PALETTE_SIZE, paletteCss } from '../model/colour.js';
import { prepareCanvas } from './contract.js';

export function paintRamp(canvas: HTMLCanvasElement, palette: Uint32Array, width: number, height: number, dpr: number): void {
  const ctx = prepareCanvas(canvas, width, height, dpr);
  if (!ctx) return;
  for (let i = 1; i < PALETTE_SIZE; i++) {
    ctx.fillStyle = paletteCss(palette, i);
    ctx.fillRect(((i - 1) / (PALETTE_SIZE - 1)) * width, 0, width / (PALETTE_SIZE - 1) + 0.5, height);
  }
}

export function paintDivergingRamp(canvas: HTMLCanvasElement, width: number, height: number, dpr: number): void {
  const ctx = prepareCanvas(canvas, width, height, dpr);
  if (!ctx) return;
  const n = Math.max(2, Math.round(width));
  for (let i = 0; i < n; i++) {
    ctx.fillStyle = divergingColour((2 * (i + 0.5)) / n - 1);
    ctx.fillRect((i / n) * width, 0, width / n + 0.5, height);
  }
}

/** The colour palette as a horizontal ramp (the legend, each disk's scale in its head line). */
import { PALETTE_SIZE, paletteCss } from '../model/colour.js';
import { prepareCanvas } from './contract.js';

export function paintRamp(canvas: HTMLCanvasElement, palette: Uint32Array, width: number, height: number, dpr: number): void {
  const ctx = prepareCanvas(canvas, width, height, dpr);
  if (!ctx) return;
  for (let i = 1; i < PALETTE_SIZE; i++) {
    ctx.fillStyle = paletteCss(palette, i);
    ctx.fillRect(((i - 1) / (PALETTE_SIZE - 1)) * width, 0, width / (PALETTE_SIZE - 1) + 0.5, height);
  }
}

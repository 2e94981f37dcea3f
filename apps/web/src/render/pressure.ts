/**
 * The host's I/O pressure strip above the heat maps (model/pressure.ts): per heat map column, a
 * bar as tall as the share of the column's time some task was stalled on I/O, pale, and within
 * it the share every non-idle task was ("full"), solid: the darker band at its foot. Scaled to
 * the largest visible share (pressureScale: at least 5 %), drawn with the heat maps' x mapping
 * (the same RenderContext time → css, so it zooms and scrolls with them), and the shared time
 * cursor. Columns with no data get a faint band, never a zero-height bar.
 */
import { apply } from '../model/coords.js';
import { formatShare } from '../model/format.js';
import { PRESSURE_PAD_PX, pressureBarHeight, pressureScale, type PressureSeries } from '../model/pressure.js';
import { clearedCanvas, measuredText, type RenderContext, type RenderTheme } from './contract.js';
import { drawTimeCursor } from './overlay.js';

export interface PressureMarks {
  /** The time cursor (seconds), as on the heat maps. */
  readonly cursor?: number | undefined;
}

/** Opacity of the `some` bar (the `full` band at its foot is opaque). */
export const SOME_ALPHA = 0.4;
const PAD = PRESSURE_PAD_PX;
/** Height of the label's line (11 px type), css px. */
const LABEL_PX = 13;

/** Draws `series` (undefined: nothing to draw) and returns its scale (the top share). */
export function paintPressure(
  canvas: HTMLCanvasElement,
  rc: RenderContext,
  series: PressureSeries | undefined,
  marks: PressureMarks,
  theme: RenderTheme,
): number | undefined {
  const ctx = clearedCanvas(canvas, rc.viewport);
  if (!ctx || !series) return undefined;
  const { width: w, height: h } = rc.viewport;
  const scale = pressureScale(series);
  for (let i = 0; i < series.some.length; i++) {
    const col = series.col0 + i;
    const x0 = apply(rc.time, col * series.step);
    const x1 = apply(rc.time, (col + 1) * series.step);
    if (x1 < 0 || x0 > w) continue;
    const bw = Math.max(1, x1 - x0);
    const some = series.some[i] as number;
    if (Number.isNaN(some)) {
      ctx.globalAlpha = 0.18;
      ctx.fillStyle = theme.gap;
      ctx.fillRect(x0, PAD, bw, h - PAD);
      ctx.globalAlpha = 1;
      continue;
    }
    ctx.fillStyle = theme.warn;
    const sh = pressureBarHeight(some, scale, h);
    if (sh > 0) {
      ctx.globalAlpha = SOME_ALPHA;
      ctx.fillRect(x0, h - sh, bw, sh);
      ctx.globalAlpha = 1;
    }
    const fh = pressureBarHeight(series.full[i] as number, scale, h);
    if (fh > 0) ctx.fillRect(x0, h - fh, bw, fh);
  }
  ctx.font = theme.font;
  ctx.textBaseline = 'top';
  const label = `I/O pressure (host) ≤ ${formatShare(scale)} · pale: some · solid: full`;
  // On a veil of the background: the label sits over the bars of the first columns.
  ctx.globalAlpha = 0.75;
  ctx.fillStyle = theme.background;
  ctx.fillRect(2, PAD, measuredText(ctx, label).width + 4, LABEL_PX);
  ctx.globalAlpha = 1;
  ctx.fillStyle = theme.muted;
  ctx.fillText(label, 4, PAD);
  if (marks.cursor !== undefined) drawTimeCursor(ctx, rc, marks.cursor, theme.foreground);
  return scale;
}

/**
 * Incident marks on a heat map's overlay (drawn by overlay.ts, under the cursor and selection):
 *
 *   - a stuck I/O: a triangle above the column it started in, a dashed line down that column,
 *     and a band along the top from there to the newest second it was still in flight, so the
 *     mark grows with its age: a hang is not drawn as a quiet second (a stuck I/O completes no
 *     I/O, so the cells alone show nothing); bios stuck waiting for a request (protocol 4) the
 *     same way, labelled so;
 *   - failed I/Os, requeues and causes of submit wait: a bar along the bottom of each column that
 *     had some (failures below, loud; requeues above them, quieter; above those, in the accent
 *     colour, I/Os that waited for a frozen queue or a tag, `causes`, or wbt holding writes back,
 *     `wbt`); a queue setting changed (`queue_changed`, a switch that froze the queue): an accent
 *     tick up the column's left edge, above the bars.
 */
import { apply } from '../model/coords.js';
import type { FaultColumn } from '../model/faults.js';
import { formatLatency } from '../model/latency.js';
import type { StuckSpan } from '../model/stuck.js';
import type { RenderContext, RenderTheme } from './contract.js';

export interface IncidentMarks {
  readonly stuck: readonly StuckSpan[];
  /** Columns (of `rc.step`) with failed I/Os or requeues. */
  readonly faults: readonly FaultColumn[];
}

/** Heights (css px) of the marks, for tests and hit-free placement. */
export const STUCK_BAND_PX = 5;
export const STUCK_TRIANGLE_PX = 9;
export const FAILED_BAR_PX = 5;
export const REQUEUE_BAR_PX = 3;
export const FROZEN_BAR_PX = 3;
export const QUEUE_CHANGE_TICK_PX = 12;

/** x range of column `col`, at least `min` px wide (centred), so a 1-second mark shows when zoomed out. */
function columnX(rc: RenderContext, col: number, min: number): [number, number] {
  const x0 = apply(rc.time, col * rc.step);
  const x1 = apply(rc.time, (col + 1) * rc.step);
  const w = Math.max(min, x1 - x0);
  const mid = (x0 + x1) / 2;
  return [mid - w / 2, mid + w / 2];
}

function drawStuck(ctx: CanvasRenderingContext2D, rc: RenderContext, s: StuckSpan, theme: RenderTheme): void {
  const { width: w, height: h } = rc.viewport;
  const col = Math.floor(s.start / rc.step);
  const [c0, c1] = columnX(rc, col, STUCK_TRIANGLE_PX);
  const xEnd = apply(rc.time, s.end);
  if (c1 < 0 && xEnd < 0) return;
  if (c0 > w) return;
  ctx.fillStyle = theme.alert;
  ctx.strokeStyle = theme.alert;
  // The band: from the start column to the newest sighting.
  ctx.globalAlpha = 0.85;
  ctx.fillRect(c0, 0, Math.max(c1, xEnd) - c0, STUCK_BAND_PX);
  // The triangle above the start column.
  ctx.globalAlpha = 1;
  ctx.beginPath();
  ctx.moveTo(c0, 0);
  ctx.lineTo(c1, 0);
  ctx.lineTo((c0 + c1) / 2, STUCK_TRIANGLE_PX);
  ctx.closePath();
  ctx.fill();
  // A dashed line down the start column.
  const x = Math.round((c0 + c1) / 2) + 0.5;
  ctx.globalAlpha = 0.6;
  ctx.lineWidth = 1;
  ctx.setLineDash([3, 3]);
  ctx.beginPath();
  ctx.moveTo(x, STUCK_TRIANGLE_PX);
  ctx.lineTo(x, h);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.globalAlpha = 1;
  // Its age under the band: right of the triangle, or left of it at the live edge.
  const label = `stuck ${formatLatency(s.ageS)}${s.waiting ? ' · waiting for a request' : s.comm ? ` · ${s.comm}` : ''}`;
  ctx.font = theme.font;
  ctx.textBaseline = 'top';
  const tw = ctx.measureText(label).width;
  const lx = c1 + 3 + tw <= w ? Math.max(c1 + 3, 2) : c0 - 3 - tw;
  if (lx >= 0) ctx.fillText(label, lx, STUCK_BAND_PX + 2);
}

function drawFaults(ctx: CanvasRenderingContext2D, rc: RenderContext, f: FaultColumn, theme: RenderTheme): void {
  const { width: w, height: h } = rc.viewport;
  const [x0, x1] = columnX(rc, f.col, 3);
  if (x1 < 0 || x0 > w) return;
  if (f.failed > 0) {
    ctx.fillStyle = theme.alert;
    ctx.fillRect(x0, h - FAILED_BAR_PX, x1 - x0, FAILED_BAR_PX);
  }
  if (f.requeues > 0) {
    ctx.fillStyle = theme.warn;
    ctx.fillRect(x0, h - FAILED_BAR_PX - 1 - REQUEUE_BAR_PX, x1 - x0, REQUEUE_BAR_PX);
  }
  const causesTop = h - FAILED_BAR_PX - 1 - REQUEUE_BAR_PX - 1 - FROZEN_BAR_PX;
  if (f.frozen > 0 || f.refused > 0 || f.wbt > 0) {
    ctx.fillStyle = theme.accent;
    ctx.fillRect(x0, causesTop, x1 - x0, FROZEN_BAR_PX);
  }
  if (f.queueChanged.length > 0) {
    ctx.fillStyle = theme.accent;
    ctx.fillRect(x0, causesTop - 1 - QUEUE_CHANGE_TICK_PX, 2, QUEUE_CHANGE_TICK_PX);
  }
}

export function drawIncidentMarks(ctx: CanvasRenderingContext2D, rc: RenderContext, marks: IncidentMarks, theme: RenderTheme): void {
  for (const f of marks.faults) drawFaults(ctx, rc, f, theme);
  for (const s of marks.stuck) drawStuck(ctx, rc, s, theme);
}

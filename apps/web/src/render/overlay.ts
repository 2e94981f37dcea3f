/**
 * The overlay above a heat map: incident marks (stuck I/O, failed I/Os, requeues: incidents.ts),
 * the time cursor synced across every disk, the cell under the pointer (or the keyboard
 * cursor), the selected cells, a gesture under way (a zoom band or a selection box), and the
 * compare (A/B) ranges as labelled strips along the top. Cleared and redrawn whole: it holds a
 * handful of strokes.
 */
import { apply } from '../model/coords.js';
import { clearedCanvas, type RenderContext, type RenderTheme } from './contract.js';
import { drawIncidentMarks, type IncidentMarks } from './incidents.js';

/** What the overlay marks, in data coordinates (time in seconds, buckets as u). */
export interface OverlayMarks {
  /** Stuck I/O, failed I/Os and requeues (incidents.ts), drawn first: under everything else. */
  readonly incidents?: IncidentMarks | undefined;
  /** The time cursor (the same time on every disk's heat map). */
  readonly cursor?: number | undefined;
  /** The cell under the pointer or the keyboard cursor (an absolute column of `rc.step`). */
  readonly cell?: { readonly col: number; readonly bucket: number } | undefined;
  /** The selected cells. */
  readonly selection?: { readonly from: number; readonly to: number; readonly bucketLo: number; readonly bucketHi: number } | undefined;
  /** The compare ranges summed: baseline (a filled strip) and comparison (an outlined one), as in the compare charts. */
  readonly compare?:
    | {
        readonly baseline?: { readonly from: number; readonly to: number } | undefined;
        readonly comparison?: { readonly from: number; readonly to: number } | undefined;
      }
    | undefined;
  /** A drag under way: a zoom band across the whole height, or a box in time × latency. */
  readonly drag?:
    | {
        readonly kind: 'zoom' | 'box' | 'baseline';
        readonly t0: number;
        readonly t1: number;
        readonly u0: number;
        readonly u1: number;
      }
    | undefined;
}

/** The time cursor: a half-transparent vertical line at unix second `cursor`, the canvas' whole height. */
export function drawTimeCursor(ctx: CanvasRenderingContext2D, rc: RenderContext, cursor: number, colour: string): void {
  const x = Math.round(apply(rc.time, cursor)) + 0.5;
  ctx.strokeStyle = colour;
  ctx.globalAlpha = 0.5;
  ctx.beginPath();
  ctx.moveTo(x, 0);
  ctx.lineTo(x, rc.viewport.height);
  ctx.stroke();
  ctx.globalAlpha = 1;
}

const STRIP_H = 12;

/** The compare ranges along the top: where they lie in time, labelled (not told apart by colour alone). */
function drawCompareStrips(
  ctx: CanvasRenderingContext2D,
  rc: RenderContext,
  c: NonNullable<OverlayMarks['compare']>,
  theme: RenderTheme,
): void {
  const w = rc.viewport.width;
  const strip = (r: { from: number; to: number } | undefined, label: string, filled: boolean): void => {
    if (!r) return;
    const x0 = Math.max(0, apply(rc.time, r.from));
    const x1 = Math.min(w, apply(rc.time, r.to));
    if (x1 <= x0) return;
    ctx.globalAlpha = 0.85;
    if (filled) {
      ctx.fillStyle = theme.muted;
      ctx.fillRect(x0, 0, x1 - x0, STRIP_H);
    } else {
      ctx.fillStyle = theme.background;
      ctx.fillRect(x0, 0, x1 - x0, STRIP_H);
      ctx.strokeStyle = theme.accent;
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 + 1, 1, Math.max(0, x1 - x0 - 2), STRIP_H - 2);
    }
    ctx.globalAlpha = 1;
    ctx.font = theme.font;
    ctx.textBaseline = 'middle';
    const tw = ctx.measureText(label).width;
    if (tw + 8 <= x1 - x0) {
      ctx.fillStyle = filled ? theme.background : theme.foreground;
      ctx.fillText(label, x0 + 4, STRIP_H / 2 + 0.5);
    }
  };
  strip(c.baseline, 'A baseline', true);
  strip(c.comparison, 'B comparison', false);
}

/** Whether `marks` draw nothing at all. */
export function overlayBlank(marks: OverlayMarks): boolean {
  const inc = marks.incidents;
  return (
    (!inc || (inc.stuck.length === 0 && inc.faults.length === 0)) &&
    !marks.compare &&
    marks.cursor === undefined &&
    !marks.cell &&
    !marks.selection &&
    !marks.drag
  );
}

/**
 * Overlays known to be clear, by the size they were cleared at. Each live second moves the view
 * and asks every overlay to draw again; most of them mark nothing, and clearing a clear canvas
 * still hands it to the compositor (a canvas resource per overlay per frame, under load a good
 * part of a frame's commit). The one thing renderers here keep of a canvas: whether it is blank.
 */
const blankOverlays = new WeakMap<HTMLCanvasElement, string>();

export function drawOverlay(canvas: HTMLCanvasElement, rc: RenderContext, marks: OverlayMarks, theme: RenderTheme): void {
  const vp = rc.viewport;
  const size = `${vp.width}x${vp.height}@${vp.dpr}`;
  const blank = overlayBlank(marks);
  if (blank && blankOverlays.get(canvas) === size) return;
  const ctx = clearedCanvas(canvas, vp);
  if (!ctx) return;
  if (blank) {
    blankOverlays.set(canvas, size);
    return;
  }
  blankOverlays.delete(canvas);
  const h = rc.viewport.height;
  if (marks.incidents) drawIncidentMarks(ctx, rc, marks.incidents, theme);
  if (marks.compare) drawCompareStrips(ctx, rc, marks.compare, theme);
  if (marks.cursor !== undefined) drawTimeCursor(ctx, rc, marks.cursor, theme.foreground);
  const cell = marks.cell;
  if (cell) {
    const x0 = apply(rc.time, cell.col * rc.step);
    const x1 = apply(rc.time, (cell.col + 1) * rc.step);
    const y0 = apply(rc.bucket, cell.bucket + 1);
    const y1 = apply(rc.bucket, cell.bucket);
    ctx.strokeStyle = theme.foreground;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(Math.round(x0) - 0.5, Math.round(y0) - 0.5, Math.max(2, x1 - x0) + 1, Math.max(2, y1 - y0) + 1);
  }
  const sel = marks.selection;
  if (sel) {
    const x0 = apply(rc.time, sel.from);
    const x1 = apply(rc.time, sel.to);
    const y0 = apply(rc.bucket, sel.bucketHi + 1);
    const y1 = apply(rc.bucket, sel.bucketLo);
    ctx.strokeStyle = theme.selection;
    ctx.lineWidth = 2;
    ctx.setLineDash([4, 2]);
    ctx.strokeRect(x0 - 1, y0 - 1, Math.max(2, x1 - x0) + 2, Math.max(2, y1 - y0) + 2);
    ctx.setLineDash([]);
  }
  const drag = marks.drag;
  if (drag) {
    const x0 = apply(rc.time, Math.min(drag.t0, drag.t1));
    const x1 = apply(rc.time, Math.max(drag.t0, drag.t1));
    ctx.fillStyle = theme.selection;
    ctx.strokeStyle = theme.selection;
    ctx.lineWidth = 1;
    if (drag.kind === 'zoom' || drag.kind === 'baseline') {
      ctx.globalAlpha = 0.18;
      ctx.fillRect(x0, 0, x1 - x0, h);
      ctx.globalAlpha = 1;
      ctx.strokeRect(Math.round(x0) + 0.5, 0.5, Math.round(x1 - x0), h - 1);
    } else {
      const y0 = apply(rc.bucket, Math.floor(Math.max(drag.u0, drag.u1)) + 1);
      const y1 = apply(rc.bucket, Math.floor(Math.min(drag.u0, drag.u1)));
      ctx.globalAlpha = 0.18;
      ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
      ctx.globalAlpha = 1;
      ctx.strokeRect(x0 + 0.5, y0 + 0.5, x1 - x0, y1 - y0);
    }
  }
}

/**
 * The throughput strip under a disk's heat map: four lanes (IOPS, MB/s, I/Os in flight, age of
 * the oldest I/O in flight), one
 * bar per heat map column, each lane scaled to its largest visible value, drawn with the heat
 * map's x mapping (the same RenderContext time → css, so it zooms and scrolls with it), and the
 * shared time cursor. Columns with no data get a faint band, never a zero-height bar.
 * Bios waiting for a request (protocol 4) stack, paler, on the in-flight bar (the lane is scaled
 * to both), their oldest age stands, paler, behind the oldest in-flight age, and a column whose
 * queue was frozen gets a tick along the top of the in-flight lane. Each lane's label (its scale's
 * top) sits on a plate of the background, above the bars.
 */
import { apply } from '../model/coords.js';
import {
  formatThroughput,
  seriesMax,
  THROUGHPUT_KEYS,
  THROUGHPUT_LABELS,
  type ThroughputKey,
  type ThroughputSeries,
} from '../model/throughput.js';
import { clearedCanvas, type RenderContext, type RenderTheme } from './contract.js';
import { drawTimeCursor } from './overlay.js';

export interface ThroughputMarks {
  /** The time cursor (seconds), as on the heat maps. */
  readonly cursor?: number | undefined;
}

/** Each lane's scale (its top value): what the labels say. */
export type ThroughputScales = Readonly<Record<ThroughputKey, number>>;

/** Lane colours, in THROUGHPUT_KEYS order. */
export function laneColours(theme: RenderTheme): readonly string[] {
  return [theme.bar, theme.marks[1] ?? theme.accent, theme.marks[3] ?? theme.accent, theme.alert];
}

/** The y range [top, bottom) of lane `i` of a strip `height` px tall. */
export function laneBounds(i: number, height: number): [number, number] {
  const h = height / THROUGHPUT_KEYS.length;
  return [i * h, (i + 1) * h];
}

/** Height of the "queue frozen" tick, css px. */
export const FROZEN_TICK_PX = 3;

/** The second value stacked on (in flight: waiting bios) or standing behind (oldest: oldest waiting) a lane's bars. */
function extraOf(series: ThroughputSeries, key: ThroughputKey): Float64Array | undefined {
  return key === 'queue' ? series.waiting : key === 'oldest' ? series.oldestWait : undefined;
}

/** The top of a lane: its largest value, with waiting bios stacked (in flight) or the oldest wait (age). */
function laneMax(series: ThroughputSeries, key: ThroughputKey): number {
  const values = series[key];
  const extra = extraOf(series, key);
  if (!extra) return seriesMax(values);
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    const v = (values[i] as number) || 0;
    const e = (extra[i] as number) || 0;
    m = Math.max(m, key === 'queue' ? v + e : Math.max(v, e));
  }
  return m;
}

/** Draws `series` (undefined: nothing to draw) and returns the lanes' scales. */
export function paintThroughput(
  canvas: HTMLCanvasElement,
  rc: RenderContext,
  series: ThroughputSeries | undefined,
  marks: ThroughputMarks,
  theme: RenderTheme,
): ThroughputScales | undefined {
  const ctx = clearedCanvas(canvas, rc.viewport);
  if (!ctx || !series) return undefined;
  const { width: w, height: h } = rc.viewport;
  const colours = laneColours(theme);
  const scales = { iops: 0, mbps: 0, queue: 0, oldest: 0 };
  ctx.font = theme.font;
  ctx.textBaseline = 'top';
  THROUGHPUT_KEYS.forEach((key, li) => {
    const values = series[key];
    const extra = extraOf(series, key);
    const max = laneMax(series, key);
    scales[key] = max;
    let waits = false;
    const [top, bottom] = laneBounds(li, h);
    const pad = 2;
    const lane = bottom - top - pad;
    for (let i = 0; i < values.length; i++) {
      const col = series.col0 + i;
      const x0 = apply(rc.time, col * series.step);
      const x1 = apply(rc.time, (col + 1) * series.step);
      if (x1 < 0 || x0 > w) continue;
      const v = values[i] as number;
      const bw = Math.max(1, x1 - x0);
      if (Number.isNaN(v)) {
        ctx.globalAlpha = 0.18;
        ctx.fillStyle = theme.gap;
        ctx.fillRect(x0, top + pad, bw, lane);
        ctx.globalAlpha = 1;
        continue;
      }
      const e = extra ? (extra[i] as number) || 0 : 0;
      const bh = v > 0 && max > 0 ? Math.max(1, (v / max) * lane) : 0;
      if (e > 0 && max > 0) {
        // Waiting bios: stacked on the in-flight bar; the oldest wait: behind the oldest age.
        waits = true;
        const eh = Math.max(1, (e / max) * lane);
        ctx.globalAlpha = 0.45;
        ctx.fillStyle = colours[li] ?? theme.bar;
        if (key === 'queue') ctx.fillRect(x0, bottom - bh - eh, bw, eh);
        else ctx.fillRect(x0, bottom - eh, bw, eh);
        ctx.globalAlpha = 1;
      }
      if (bh > 0) {
        ctx.fillStyle = colours[li] ?? theme.bar;
        ctx.fillRect(x0, bottom - bh, bw, bh);
      }
      if (key === 'queue' && series.frozen[i] === 1) {
        ctx.fillStyle = theme.accent;
        ctx.fillRect(x0, top + pad, bw, FROZEN_TICK_PX);
      }
    }
    if (li > 0) {
      ctx.fillStyle = theme.grid;
      ctx.fillRect(0, top, w, 1);
    }
    const label = waits ? (key === 'queue' ? 'in flight + waiting' : 'oldest in flight / waiting') : THROUGHPUT_LABELS[key];
    const text = `${label} ≤ ${formatThroughput(key, max)}`;
    // On a plate of the background, above the bars: in a steady view they reach the lane's top,
    // and a label drawn straight over them could not be read (issue 29).
    const m = ctx.measureText(text);
    const textH = Math.min(lane, (m.fontBoundingBoxAscent || 8) + (m.fontBoundingBoxDescent || 3));
    ctx.fillStyle = theme.background;
    ctx.globalAlpha = 0.85;
    ctx.fillRect(2, top + pad, m.width + 4, textH);
    ctx.globalAlpha = 1;
    ctx.fillStyle = theme.muted;
    ctx.fillText(text, 4, top + pad);
  });
  if (marks.cursor !== undefined) drawTimeCursor(ctx, rc, marks.cursor, theme.foreground);
  return scales;
}

/**
 * A latency histogram drawn sideways next to its heat map: buckets on the same vertical axis
 * (so a band in the heat map lines up with its bar), bar length = share of the disk's I/Os in
 * the range on an x scale shared by every disk (so shapes compare across disks), with
 * percentile marks across the bars, each where its label's number is (model/percentiles.ts: the
 * top of the rank's bucket, or a sampled I/O's exact latency).
 */
import { apply, bucketToCss, mapInterval, type Viewport } from '../model/coords.js';
import { labelledQuantile, type QuantileValue } from '../model/percentiles.js';
import { alreadyShown, measuredText, prepareCanvas, type RenderTheme } from './contract.js';

export interface HistogramData {
  /** Dense counts. */
  readonly hist: ArrayLike<number>;
  readonly total: number;
  readonly quantiles: readonly QuantileValue[];
  /** Largest share across every histogram drawn side by side (the shared x domain). */
  readonly maxShare: number;
  /** Bucket highlighted by the hover cursor, if any. */
  readonly highlight?: number | undefined;
}

/** `vp.width`/`height` are the canvas box; time fields are unused. */
export function drawHistogram(ctx: CanvasRenderingContext2D, vp: Viewport, data: HistogramData, theme: RenderTheme, clear = true): void {
  const y = bucketToCss(vp);
  const labelW = 0;
  const x = mapInterval(0, Math.max(data.maxShare, 1e-9), labelW, vp.width - 4);
  // On its own canvas it starts from transparent; composited (PNG export) it draws over what is there.
  if (clear) ctx.clearRect(0, 0, vp.width, vp.height);
  if (data.total <= 0) {
    ctx.fillStyle = theme.muted;
    ctx.font = theme.font;
    ctx.fillText('no I/O', 6, vp.height / 2);
    return;
  }
  const r0 = Math.max(0, Math.floor(vp.uLo));
  const r1 = Math.min(data.hist.length, Math.ceil(vp.uHi));
  ctx.fillStyle = theme.bar;
  for (let r = r0; r < r1; r++) {
    const n = data.hist[r] as number;
    if (n <= 0) continue;
    const yTop = apply(y, r + 1);
    const yBot = apply(y, r);
    // At least a hairline so a single slow I/O still shows.
    const w = Math.max(1, apply(x, n / data.total) - labelW);
    ctx.fillRect(labelW, yTop + 0.5, w, Math.max(1, yBot - yTop - 1));
  }
  if (data.highlight !== undefined && data.highlight >= r0 && data.highlight < r1) {
    ctx.strokeStyle = theme.accent;
    ctx.lineWidth = 1;
    const yt = apply(y, data.highlight + 1);
    ctx.strokeRect(0.5, yt + 0.5, vp.width - 1, Math.max(1, apply(y, data.highlight) - yt - 1));
  }
  ctx.font = theme.font;
  ctx.textBaseline = 'middle';
  // Mark lines at their exact positions; labels spread apart (≥ LABEL_GAP px) and kept inside.
  const LABEL_GAP = 12;
  const marks = data.quantiles
    .map((q, i) => ({ q, colour: theme.marks[i] ?? theme.accent, y: Math.round(apply(y, q.u)) + 0.5 }))
    .filter((m) => m.y >= 0 && m.y <= vp.height);
  for (const m of marks) {
    ctx.strokeStyle = m.colour;
    ctx.setLineDash([3, 2]);
    ctx.beginPath();
    ctx.moveTo(0, m.y);
    ctx.lineTo(vp.width, m.y);
    ctx.stroke();
  }
  ctx.setLineDash([]);
  // Quantiles ascend, so y descends: lay labels out top-down from the highest one.
  const labels = marks.map((m) => ({ ...m, ly: m.y })).reverse();
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i] as (typeof labels)[number];
    l.ly = Math.max(l.ly, 7, i > 0 ? (labels[i - 1] as (typeof labels)[number]).ly + LABEL_GAP : -Infinity);
  }
  // If the stack ran off the bottom, shift it back up.
  const overflow = (labels[labels.length - 1]?.ly ?? 0) - (vp.height - 7);
  if (overflow > 0) for (const l of labels) l.ly -= overflow;
  ctx.textAlign = 'right';
  for (const l of labels) {
    const text = labelledQuantile(l.q);
    const tw = measuredText(ctx, text).width;
    ctx.fillStyle = theme.background;
    ctx.globalAlpha = 0.85;
    ctx.fillRect(vp.width - tw - 6, l.ly - 6, tw + 4, 12);
    ctx.globalAlpha = 1;
    ctx.fillStyle = l.colour;
    ctx.fillText(text, vp.width - 4, l.ly);
  }
  ctx.textAlign = 'left';
}

/**
 * What a histogram's canvas shows: everything drawHistogram reads (the theme by its colours and
 * font). A live second asks for the histograms twice, for its new frame and for the summary that
 * follows it: the first draw would repeat the last summary's.
 */
function histogramKey(vp: Viewport, data: HistogramData, theme: RenderTheme): string {
  let key = `${vp.width}x${vp.height}@${vp.dpr} ${vp.uLo}:${vp.uHi} ${data.total} ${data.maxShare} ${data.highlight} ${JSON.stringify(theme)}`;
  for (let i = 0; i < data.hist.length; i++) key += `,${data.hist[i]}`;
  for (const q of data.quantiles) key += `|${q.u}:${labelledQuantile(q)}`;
  return key;
}

/** Draws a histogram on a canvas of its own, sized `vp.width` × `vp.height` at `vp.dpr` (unless it shows it already). */
export function paintHistogram(canvas: HTMLCanvasElement, vp: Viewport, data: HistogramData, theme: RenderTheme): void {
  if (alreadyShown(canvas, histogramKey(vp, data, theme))) return;
  const ctx = prepareCanvas(canvas, vp.width, vp.height, vp.dpr);
  if (ctx) drawHistogram(ctx, vp, data, theme);
}

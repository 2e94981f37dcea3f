/**
 * The compare (A/B) charts of one disk and class, latency left to right on a shared bucket axis
 * (`vp.uLo`..`vp.uHi`, the disk's buckets with I/O in either range):
 *
 *   overlay      both distributions, each normalised to its own count: the baseline as filled
 *                bars, the comparison as a line over them, so they differ in form as well as
 *                colour; each range's p50 as a vertical mark (dashed: baseline, solid: comparison)
 *   difference   comparison − baseline share per bucket as bars up (more now) or down (less),
 *                coloured on the diverging scale (model/colour.ts) to ±`maxDiff`, with the
 *                latency ticks under them
 *
 * `vp.width`/`height` are the canvas box; time fields are unused.
 */
import type { BucketSchema } from '@blkheat/shared-types';
import { type Affine, apply, bucketToCssX, mapInterval, type Viewport } from '../model/coords.js';
import { divergingColour } from '../model/colour.js';
import type { RangeHistogram } from '../model/compare.js';
import { latencyTicks, secondsToU } from '../model/latency.js';
import { clearedCanvas, type RenderTheme } from './contract.js';

/** Room above the bars (for the tallest one's line) and below the difference chart (tick labels), CSS px. */
export const COMPARE_PAD_TOP = 3;
export const COMPARE_AXIS_H = 15;

export interface CompareOverlayData {
  readonly baseline: RangeHistogram;
  readonly comparison: RangeHistogram;
  /** p50 of each range in seconds, as the table shows it (its bucket's top; undefined: no I/O). */
  readonly baselineP50: number | undefined;
  readonly comparisonP50: number | undefined;
  /** Top of the share axis (shared by the disk's rows). */
  readonly maxShare: number;
  readonly schema: BucketSchema;
}

/** Bucket r's bar from css y `y0`, `h` px tall (negative: upwards): a pixel narrower than the bucket so bars stand apart, never under one wide. */
function fillBucketBar(ctx: CanvasRenderingContext2D, x: Affine, r: number, y0: number, h: number): void {
  const x0 = apply(x, r);
  ctx.fillRect(x0 + 0.5, y0, Math.max(1, apply(x, r + 1) - x0 - 1), h);
}

/** css y of a share on the overlay chart. */
export function overlayShareToCss(vp: Viewport, maxShare: number): (share: number) => number {
  const y = mapInterval(0, Math.max(maxShare, 1e-9), vp.height, COMPARE_PAD_TOP);
  return (share) => apply(y, share);
}

export function paintCompareOverlay(canvas: HTMLCanvasElement, vp: Viewport, data: CompareOverlayData, theme: RenderTheme): void {
  const ctx = clearedCanvas(canvas, vp);
  if (!ctx) return;
  const x = bucketToCssX(vp);
  const y = overlayShareToCss(vp, data.maxShare);
  const r0 = Math.max(0, Math.floor(vp.uLo));
  const r1 = Math.ceil(vp.uHi);
  const { baseline: a, comparison: b } = data;
  if (a.total > 0) {
    ctx.fillStyle = theme.muted;
    ctx.globalAlpha = 0.55;
    for (let r = r0; r < r1; r++) {
      const n = a.hist[r] ?? 0;
      if (n <= 0) continue;
      const top = Math.min(y(n / a.total), vp.height - 1); // at least a hairline
      fillBucketBar(ctx, x, r, top, vp.height - top);
    }
    ctx.globalAlpha = 1;
  }
  if (b.total > 0) {
    // A step outline along the tops of the comparison's bars, down to 0 between them.
    ctx.strokeStyle = theme.accent;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(apply(x, r0), vp.height);
    for (let r = r0; r < r1; r++) {
      const n = b.hist[r] ?? 0;
      const top = n > 0 ? Math.min(y(n / b.total), vp.height - 1) : vp.height;
      ctx.lineTo(apply(x, r), top);
      ctx.lineTo(apply(x, r + 1), top);
    }
    ctx.lineTo(apply(x, r1), vp.height);
    ctx.stroke();
  }
  const mark = (seconds: number | undefined, colour: string, dash: number[]): void => {
    if (seconds === undefined) return;
    const mx = Math.round(apply(x, secondsToU(seconds, data.schema))) + 0.5;
    ctx.strokeStyle = colour;
    ctx.lineWidth = 1;
    ctx.setLineDash(dash);
    ctx.beginPath();
    ctx.moveTo(mx, 0);
    ctx.lineTo(mx, vp.height);
    ctx.stroke();
    ctx.setLineDash([]);
  };
  mark(data.baselineP50, theme.foreground, [3, 3]);
  mark(data.comparisonP50, theme.accent, []);
}

export interface CompareDifferenceData {
  /** comparison − baseline share per bucket; undefined when a range has no I/O. */
  readonly difference: Float64Array | undefined;
  /** The symmetric scale: ±maxDiff fills half the height and the ends of the colour scale. */
  readonly maxDiff: number;
  readonly schema: BucketSchema;
}

/** css y of a difference on the difference chart (0 in the middle of the bars' area). */
export function differenceToCss(vp: Viewport, maxDiff: number): (d: number) => number {
  const half = (vp.height - COMPARE_AXIS_H) / 2;
  const y = mapInterval(-Math.max(maxDiff, 1e-9), Math.max(maxDiff, 1e-9), 2 * half, 0);
  return (d) => apply(y, d);
}

export function paintCompareDifference(canvas: HTMLCanvasElement, vp: Viewport, data: CompareDifferenceData, theme: RenderTheme): void {
  const ctx = clearedCanvas(canvas, vp);
  if (!ctx) return;
  const x = bucketToCssX(vp);
  const y = differenceToCss(vp, data.maxDiff);
  const zero = Math.round(y(0)) + 0.5;
  const diff = data.difference;
  ctx.font = theme.font;
  if (!diff) {
    ctx.fillStyle = theme.muted;
    ctx.textBaseline = 'middle';
    ctx.fillText('one range has no I/O: no difference to draw', 6, zero);
  } else {
    const r0 = Math.max(0, Math.floor(vp.uLo));
    const r1 = Math.min(diff.length, Math.ceil(vp.uHi));
    for (let r = r0; r < r1; r++) {
      const d = diff[r] as number;
      if (d === 0) continue;
      const yd = y(d);
      // At least a pixel either way, so a small shift still shows which way it went.
      const h = d > 0 ? Math.min(yd - zero, -1) : Math.max(yd - zero, 1);
      ctx.fillStyle = divergingColour(d / Math.max(data.maxDiff, 1e-9));
      fillBucketBar(ctx, x, r, zero, h);
    }
  }
  ctx.strokeStyle = theme.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(0, zero);
  ctx.lineTo(vp.width, zero);
  ctx.stroke();
  // Latency ticks under the bars, on the same axis as the overlay above.
  ctx.fillStyle = theme.muted;
  ctx.textBaseline = 'bottom';
  ctx.textAlign = 'center';
  let lastRight = -Infinity;
  for (const t of latencyTicks(vp.uLo, vp.uHi, data.schema, 2)) {
    if (!t.major) continue;
    const tx = apply(x, t.u);
    const w = ctx.measureText(t.label).width;
    if (tx - w / 2 < lastRight + 4 || tx - w / 2 < 0 || tx + w / 2 > vp.width) continue;
    ctx.fillRect(Math.round(tx), vp.height - COMPARE_AXIS_H, 1, 2);
    ctx.fillText(t.label, tx, vp.height);
    lastRight = tx + w / 2;
  }
  ctx.textAlign = 'left';
}

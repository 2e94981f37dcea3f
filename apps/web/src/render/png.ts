/**
 * The heat maps as one image (PNG export): title, shared time axis, then per disk its name,
 * latency axis, heat map with "no data" bands, percentile lines, incident marks (stuck I/O, failed
 * I/Os, requeues) and sideways histogram, and the
 * colour legend (per disk when each disk has its own colour scale).
 * Uses the same renderers as the screen, at a fixed size and 2× pixel density.
 */
import type { BucketSchema } from '@blkheat/shared-types';
import { PALETTE_SIZE, paletteCss, type CountScale } from '../model/colour.js';
import type { HeatMatrix } from '../model/heatmatrix.js';
import type { PercentileTrack } from '../model/percentiles.js';
import { formatCount } from '../model/format.js';
import { legendTicks } from '../model/colour.js';
import type { Known } from '../model/gaps.js';
import { paintLatencyAxis, paintTimeAxis } from './axes.js';
import { renderContext, type RenderTheme } from './contract.js';
import { drawGaps } from './gaps.js';
import { HeatmapBitmap } from './heatmap.js';
import { drawIncidentMarks, type IncidentMarks } from './incidents.js';
import { drawHistogram, type HistogramData } from './histogram.js';
import { PercentileLayer } from './percentileLines.js';

export interface PngDisk {
  readonly title: string;
  readonly matrix: HeatMatrix;
  readonly track: PercentileTrack | undefined;
  readonly histogram: HistogramData;
  /** This disk's colour scale (each disk its own, or all the shared one). */
  readonly scale: CountScale;
  /** Stuck I/O, failed I/Os and requeues, as the screen marks them. */
  readonly incidents?: IncidentMarks | undefined;
}

export interface PngInput {
  readonly title: string;
  readonly subtitle: string;
  readonly from: number;
  readonly to: number;
  readonly uLo: number;
  readonly uHi: number;
  /** The bucket schema of the matrices' rows (the latency axis labels them). */
  readonly schema: BucketSchema;
  readonly disks: readonly PngDisk[];
  readonly palette: Uint32Array;
  /** True when every disk has its own colour scale (the legend says so, and each row its max). */
  readonly perDisk: boolean;
  /** The shared colour scale (the legend's, when not per disk). */
  readonly scale: CountScale;
  readonly theme: RenderTheme;
  readonly percentiles: boolean;
  /** Where a column without frames was not recorded (drawn as "no data"). */
  readonly known: Known;
}

const WIDTH = 1400;
const LEFT = 70;
const HIST = 200;
const GAP = 16;
const ROW = 220;
const ROW_HEAD = 24;
const DPR = 2;

export function composePng(input: PngInput): HTMLCanvasElement {
  const plotW = WIDTH - LEFT - HIST - GAP - 10;
  const top = 70;
  const height = top + input.disks.length * (ROW + ROW_HEAD + 8) + 60;
  const canvas = document.createElement('canvas');
  canvas.width = WIDTH * DPR;
  canvas.height = height * DPR;
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('2D canvas unavailable');
  ctx.scale(DPR, DPR);
  const t = input.theme;
  ctx.fillStyle = t.background;
  ctx.fillRect(0, 0, WIDTH, height);
  ctx.fillStyle = t.foreground;
  ctx.font = `bold 16px ${t.font.replace(/^\d+px /, '')}`;
  ctx.fillText(input.title, LEFT, 24);
  ctx.font = t.font;
  ctx.fillStyle = t.muted;
  ctx.fillText(input.subtitle, LEFT, 42);
  ctx.font = t.font;
  paintTimeAxis(ctx, input.from, input.to, LEFT, top - 4, plotW, t.foreground, input.disks[0]?.matrix.step ?? 1);
  let y = top;
  for (const d of input.disks) {
    ctx.fillStyle = t.foreground;
    ctx.font = `bold 12px ${t.font.replace(/^\d+px /, '')}`;
    ctx.fillText(d.title, LEFT, y + 16);
    ctx.font = t.font;
    if (input.perDisk) {
      ctx.fillStyle = t.muted;
      ctx.textAlign = 'right';
      ctx.fillText(`colour: top = ${formatCount(d.scale.max, { compact: true })} I/Os per cell`, LEFT + plotW, y + 16);
      ctx.textAlign = 'left';
    }
    y += ROW_HEAD;
    paintLatencyAxis(ctx, input.uLo, input.uHi, input.schema, LEFT - 1, y, ROW, t.foreground);
    const rc = renderContext(
      { from: input.from, to: input.to, uLo: input.uLo, uHi: input.uHi, width: plotW, height: ROW, dpr: DPR },
      d.matrix.step,
    );
    ctx.save();
    ctx.translate(LEFT, y);
    ctx.beginPath();
    ctx.rect(0, 0, plotW, ROW);
    ctx.clip();
    const step = d.matrix.step;
    drawGaps(ctx, rc, d.matrix, input.known, t.gap, Math.floor(input.from / step), Math.ceil(input.to / step));
    const bmp = new HeatmapBitmap(d.matrix);
    bmp.setColours(input.palette, d.scale);
    bmp.sync();
    bmp.draw(ctx, rc);
    if (input.percentiles && d.track) {
      // The line layer is device pixels; composite it through a scratch canvas (putImageData would overwrite).
      const img = new PercentileLayer().render(rc, d.track, t.percentiles).image;
      const scratch = document.createElement('canvas');
      scratch.width = img.width;
      scratch.height = img.height;
      scratch.getContext('2d')?.putImageData(img, 0, 0);
      ctx.drawImage(scratch, 0, 0, plotW, ROW);
    }
    if (d.incidents) drawIncidentMarks(ctx, rc, d.incidents, t);
    ctx.restore();
    ctx.strokeStyle = t.grid;
    ctx.strokeRect(LEFT + 0.5, y + 0.5, plotW, ROW);
    ctx.save();
    ctx.translate(LEFT + plotW + GAP, y);
    drawHistogram(ctx, { from: 0, to: 1, uLo: input.uLo, uHi: input.uHi, width: HIST, height: ROW, dpr: DPR }, d.histogram, t, false);
    ctx.restore();
    y += ROW + 8;
  }
  // Legend.
  const lx = LEFT;
  const ly = y + 14;
  const lw = 260;
  for (let i = 1; i < PALETTE_SIZE; i++) {
    ctx.fillStyle = paletteCss(input.palette, i);
    ctx.fillRect(lx + ((i - 1) / (PALETTE_SIZE - 1)) * lw, ly, lw / (PALETTE_SIZE - 1) + 0.5, 10);
  }
  ctx.fillStyle = t.foreground;
  if (input.perDisk) {
    ctx.fillText('1', lx, ly + 24);
    ctx.textAlign = 'right';
    ctx.fillText('each disk’s max', lx + lw, ly + 24);
    ctx.textAlign = 'left';
    ctx.fillText(`I/Os per cell (${input.scale.kind}), scaled per disk`, lx + lw + 16, ly + 9);
  } else {
    ctx.textAlign = 'center';
    for (const v of legendTicks(input.scale)) ctx.fillText(formatCount(v, { compact: true }), lx + input.scale.position(v) * lw, ly + 24);
    ctx.textAlign = 'left';
    ctx.fillText(`I/Os per cell (${input.scale.kind}), one scale for every disk`, lx + lw + 16, ly + 9);
  }
  return canvas;
}

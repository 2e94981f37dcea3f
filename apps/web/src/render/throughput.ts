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
import { cssToWord } from '../model/colour.js';
import { laneCaption, seriesMax, THROUGHPUT_KEYS, type ThroughputKey, type ThroughputSeries } from '../model/throughput.js';
import { clearedCanvas, keptImage, measuredText, prepareCanvas, type RenderContext, type RenderTheme } from './contract.js';
import { drawTimeCursor } from './overlay.js';

export interface ThroughputMarks {
  /** The time cursor (seconds), as on the heat maps. */
  readonly cursor?: number | undefined;
}

/** Each lane's scale (its top value): what the labels say. */
export type ThroughputScales = Readonly<Record<ThroughputKey, number>>;

/** What a strip drew: each lane's scale and caption (model/throughput.ts laneCaption). */
export interface ThroughputLanes {
  readonly scales: ThroughputScales;
  readonly captions: Readonly<Record<ThroughputKey, string>>;
}

/** What rasterLanes found of each lane in view. */
interface LaneSeen {
  /** It drew waiting bios (its caption says so). */
  readonly waiting: boolean;
  /** Some column in view carries its value (not "no data"). */
  readonly inView: boolean;
}

/** Lane colours, in THROUGHPUT_KEYS order. */
export function laneColours(theme: RenderTheme): readonly string[] {
  return [theme.bar, theme.marks[1] ?? theme.accent, theme.marks[3] ?? theme.accent, theme.alert];
}

/** The y range [top, bottom) of lane `i` of a strip `height` px tall. */
export function laneBounds(i: number, height: number): [number, number] {
  const h = height / THROUGHPUT_KEYS.length;
  return [i * h, (i + 1) * h];
}

/** Space above a lane's bars, css px (its label's plate starts there). */
const LANE_PAD = 2;

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

/** Packed colours of one paint (cssToWord), parsed once per colour string. */
const WORDS = new Map<string, number>();
function word(css: string, alpha = 1): number {
  const key = `${alpha} ${css}`;
  let w = WORDS.get(key);
  if (w === undefined) {
    if (WORDS.size > 64) WORDS.clear(); // a few themes' worth; never grows with use
    WORDS.set(key, (w = cssToWord(css, alpha)));
  }
  return w;
}

/** What one lane draws in each device pixel column (css px heights; the tallest of the columns in it). */
interface LaneColumns {
  readonly bar: Float32Array;
  /** Waiting bios: the top of the stack (in flight), or the oldest wait's height (age). */
  readonly extra: Float32Array;
  /** 1: a column without data lies in this pixel column. */
  readonly gap: Uint8Array;
  /** 1: the queue was frozen in a column here. */
  readonly frozen: Uint8Array;
}

/**
 * Writes the lanes' bars into `img` (device pixels, cleared): one pass over the columns, then one
 * over the pixels, with no canvas call per bar. Drawn as fillRects (one to four a column, a lane
 * at a time), a live hour's four strips (720 columns × 4 lanes × 4 disks every second) took
 * 608 ms of 30 s in a CPU profile of bench/web's loaded live section, 297 ms after (such a
 * profile counts run-queue waits too); on a quiet page the main thread's CPU fell ~10 %. A
 * pixel column shows the columns whose span covers its centre; where columns are narrower than
 * a pixel, the tallest of them (as the overdrawn bars showed it). Returns, per lane, whether it
 * drew waiting bios and whether any column in view had its value.
 */
function rasterLanes(
  img: ImageData,
  rc: RenderContext,
  series: ThroughputSeries,
  theme: RenderTheme,
  maxes: readonly number[],
): readonly LaneSeen[] {
  const { width, height } = rc.viewport;
  const W = img.width;
  const H = img.height;
  const sx = W / width;
  const sy = H / height;
  const px = new Uint32Array(img.data.buffer);
  const colours = laneColours(theme);
  const gapWord = word(theme.gap, 0.18);
  const frozenWord = word(theme.accent);
  const lanes: LaneColumns = { bar: new Float32Array(W), extra: new Float32Array(W), gap: new Uint8Array(W), frozen: new Uint8Array(W) };
  const pad = LANE_PAD;
  const seen: LaneSeen[] = [];
  THROUGHPUT_KEYS.forEach((key, li) => {
    lanes.bar.fill(0);
    lanes.extra.fill(0);
    lanes.gap.fill(0);
    lanes.frozen.fill(0);
    const values = series[key];
    const extra = extraOf(series, key);
    const max = maxes[li] as number;
    const [top, bottom] = laneBounds(li, height);
    const lane = bottom - top - pad;
    let laneWaits = false;
    let inView = false;
    for (let i = 0; i < values.length; i++) {
      const col = series.col0 + i;
      const x0 = apply(rc.time, col * series.step) * sx;
      const x1 = apply(rc.time, (col + 1) * series.step) * sx;
      if (x1 < 0 || x0 > W) continue;
      const p0 = Math.max(0, Math.round(x0));
      const p1 = Math.min(W, Math.max(Math.round(x0) + 1, Math.round(x1)));
      const v = values[i] as number;
      if (Number.isNaN(v)) {
        for (let p = p0; p < p1; p++) lanes.gap[p] = 1;
        continue;
      }
      inView = true;
      const e = extra ? (extra[i] as number) || 0 : 0;
      const bh = v > 0 && max > 0 ? Math.max(1, (v / max) * lane) : 0;
      const eh = e > 0 && max > 0 ? Math.max(1, (e / max) * lane) : 0;
      if (eh > 0) laneWaits = true;
      const top2 = key === 'queue' ? bh + eh : eh;
      const frozen = key === 'queue' && series.frozen[i] === 1 ? 1 : 0;
      for (let p = p0; p < p1; p++) {
        if (bh > (lanes.bar[p] as number)) lanes.bar[p] = bh;
        if (top2 > (lanes.extra[p] as number)) lanes.extra[p] = top2;
        if (frozen) lanes.frozen[p] = 1;
      }
    }
    seen.push({ waiting: laneWaits, inView });
    const barWord = word(colours[li] ?? theme.bar);
    const extraWord = word(colours[li] ?? theme.bar, 0.45);
    const yTop = Math.round((top + pad) * sy);
    const yBottom = Math.round(bottom * sy);
    const yTick = Math.min(yBottom, Math.round((top + pad + FROZEN_TICK_PX) * sy));
    for (let p = 0; p < W; p++) {
      const bar = lanes.bar[p] as number;
      const ext = lanes.extra[p] as number;
      if (lanes.gap[p] && bar === 0 && ext === 0) for (let y = yTop; y < yBottom; y++) px[y * W + p] = gapWord;
      const yExtra = Math.max(yTop, Math.round((bottom - ext) * sy));
      for (let y = yExtra; y < yBottom; y++) px[y * W + p] = extraWord;
      // A bar is at least a device pixel tall (it is at least a css pixel: a value, however small, shows).
      const yBar = bar > 0 ? Math.min(yBottom - 1, Math.max(yTop, Math.round((bottom - bar) * sy))) : yBottom;
      for (let y = yBar; y < yBottom; y++) px[y * W + p] = barWord;
      if (lanes.frozen[p]) for (let y = yTop; y < yTick; y++) px[y * W + p] = frozenWord;
    }
  });
  return seen;
}

/** Draws `series` (undefined: nothing to draw) and returns the lanes' scales and captions. */
export function paintThroughput(
  canvas: HTMLCanvasElement,
  rc: RenderContext,
  series: ThroughputSeries | undefined,
  marks: ThroughputMarks,
  theme: RenderTheme,
): ThroughputLanes | undefined {
  // Cleared only when there is nothing to draw: otherwise the pixel buffer, put whole, replaces every pixel.
  const ctx = series ? prepareCanvas(canvas, rc.viewport.width, rc.viewport.height, rc.viewport.dpr) : clearedCanvas(canvas, rc.viewport);
  if (!ctx || !series) return undefined;
  const { width: w, height: h } = rc.viewport;
  const scales = { iops: 0, mbps: 0, queue: 0, oldest: 0 };
  const maxes = THROUGHPUT_KEYS.map((key) => (scales[key] = laneMax(series, key)));
  const img = keptImage(canvas, ctx);
  const seen = rasterLanes(img, rc, series, theme, maxes);
  const captions = { iops: '', mbps: '', queue: '', oldest: '' };
  ctx.putImageData(img, 0, 0);
  ctx.font = theme.font;
  ctx.textBaseline = 'top';
  THROUGHPUT_KEYS.forEach((key, li) => {
    const [top, bottom] = laneBounds(li, h);
    const pad = LANE_PAD;
    const lane = bottom - top - pad;
    if (li > 0) {
      ctx.fillStyle = theme.grid;
      ctx.fillRect(0, top, w, 1);
    }
    const found = seen[li];
    const text = (captions[key] = laneCaption(key, scales[key], found?.inView ?? false, found?.waiting ?? false));
    // On a plate of the background, above the bars: in a steady view they reach the lane's top,
    // and a label drawn straight over them could not be read (issue 29).
    const m = measuredText(ctx, text);
    const textH = Math.min(lane, (m.ascent || 8) + (m.descent || 3));
    ctx.fillStyle = theme.background;
    ctx.globalAlpha = 0.85;
    ctx.fillRect(2, top + pad, m.width + 4, textH);
    ctx.globalAlpha = 1;
    ctx.fillStyle = theme.muted;
    ctx.fillText(text, 4, top + pad);
  });
  if (marks.cursor !== undefined) drawTimeCursor(ctx, rc, marks.cursor, theme.foreground);
  return { scales, captions };
}

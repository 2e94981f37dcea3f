/**
 * The throughput strip's bars as pixels (render/throughput.ts draws them on its canvas): each
 * lane's bars, "no data" bands, waiting bios and "queue frozen" ticks written straight into a
 * canvas's RGBA bytes, and which pixel columns a change of values touches. No DOM here: the
 * equivalence of a slid strip's partial paints with a whole paint is tested in node
 * (test/throughputRaster.test.ts).
 */
import { type Affine, apply, invert, type Viewport } from '../model/coords.js';
import { cssToWord } from '../model/colour.js';
import { laneExtra, THROUGHPUT_KEYS, type ThroughputKey, type ThroughputSeries } from '../model/throughput.js';

/** Where the bars go: a RenderContext's window and time mapping (render/contract.ts). */
export interface LaneContext {
  readonly viewport: Viewport;
  /** time → css x. */
  readonly time: Affine;
}

/** The colours the bars use: a RenderTheme's (render/contract.ts). */
export interface LaneTheme {
  readonly bar: string;
  readonly accent: string;
  readonly alert: string;
  readonly gap: string;
  readonly marks: readonly string[];
}

/** Lane colours, in THROUGHPUT_KEYS order. */
export function laneColours(theme: LaneTheme): readonly string[] {
  return [theme.bar, theme.marks[1] ?? theme.accent, theme.marks[3] ?? theme.accent, theme.alert];
}

/** The y range [top, bottom) of lane `i` of a strip `height` px tall. */
export function laneBounds(i: number, height: number): [number, number] {
  const h = height / THROUGHPUT_KEYS.length;
  return [i * h, (i + 1) * h];
}

/** Space above a lane's bars, css px (its label's plate starts there). */
export const LANE_PAD = 2;

/** Height of the "queue frozen" tick, css px. */
export const FROZEN_TICK_PX = 3;

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

/** The device pixel columns [p0, p1) column `i` of `series` covers at `rc` (sx device px per css px). */
function columnPixels(rc: LaneContext, series: ThroughputSeries, i: number, sx: number, W: number): [number, number] {
  const col = series.col0 + i;
  const x0 = apply(rc.time, col * series.step) * sx;
  const x1 = apply(rc.time, (col + 1) * series.step) * sx;
  if (x1 < 0 || x0 > W) return [0, 0];
  const r0 = Math.round(x0);
  return [Math.max(0, r0), Math.min(W, Math.max(r0 + 1, Math.round(x1)))];
}

/** A canvas's pixels, as ImageData holds them (RGBA bytes, row by row). */
export interface LanePixels {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8ClampedArray;
}

/**
 * Writes the lanes' bars of device pixel columns [pLo, pHi) into `img` (the canvas's pixels, the
 * rest left as they are): one pass over the columns, then one over the pixels, with no canvas call
 * per bar. Drawn as fillRects (one to four a column, a lane at a time), a live hour's four strips
 * (720 columns × 4 lanes × 4 disks every second) took 608 ms of 30 s in a CPU profile of
 * bench/web's loaded live section, 297 ms after. A pixel column shows the columns whose span
 * covers its centre; where columns are narrower than a pixel, the tallest of them (as the
 * overdrawn bars showed it).
 */
export function rasterLanes(
  img: LanePixels,
  rc: LaneContext,
  series: ThroughputSeries,
  theme: LaneTheme,
  tops: readonly number[],
  pLo: number,
  pHi: number,
): void {
  const { height } = rc.viewport;
  const W = img.width;
  const H = img.height;
  const sx = W / rc.viewport.width;
  const sy = H / height;
  const px = new Uint32Array(img.data.buffer);
  for (let y = 0; y < H; y++) px.fill(0, y * W + pLo, y * W + pHi);
  const colours = laneColours(theme);
  const gapWord = word(theme.gap, 0.18);
  const frozenWord = word(theme.accent);
  const n = pHi - pLo;
  // The columns whose pixels may fall in [pLo, pHi): a pixel either side, a column either side
  // (a column narrower than a pixel takes the pixel its start rounds to). A live second's runs
  // are a few pixels of a strip of hundreds of columns.
  const toTime = invert(rc.time);
  const iLo = Math.max(0, Math.floor(apply(toTime, (pLo - 1) / sx) / series.step) - series.col0 - 1);
  const iHi = Math.min(series.iops.length, Math.ceil(apply(toTime, (pHi + 1) / sx) / series.step) - series.col0 + 1);
  const lanes: LaneColumns = { bar: new Float32Array(n), extra: new Float32Array(n), gap: new Uint8Array(n), frozen: new Uint8Array(n) };
  for (let li = 0; li < THROUGHPUT_KEYS.length; li++) {
    const key = THROUGHPUT_KEYS[li] as ThroughputKey;
    lanes.bar.fill(0);
    lanes.extra.fill(0);
    lanes.gap.fill(0);
    lanes.frozen.fill(0);
    const values = series[key];
    const extra = laneExtra(series, key);
    const max = tops[li] as number;
    const [top, bottom] = laneBounds(li, height);
    const lane = bottom - top - LANE_PAD;
    for (let i = iLo; i < iHi; i++) {
      const [c0, c1] = columnPixels(rc, series, i, sx, W);
      const p0 = Math.max(c0, pLo) - pLo;
      const p1 = Math.min(c1, pHi) - pLo;
      if (p1 <= p0) continue;
      const v = values[i] as number;
      if (Number.isNaN(v)) {
        for (let p = p0; p < p1; p++) lanes.gap[p] = 1;
        continue;
      }
      const e = extra ? (extra[i] as number) || 0 : 0;
      const bh = v > 0 && max > 0 ? Math.max(1, (v / max) * lane) : 0;
      const eh = e > 0 && max > 0 ? Math.max(1, (e / max) * lane) : 0;
      const top2 = key === 'queue' ? bh + eh : eh;
      const frozen = key === 'queue' && series.frozen[i] === 1 ? 1 : 0;
      for (let p = p0; p < p1; p++) {
        if (bh > (lanes.bar[p] as number)) lanes.bar[p] = bh;
        if (top2 > (lanes.extra[p] as number)) lanes.extra[p] = top2;
        if (frozen) lanes.frozen[p] = 1;
      }
    }
    const barWord = word(colours[li] ?? theme.bar);
    const extraWord = word(colours[li] ?? theme.bar, 0.45);
    const yTop = Math.round((top + LANE_PAD) * sy);
    const yBottom = Math.round(bottom * sy);
    const yTick = Math.min(yBottom, Math.round((top + LANE_PAD + FROZEN_TICK_PX) * sy));
    for (let p = 0; p < n; p++) {
      const x = p + pLo;
      const bar = lanes.bar[p] as number;
      const ext = lanes.extra[p] as number;
      if (lanes.gap[p] && bar === 0 && ext === 0) for (let y = yTop; y < yBottom; y++) px[y * W + x] = gapWord;
      const yExtra = Math.max(yTop, Math.round((bottom - ext) * sy));
      for (let y = yExtra; y < yBottom; y++) px[y * W + x] = extraWord;
      // A bar is at least a device pixel tall (it is at least a css pixel: a value, however small, shows).
      const yBar = bar > 0 ? Math.min(yBottom - 1, Math.max(yTop, Math.round((bottom - bar) * sy))) : yBottom;
      for (let y = yBar; y < yBottom; y++) px[y * W + x] = barWord;
      if (lanes.frozen[p]) for (let y = yTop; y < yTick; y++) px[y * W + x] = frozenWord;
    }
  }
}

/** Whether column `i` of `a` and of `b` (the same columns) hold the same values. */
function sameColumn(a: ThroughputSeries, b: ThroughputSeries, i: number): boolean {
  const same = (x: number, y: number): boolean => x === y || (Number.isNaN(x) && Number.isNaN(y));
  return (
    same(a.iops[i] as number, b.iops[i] as number) &&
    same(a.mbps[i] as number, b.mbps[i] as number) &&
    same(a.queue[i] as number, b.queue[i] as number) &&
    same(a.oldest[i] as number, b.oldest[i] as number) &&
    same(a.waiting[i] as number, b.waiting[i] as number) &&
    same(a.oldestWait[i] as number, b.oldestWait[i] as number) &&
    a.frozen[i] === b.frozen[i]
  );
}

/**
 * The runs [lo, hi) of device pixel columns, of a canvas `W` device pixels wide painted at `rc`,
 * that show a column whose values differ between `before` and `after` (series of the same
 * columns), left to right, and how many columns differ. Painting those pixels again from `after`
 * (rasterLanes) leaves the canvas as a whole paint of `after` would. A live second changes a run
 * at each end: the newest column, filling, and the oldest, losing its first second.
 */
export function changedPixels(
  rc: LaneContext,
  before: ThroughputSeries,
  after: ThroughputSeries,
  W: number,
): { runs: readonly (readonly [number, number])[]; columns: number } {
  const runs: [number, number][] = [];
  let columns = 0;
  const sx = W / rc.viewport.width;
  for (let i = 0; i < after.iops.length; i++) {
    if (sameColumn(after, before, i)) continue;
    columns++;
    const [p0, p1] = columnPixels(rc, after, i, sx, W);
    if (p1 <= p0) continue;
    const last = runs[runs.length - 1];
    // Columns are left to right: a run grows while the next changed column's pixels touch it.
    if (last && p0 <= last[1]) last[1] = Math.max(last[1], p1);
    else runs.push([p0, p1]);
  }
  return { runs, columns };
}

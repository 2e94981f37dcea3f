/**
 * Percentile lines over a heat map: one stepped line per quantile (a column's percentile holds
 * for its whole step), broken where a column had no I/O.
 *
 * Rasterized by hand into an ImageData at the render context's resolution (on the dashboard, one
 * pixel per CSS pixel, upscaled exactly by the compositor: render/heatLayers.ts, flatDpr), on a
 * canvas layer of its own: the lines are all horizontal and vertical segments, so nothing is lost
 * without antialiasing, and it costs a few thousand pixel writes where stroking the same paths
 * with Skia costs 10–50 ms per redraw (measured with bench/web.ts). A full render clears and
 * uploads only the band of rows the lines occupy; an incremental one (live append) only the
 * columns that changed. When there are more columns than pixels, a pixel column spans the levels
 * of all the columns in it. Dashes are a pixel pattern: p50 solid, p99 dashed, p99.9 dotted.
 *
 * The lines are deliberately light: one CSS pixel wide, LINE_ALPHA opaque, no halo. They sit
 * on exactly the rows an anomaly lights up (a one-row spike holds every percentile of its
 * seconds), so anything heavier hides the cells they describe; the toolbar turns them off.
 */
import { cssToWord } from '../model/colour.js';
import type { PercentileTrack } from '../model/percentiles.js';
import type { RenderContext } from './contract.js';

/** Opacity of the lines: the cells under them stay readable. */
export const LINE_ALPHA = 0.7;

/** On/off lengths in CSS px per line; undefined = solid. */
const DASHES: readonly (readonly [number, number] | undefined)[] = [undefined, [6, 3], [2, 2]];

/** A rectangle of the layer (device pixels) to upload. */
export interface LayerUpdate {
  readonly image: ImageData;
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

/** Per pixel column: top and bottom y of a line there (device px), or -1. */
interface Seg {
  top: Int32Array;
  bot: Int32Array;
}

export class PercentileLayer {
  private image: ImageData | undefined;
  private words: Uint32Array = new Uint32Array(0);
  private colourKey = '';
  private lineWords: number[] = [];
  private band: [number, number] = [0, 0];
  private segs: Seg[] = [];

  /** The canvas was cleared behind our back: the next render repaints everything. */
  forget(): void {
    this.image = undefined;
  }

  private setup(rc: RenderContext, colours: readonly string[], qn: number): { W: number; H: number; fresh: boolean } {
    const vp = rc.viewport;
    const W = Math.max(1, Math.round(vp.width * vp.dpr));
    const H = Math.max(1, Math.round(vp.height * vp.dpr));
    let fresh = false;
    if (!this.image || this.image.width !== W || this.image.height !== H) {
      this.image = new ImageData(W, H);
      this.words = new Uint32Array(this.image.data.buffer);
      this.segs = [];
      this.band = [0, 0];
      fresh = true;
    }
    while (this.segs.length < qn) this.segs.push({ top: new Int32Array(W).fill(-1), bot: new Int32Array(W).fill(-1) });
    const key = colours.join();
    if (key !== this.colourKey) {
      this.colourKey = key;
      this.lineWords = colours.map((c) => cssToWord(c, LINE_ALPHA));
    }
    return { W, H, fresh };
  }

  /** Line width in device pixels: one CSS pixel. */
  private thickness(dpr: number): number {
    return Math.max(1, Math.round(dpr));
  }

  /** Rasterizes every line of `track` visible in `rc`. */
  render(rc: RenderContext, track: PercentileTrack, colours: readonly string[]): LayerUpdate {
    const qn = track.qs.length;
    const { W, H, fresh } = this.setup(rc, colours, qn);
    const t = this.thickness(rc.viewport.dpr);
    for (let qi = 0; qi < qn; qi++) {
      const seg = this.segs[qi] as Seg;
      seg.top.fill(-1);
      seg.bot.fill(-1);
    }
    const step = track.matrix.step;
    const [lo, hi] = this.trace(rc, track, W, Math.floor(rc.viewport.from / step), Math.ceil(rc.viewport.to / step), 0, W);
    const pad = (t >> 1) + 1;
    const band: [number, number] = lo <= hi ? [Math.max(0, lo - pad), Math.min(H, hi + pad + 1)] : [0, 0];
    // Clear what the lines covered last time and what they cover now; upload that.
    const y0 = fresh ? 0 : Math.min(this.band[0], band[0]);
    const y1 = fresh ? H : Math.max(this.band[1], band[1]);
    if (y1 > y0) this.words.fill(0, y0 * W, y1 * W);
    this.band = band;
    this.paintAll(W, H, t, rc.viewport.dpr, 0, W);
    return { image: this.image as ImageData, x: 0, y: y0, w: W, h: Math.max(0, y1 - y0) };
  }

  /**
   * Re-rasterizes only columns [c0, c1) (and the step into c0), e.g. after a live append,
   * leaving the rest of the layer as it is. `rc` must be the one of the last full render.
   */
  renderColumns(rc: RenderContext, track: PercentileTrack, colours: readonly string[], c0: number, c1: number): LayerUpdate {
    const qn = track.qs.length;
    const { W, H, fresh } = this.setup(rc, colours, qn);
    if (fresh) return this.render(rc, track, colours);
    const t = this.thickness(rc.viewport.dpr);
    const dpr = rc.viewport.dpr;
    const step = track.matrix.step;
    const xOf = (time: number): number => Math.round((rc.time.scale * time + rc.time.offset) * dpr);
    // Pixels whose trace changes: from the start of the column before c0 to the end of c1 - 1.
    const pa = Math.max(0, xOf((c0 - 1) * step));
    const pb = Math.min(W, xOf(c1 * step) + 1);
    if (pb <= pa) return { image: this.image as ImageData, x: 0, y: 0, w: 0, h: 0 };
    for (let qi = 0; qi < qn; qi++) {
      const seg = this.segs[qi] as Seg;
      seg.top.fill(-1, pa, pb);
      seg.bot.fill(-1, pa, pb);
    }
    // Start two columns early so the level before c0 - 1 is known (its step is in range).
    const [lo, hi] = this.trace(rc, track, W, c0 - 2, c1, pa, pb);
    // Clear a margin around the traced pixels (strokes reach ±t) and repaint everything
    // that can draw into it, clipped to it.
    const ca = Math.max(0, pa - 2 * t);
    const cb = Math.min(W, pb + 2 * t);
    for (let y = 0; y < H; y++) this.words.fill(0, y * W + ca, y * W + cb);
    this.paintAll(W, H, t, dpr, ca, cb);
    if (lo <= hi) {
      const pad = (t >> 1) + 1;
      this.band = [Math.min(this.band[0], Math.max(0, lo - pad)), Math.max(this.band[1], Math.min(H, hi + pad + 1))];
    }
    return { image: this.image as ImageData, x: ca, y: 0, w: cb - ca, h: H };
  }

  private paintAll(W: number, H: number, t: number, dpr: number, clipLo: number, clipHi: number): void {
    const qn = this.segs.length;
    for (let qi = 0; qi < qn; qi++) {
      const d = DASHES[qi];
      const dash = d && ([Math.max(1, Math.round(d[0] * dpr)), Math.max(1, Math.round(d[1] * dpr))] as const);
      this.paint(this.segs[qi] as Seg, W, H, t, this.lineWords[qi] ?? 0xffffffff, dash, clipLo, clipHi);
    }
  }

  /**
   * Records, for columns [k0, k1) and every quantile, the vertical extent of each line in each
   * pixel column within [pxLo, pxHi): a horizontal run has top = bot; the step between two
   * columns spans both levels at the later column's left edge. Returns the y range touched.
   */
  private trace(
    rc: RenderContext,
    track: PercentileTrack,
    W: number,
    k0: number,
    k1: number,
    pxLo: number,
    pxHi: number,
  ): [number, number] {
    const m = track.matrix;
    const step = m.step;
    const dpr = rc.viewport.dpr;
    const qn = track.qs.length;
    const ka = Math.max(m.start, k0);
    const kb = Math.min(m.end, k1);
    let lo = Infinity;
    let hi = -Infinity;
    const prev = new Float64Array(qn).fill(NaN);
    // time → device x and u → device y, inlined for the per-column loop.
    const ax = rc.time.scale * dpr;
    const bx = rc.time.offset * dpr;
    const ay = rc.bucket.scale * dpr;
    const by = rc.bucket.offset * dpr;
    const clipLo = Math.max(0, pxLo);
    const clipHi = Math.min(W, pxHi);
    for (let k = ka; k < kb; k++) {
      const col = track.columnValues(k);
      if (!col) continue;
      const x0 = Math.round(ax * k * step + bx);
      const x1 = Math.max(x0 + 1, Math.round(ax * (k + 1) * step + bx));
      const a = x0 < clipLo ? clipLo : x0;
      const b = x1 > clipHi ? clipHi : x1;
      for (let qi = 0; qi < qn; qi++) {
        const u = col.values[col.offset + qi] as number;
        const prevY = prev[qi] as number;
        if (u !== u) {
          prev[qi] = NaN;
          continue;
        }
        const y = Math.round(ay * u + by);
        prev[qi] = y;
        if (b <= a) continue;
        const stepped = prevY === prevY && prevY !== y;
        const ya = stepped ? Math.min(prevY, y) : y;
        const yb = stepped ? Math.max(prevY, y) : y;
        if (ya < lo) lo = ya;
        if (yb > hi) hi = yb;
        const seg = this.segs[qi] as Seg;
        const top = seg.top;
        const bot = seg.bot;
        for (let x = a; x < b; x++) {
          // Several columns in one pixel (zoomed out): the pixel spans all their levels.
          const lo2 = x === x0 ? ya : y;
          const hi2 = x === x0 ? yb : y;
          const tp = top[x] as number;
          if (tp < 0) {
            top[x] = lo2;
            bot[x] = hi2;
          } else {
            if (lo2 < tp) top[x] = lo2;
            if (hi2 > (bot[x] as number)) bot[x] = hi2;
          }
        }
      }
    }
    return [lo, hi];
  }

  /** Draws a traced line `thick` px wide over pixel columns that reach [clipLo, clipHi). */
  private paint(
    seg: Seg,
    W: number,
    H: number,
    thick: number,
    word: number,
    dash: readonly [number, number] | undefined,
    clipLo: number,
    clipHi: number,
  ): void {
    const words = this.words;
    const half = thick >> 1;
    const period = dash ? dash[0] + dash[1] : 0;
    const xFrom = Math.max(0, clipLo - thick);
    const xTo = Math.min(W, clipHi + thick);
    for (let x = xFrom; x < xTo; x++) {
      const top = seg.top[x] as number;
      if (top < 0) continue;
      const bot = seg.bot[x] as number;
      const vertical = bot > top;
      // Horizontal runs are dashed along x, vertical steps along y; a step is `thick` wide.
      if (dash && !vertical && x % period >= dash[0]) continue;
      const xa = Math.max(clipLo, vertical ? x - half : x);
      const xb = Math.min(clipHi, vertical ? x - half + thick : x + 1);
      if (xb <= xa) continue;
      const ya = Math.max(0, top - half);
      const yb = Math.min(H, bot - half + thick);
      for (let y = ya; y < yb; y++) {
        if (dash && vertical && y % period >= dash[0]) continue;
        const row = y * W;
        for (let xx = xa; xx < xb; xx++) words[row + xx] = word;
      }
    }
  }
}

/**
 * Heat map cells as pixels. The matrix is coloured into an ImageData at DATA resolution (one
 * pixel per column × bucket), kept on an offscreen canvas that mirrors the matrix's ring of
 * columns, and blitted to the screen with drawImage (scaled, nearest-neighbour). A full
 * redraw of 3600 × 106 cells is one pass over a Uint32Array and one putImageData; a live
 * frame recolours one column (106 pixels) and blits. Never a fillRect or a DOM node per cell.
 */
import type { HeatMatrix } from '../model/heatmatrix.js';
import type { CountScale } from '../model/colour.js';
import { apply } from '../model/coords.js';
import { type RenderContext, scratchSurface, type Surface, type Surface2D } from './contract.js';

export interface BlitStats {
  /** Columns recoloured by the last sync (capacity on a full redraw). */
  columns: number;
  full: boolean;
  /** Absolute columns [lo, hi) bounding what changed. */
  lo: number;
  hi: number;
  /** Time spent colouring pixels and uploading them (ms). */
  colourMs?: number;
  uploadMs?: number;
}

export class HeatmapBitmap {
  private readonly image: ImageData;
  private readonly words: Uint32Array;
  private readonly surface: { canvas: Surface; ctx: Surface2D };
  private palette: Uint32Array | undefined;
  private scale: CountScale | undefined;
  private needFull = true;
  /** Which column, at which slot version, each bitmap column was last coloured from. */
  private readonly drawnCol: Float64Array;
  private readonly drawnVer: Uint32Array;

  constructor(readonly matrix: HeatMatrix) {
    this.drawnCol = new Float64Array(matrix.capacity).fill(NaN);
    this.drawnVer = new Uint32Array(matrix.capacity);
    this.surface = scratchSurface(matrix.capacity, matrix.rows);
    this.image = new ImageData(matrix.capacity, matrix.rows);
    this.words = new Uint32Array(this.image.data.buffer);
  }

  /** Sets the colours; a different palette or scale recolours everything on the next sync. */
  setColours(palette: Uint32Array, scale: CountScale): void {
    if (palette !== this.palette || scale !== this.scale) {
      this.palette = palette;
      this.scale = scale;
      this.needFull = true;
    }
  }

  /** Forces a full recolour on the next sync (benchmarks, theme changes). */
  invalidate(): void {
    this.needFull = true;
  }

  /**
   * Brings the bitmap up to date with the matrix: recolours the columns whose slot changed
   * since the last sync (a live frame: one column) or everything after a colour change.
   */
  sync(): BlitStats {
    const m = this.matrix;
    if (!this.palette || !this.scale) return { columns: 0, full: false, lo: 0, hi: 0 };
    if (this.needFull) {
      this.needFull = false;
      const t0 = performance.now();
      this.words.fill(0);
      this.drawnCol.fill(NaN);
      this.colourColumns(m.start, m.end);
      const t1 = performance.now();
      this.surface.ctx.putImageData(this.image, 0, 0);
      return { columns: m.capacity, full: true, lo: m.start, hi: m.end, colourMs: t1 - t0, uploadMs: performance.now() - t1 };
    }
    // Changed slots: a different column in it now, or the same column with new counts.
    let lo = Infinity;
    let hi = -Infinity;
    let cLo = Infinity;
    let cHi = -Infinity;
    let n = 0;
    for (let c = m.start; c < m.end; c++) {
      const s = m.slot(c);
      if (this.drawnCol[s] === c && this.drawnVer[s] === m.slotVersion[s]) continue;
      // Extend to the run of changed columns that follows, and colour it in one go.
      let e = c + 1;
      while (e < m.end) {
        const se = m.slot(e);
        if (this.drawnCol[se] === e && this.drawnVer[se] === m.slotVersion[se]) break;
        e++;
      }
      this.colourColumns(c, e);
      if (c < cLo) cLo = c;
      if (e > cHi) cHi = e;
      for (let k = c; k < e; k++) {
        const sk = m.slot(k);
        if (sk < lo) lo = sk;
        if (sk > hi) hi = sk;
      }
      n += e - c;
      c = e - 1;
    }
    if (n === 0) return { columns: 0, full: false, lo: 0, hi: 0 };
    // One upload of the bounding slot range (live appends touch one or two adjacent slots).
    this.surface.ctx.putImageData(this.image, 0, 0, lo, 0, hi - lo + 1, m.rows);
    return { columns: n, full: false, lo: cLo, hi: cHi };
  }

  /**
   * Colours columns [lo, hi) into the ImageData: one typed-array load per cell through the
   * count → colour table. Column by column, writing down the bitmap with a stride of one row
   * (measured faster in V8 than row-major or tiled orders for 3,600 × 106).
   */
  private colourColumns(lo: number, hi: number): void {
    const m = this.matrix;
    const palette = this.palette as Uint32Array;
    const scale = this.scale as CountScale;
    const lut = scale.words(palette);
    const n = lut.length;
    const rows = m.rows;
    const cap = m.capacity;
    const counts = m.counts;
    const words = this.words;
    const top = (rows - 1) * cap;
    for (let c = lo; c < hi; c++) {
      const s = m.slot(c);
      this.drawnCol[s] = c;
      this.drawnVer[s] = m.slotVersion[s] as number;
      const base = s * rows;
      // Row r is drawn at y = rows - 1 - r: long latencies at the top.
      for (let r = 0, p = top + s; r < rows; r++, p -= cap) {
        const v = counts[base + r] as number;
        words[p] = v < n ? (lut[v | 0] as number) : (palette[scale.index(v)] as number);
      }
    }
  }

  /** Blits the visible part of the bitmap into `ctx` (which draws in CSS pixels). */
  draw(ctx: CanvasRenderingContext2D, rc: RenderContext): void {
    const m = this.matrix;
    const vp = rc.viewport;
    const step = m.step;
    const k0 = Math.max(m.start, Math.floor(vp.from / step));
    const k1 = Math.min(m.end, Math.ceil(vp.to / step));
    if (k1 <= k0) return;
    // Rows [uLo, uHi) of the bitmap, flipped: bitmap y = rows - u.
    const sy = m.rows - vp.uHi;
    const sh = vp.uHi - vp.uLo;
    ctx.imageSmoothingEnabled = false;
    // Column edges snapped to device pixels: no antialiased seams, and redrawing a single
    // column later (live append) covers exactly the pixels it covered in a full draw.
    const dpr = vp.dpr;
    const snap = (x: number): number => Math.round(x * dpr) / dpr;
    const blit = (colFrom: number, colTo: number): void => {
      const sx = m.slot(colFrom);
      const dx0 = snap(apply(rc.time, colFrom * step));
      const dx1 = snap(apply(rc.time, colTo * step));
      ctx.drawImage(this.surface.canvas, sx, sy, colTo - colFrom, sh, dx0, 0, dx1 - dx0, vp.height);
    };
    const s0 = m.slot(k0);
    const n = k1 - k0;
    if (s0 + n <= m.capacity) blit(k0, k1);
    else {
      const first = m.capacity - s0;
      blit(k0, k0 + first);
      blit(k0 + first, k1);
    }
  }
}

/**
 * Colour scale math for heat map cells: count → palette index → packed RGBA, with no DOM.
 *
 * The renderer writes pixels as Uint32 words straight into ImageData, so the palette is a
 * 256-entry Uint32Array in the machine's byte order. Index 0 is reserved for "no I/O" and is
 * fully transparent (the themed canvas background shows through), so an empty cell never looks
 * like a cell with one I/O. Counts are integers, so the count → index map is tabulated for
 * small counts and computed only for large ones.
 */
import { color as parseColour, interpolateInferno, interpolateRdBu, interpolateYlOrRd } from 'd3';

export type ColourScaleKind = 'linear' | 'log';
/**
 * How heat maps share colours: 'disk' scales each disk's heat map to its own visible maximum
 * (a 40 I/O/s spike on a quiet disk is as bright as a busy disk's peak: anomalies show);
 * 'shared' uses one scale for every disk (brightness compares across disks).
 */
export type ColourNorm = 'disk' | 'shared';
export type ThemeName = 'light' | 'dark';

export const PALETTE_SIZE = 256;

/** True on little-endian machines (every browser we target; checked once). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([0x01020304]).buffer)[0] === 0x04;

/** Packs RGBA bytes as the Uint32 word ImageData stores for them on this machine. */
export function packRgba(r: number, g: number, b: number, a = 255, littleEndian = LITTLE_ENDIAN): number {
  return littleEndian ? ((a << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | a) >>> 0;
}

/** Unpacks a palette word into [r, g, b, a]. */
export function unpackRgba(word: number, littleEndian = LITTLE_ENDIAN): [number, number, number, number] {
  return littleEndian
    ? [word & 255, (word >>> 8) & 255, (word >>> 16) & 255, word >>> 24]
    : [word >>> 24, (word >>> 16) & 255, (word >>> 8) & 255, word & 255];
}

/** Sequential palettes per theme: bright = many on dark backgrounds, dark = many on light ones. */
export function paletteInterpolator(theme: ThemeName): (t: number) => string {
  return theme === 'dark' ? (t) => interpolateInferno(0.12 + 0.88 * t) : (t) => interpolateYlOrRd(0.1 + 0.9 * t);
}

/**
 * The diverging scale of a difference (compare view): t in [-1, 1] → CSS colour, blue for
 * less (−1), red for more (+1), fading out towards 0: the sign reads from the hue and the size
 * from how strong it is. Fading to transparent rather than to white keeps a small difference
 * faint on either theme's background (white would glare on a dark one). Clamped to [-1, 1].
 */
export function divergingColour(t: number): string {
  const c = Number.isFinite(t) ? Math.max(-1, Math.min(1, t)) : 0;
  // One red and one blue of RdBu, mid-way out: strong on white and on near-black alike.
  const hue = parseColour(interpolateRdBu(c < 0 ? 0.84 : 0.16))?.rgb();
  if (!hue) return 'transparent';
  hue.opacity = 0.12 + 0.88 * Math.abs(c);
  return hue.formatRgb();
}

/** The palette: entry 0 transparent, entries 1..255 sampling `interp` from 0 to 1. */
export function buildPalette(interp: (t: number) => string, littleEndian = LITTLE_ENDIAN): Uint32Array {
  const lut = new Uint32Array(PALETTE_SIZE);
  for (let i = 1; i < PALETTE_SIZE; i++) {
    const c = parseColour(interp((i - 1) / (PALETTE_SIZE - 2)))?.rgb();
    lut[i] = c ? packRgba(Math.round(c.r), Math.round(c.g), Math.round(c.b), 255, littleEndian) : 0;
  }
  return lut;
}

/** A CSS colour as a packed word (alpha scaled by `alpha`); transparent if unparseable. */
export function cssToWord(css: string, alpha = 1, littleEndian = LITTLE_ENDIAN): number {
  const c = parseColour(css)?.rgb();
  if (!c) return 0;
  return packRgba(Math.round(c.r), Math.round(c.g), Math.round(c.b), Math.round(255 * alpha * (c.opacity ?? 1)), littleEndian);
}

/** CSS colour of a palette entry (for legends drawn as vectors). */
export function paletteCss(lut: Uint32Array, i: number, littleEndian = LITTLE_ENDIAN): string {
  const [r, g, b] = unpackRgba(lut[i] ?? 0, littleEndian);
  return `rgb(${r},${g},${b})`;
}

/** Rounds a maximum count up to 1, 2 or 5 × a power of ten, so the domain moves in steps. */
export function niceMax(max: number): number {
  if (!(max > 1)) return 1;
  const e = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * e >= max) return m * e;
  return 10 * e;
}

/**
 * The colour domain of a heat map whose largest cell holds `max`: rounded up to 1-2-5 so it
 * moves in steps (small changes keep the colours); with `grow` (a live append) it never
 * narrows below `current`, so a live second only ever recolours when something brighter came.
 */
export function colourDomain(max: number, current?: number, grow = false): number {
  const d = niceMax(max);
  return grow && current !== undefined ? Math.max(d, current) : d;
}

/** Largest count tabulated; above it the index is computed. */
const TABLE_LIMIT = 4096;

/** Maps counts to palette indices for a domain [0, max]. */
export class CountScale {
  private readonly table: Uint8Array;
  private readonly k: number;

  constructor(
    readonly kind: ColourScaleKind,
    readonly max: number,
  ) {
    this.k = kind === 'log' ? 1 / Math.log1p(Math.max(1, max)) : 1 / Math.max(1, max);
    this.table = new Uint8Array(Math.min(TABLE_LIMIT, Math.ceil(max)) + 1);
    for (let c = 1; c < this.table.length; c++) this.table[c] = this.compute(c);
  }

  /** Palette index of a count: 0 for none, 1..255 otherwise (never 0 for a positive count). */
  index(count: number): number {
    if (count <= 0) return 0;
    if (count < this.table.length && Number.isInteger(count)) return this.table[count] as number;
    return this.compute(count);
  }

  /** Integer counts below this have a tabulated index (and `words` entry). */
  get tabulated(): number {
    return this.table.length;
  }

  /**
   * count → packed colour for every tabulated count (0 → transparent), so the renderer's
   * inner loop is one typed-array load per cell. Cached per palette.
   */
  words(palette: Uint32Array): Uint32Array {
    if (this.wordsFor === palette && this.wordCache) return this.wordCache;
    const out = new Uint32Array(this.table.length);
    for (let c = 1; c < out.length; c++) out[c] = palette[this.table[c] as number] as number;
    this.wordsFor = palette;
    this.wordCache = out;
    return out;
  }

  private wordsFor: Uint32Array | undefined;
  private wordCache: Uint32Array | undefined;

  /** Fraction 0..1 along the palette of a count (for legends). */
  position(count: number): number {
    if (count <= 0) return 0;
    return Math.min(1, this.kind === 'log' ? Math.log1p(count) * this.k : count * this.k);
  }

  /** The count at a palette position (inverse of position). */
  countAt(position: number): number {
    const p = Math.min(1, Math.max(0, position));
    return this.kind === 'log' ? Math.expm1(p / this.k) : p / this.k;
  }

  private compute(count: number): number {
    const t = this.kind === 'log' ? Math.log1p(count) * this.k : count * this.k;
    const i = 1 + Math.floor(Math.min(1, t) * (PALETTE_SIZE - 2) + 1e-9);
    return i > PALETTE_SIZE - 1 ? PALETTE_SIZE - 1 : i;
  }
}

/** Legend ticks: 1-2-5 steps for linear, powers of ten for log (always including max). */
export function legendTicks(scale: CountScale, maxTicks = 6): number[] {
  const out: number[] = [];
  if (scale.kind === 'log') {
    for (let v = 1; v <= scale.max; v *= 10) out.push(v);
  } else {
    const raw = scale.max / maxTicks;
    const e = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
    const step = [1, 2, 5, 10].map((m) => m * e).find((s) => s >= raw) ?? e * 10;
    for (let v = 0; v <= scale.max + 1e-9; v += step) out.push(v);
  }
  if (out[out.length - 1] !== scale.max) out.push(scale.max);
  return out;
}

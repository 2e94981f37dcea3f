/**
 * Offset vs time: sampled I/Os as points, x = completion time (the heat maps' time axis),
 * y = first sector on the disk (linear, 512-byte sectors, labelled in bytes). Coordinate
 * spaces as in coords.ts: time (unix seconds) and sector map into css pixels by affine maps,
 * so a point, a brushed box and an axis tick agree to the pixel and invert exactly.
 */
import {
  type BucketSchema,
  bucketOfNs,
  type IoSample,
  type LatencyKind,
  lowerBoundSeconds,
  overflowIndex,
  samplePhaseNs,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { schemeTableau10, ticks } from 'd3';
import { type Affine, apply, invert, mapInterval, type TimeBox, timeToCss } from './coords.js';
import { formatBytes } from './format.js';
import { PALETTE_SIZE } from './colour.js';
import { formatLatency, secondsToU } from './latency.js';

/** The kernel's sector: 512 bytes whatever the disk's block size. */
export const SECTOR_BYTES = 512;

/** A window of time × sectors drawn into a box of CSS pixels; x is coords.ts' timeToCss, as the heat maps'. */
export interface OffsetViewport extends TimeBox {
  /** [sectorLo, sectorHi): sectorLo at the bottom. */
  readonly sectorLo: number;
  readonly sectorHi: number;
  readonly height: number;
  readonly dpr: number;
}

/** sector → css y (offsets grow upwards). */
export function sectorToCss(vp: OffsetViewport): Affine {
  return mapInterval(vp.sectorLo, vp.sectorHi, vp.height, 0);
}

/** A sample's completion time in unix seconds. */
export function sampleTime(s: IoSample): number {
  return s.ts_us / 1e6;
}

/**
 * The css pixel a sample is drawn on (its top-left corner), undefined without a sector
 * (flushes) or outside the window. Column x holds times [T(x), T(x + 1)); offsets grow
 * upwards, so row y holds sectors [S(y + 1), S(y)): the lowest sector is on the bottom row.
 */
export function samplePixel(s: IoSample, vp: OffsetViewport): { x: number; y: number } | undefined {
  if (s.sector === null) return undefined;
  const x = Math.floor(apply(timeToCss(vp), sampleTime(s)));
  const y = Math.ceil(apply(sectorToCss(vp), s.sector)) - 1;
  if (x < 0 || x >= vp.width || y < 0 || y >= vp.height) return undefined;
  return { x, y };
}

/**
 * Sectors [lo, hi) holding every sample from its first sector to its last, on round byte
 * values (d3's nice ticks in bytes), at least one sector wide; [0, 1) without samples.
 */
export function sectorExtent(samples: readonly IoSample[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of samples) {
    if (s.sector === null) continue;
    lo = Math.min(lo, s.sector);
    hi = Math.max(hi, s.sector + Math.max(1, Math.ceil(s.bytes / SECTOR_BYTES)));
  }
  if (!(lo < hi)) return [0, 1];
  const t = byteTicks(lo * SECTOR_BYTES, hi * SECTOR_BYTES, 5);
  const stepBytes = t.length > 1 ? (t[1] as number) - (t[0] as number) : SECTOR_BYTES;
  const a = Math.floor((lo * SECTOR_BYTES) / stepBytes) * stepBytes;
  const b = Math.ceil((hi * SECTOR_BYTES) / stepBytes) * stepBytes;
  return [Math.floor(a / SECTOR_BYTES), Math.max(Math.floor(a / SECTOR_BYTES) + 1, Math.ceil(b / SECTOR_BYTES))];
}

/**
 * Round byte offsets in [lo, hi]: d3's 1-2-5 ticks counted in the binary unit (KiB, MiB, GiB,
 * TiB) the span is measured in, so labels read "2 GiB, 4 GiB", not "4.66 GiB, 9.31 GiB".
 */
export function byteTicks(lo: number, hi: number, count: number): number[] {
  let unit = 1;
  while (unit < 2 ** 40 && (hi - lo) / unit >= 1024) unit *= 1024;
  return ticks(lo / unit, hi / unit, count).map((v) => Math.round(v * unit));
}

export interface OffsetTick {
  readonly sector: number;
  /** The byte offset of the sector: "1.5 GiB". */
  readonly label: string;
}

/** Ticks on round byte offsets inside [lo, hi] sectors, about one per `spacing` px of `height`. */
export function offsetTicks(lo: number, hi: number, height: number, spacing = 40): OffsetTick[] {
  const n = Math.max(2, Math.floor(height / spacing));
  return byteTicks(lo * SECTOR_BYTES, hi * SECTOR_BYTES, n)
    .filter((b) => b % SECTOR_BYTES === 0)
    .map((b) => ({ sector: b / SECTOR_BYTES, label: formatBytes(b) }));
}

/** A brushed box in data coordinates: time [from, to), sectors [sectorLo, sectorHi]. */
export interface OffsetBox {
  readonly from: number;
  readonly to: number;
  readonly sectorLo: number;
  readonly sectorHi: number;
}

/** The box between two css points of a scatter (any corner order), in data coordinates. */
export function boxFromCss(vp: OffsetViewport, x0: number, y0: number, x1: number, y1: number): OffsetBox {
  const t = invert(timeToCss(vp));
  const s = invert(sectorToCss(vp));
  const [a, b] = [apply(t, Math.min(x0, x1)), apply(t, Math.max(x0, x1))];
  // Rows [top, bottom) hold sectors [S(bottom), S(top)) (samplePixel): integer sectors, the upper one inclusive.
  const [lo, hi] = [apply(s, Math.max(y0, y1)), apply(s, Math.min(y0, y1))];
  // Sectors are integers: a row edge computed a hair above one (floating point) is that one.
  const up = (v: number): number => Math.ceil(v - 1e-6);
  return { from: a, to: b, sectorLo: up(lo), sectorHi: up(hi) - 1 };
}

/** True when a sample lies in a box (the samples a brush selects). */
export function inBox(s: IoSample, box: OffsetBox): boolean {
  if (s.sector === null) return false;
  const t = sampleTime(s);
  return t >= box.from && t < box.to && s.sector >= box.sectorLo && s.sector <= box.sectorHi;
}

/** The latency the scatter colours by (the phase on screen), in ns; null when the sample does not tell it (samplePhaseNs). */
export function sampleLatencyNs(s: IoSample, kind: LatencyKind): number | null {
  return samplePhaseNs(s, kind);
}

/**
 * The scatter's colour scale, fitted to the points drawn (those with a sector, completed in
 * [from, to)): from the bucket of the fastest to the bucket of the slowest by the phase on
 * screen, so its top is the upper edge of the slowest point's bucket (schema buckets, as the
 * heat maps'), never the heat maps' window, which may reach far above every point.
 */
export interface ScatterLatencyScale {
  /** Dense buckets of the fastest and the slowest point drawn. */
  readonly bucketLo: number;
  readonly bucketHi: number;
  /** The window [uLo, uHi) latencyPaletteIndex takes: the two buckets and those between. */
  readonly uLo: number;
  readonly uHi: number;
  /** The slowest point's latency (ns). */
  readonly maxNs: number;
}

export function scatterLatencyScale(
  rows: readonly IoSample[],
  kind: LatencyKind,
  schema: BucketSchema,
  from: number,
  to: number,
): ScatterLatencyScale | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of rows) {
    const t = sampleTime(s);
    if (s.sector === null || t < from || t >= to) continue;
    const ns = samplePhaseNs(s, kind);
    if (ns === null) continue;
    lo = Math.min(lo, ns);
    hi = Math.max(hi, ns);
  }
  if (!(lo <= hi)) return undefined;
  const bucketLo = bucketOfNs(lo, schema);
  const bucketHi = bucketOfNs(hi, schema);
  return { bucketLo, bucketHi, uLo: bucketLo, uHi: bucketHi + 1, maxNs: hi };
}

/** The ends of a fitted scale as the legend says them: "250 µs" … "500 ms" (overflow: "> 64.0 s"). */
export function scaleLabels(scale: ScatterLatencyScale, schema: BucketSchema): [string, string] {
  const top =
    scale.bucketHi >= overflowIndex(schema)
      ? `> ${formatLatency(lowerBoundSeconds(scale.bucketHi, schema))}`
      : formatLatency(upperBoundSeconds(scale.bucketHi, schema));
  return [formatLatency(lowerBoundSeconds(scale.bucketLo, schema)), top];
}

/**
 * Palette index (1..PALETTE_SIZE-1, the heat map's palette) of a latency inside a latency
 * window [uLo, uHi) (the scatter's fitted scale): the fastest bucket shown is the palette's first
 * colour, the slowest its last, log-spaced like the heat maps' latency axis.
 */
export function latencyPaletteIndex(ns: number, uLo: number, uHi: number, schema: BucketSchema): number {
  const u = secondsToU(ns / 1e9, schema);
  const t = (u - uLo) / Math.max(1e-9, uHi - uLo);
  return 1 + Math.max(0, Math.min(PALETTE_SIZE - 2, Math.floor(t * (PALETTE_SIZE - 1))));
}

/** Categorical colours per I/O class, in the order given (sorted names: stable across redraws). */
export function classColours(classes: readonly string[]): Map<string, string> {
  return new Map(classes.map((c, i) => [c, schemeTableau10[i % schemeTableau10.length] as string]));
}

/** The distinct classes of some samples, sorted. */
export function sampleClasses(samples: readonly IoSample[]): string[] {
  return [...new Set(samples.map((s) => s.c))].sort();
}

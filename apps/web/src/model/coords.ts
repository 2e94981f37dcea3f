/**
 * Named coordinate spaces and the affine maps between them (speedscope's way of keeping zoom
 * arithmetic honest). Every number on screen lives in exactly one of these spaces:
 *
 *   time     unix seconds (fractional while zooming)
 *   column   heat map column index, (time / step) — integer at column starts
 *   bucket   continuous latency coordinate "u": dense bucket d spans [d, d + 1)
 *   css      CSS pixels inside a view, origin top-left
 *   device   device pixels (css × devicePixelRatio), what a canvas backing store holds
 *
 * A map from one space to another is `y = scale × x + offset`. Inverting and composing are
 * exact up to floating point, and `test/coords.test.ts` checks every pair round-trips.
 */

export interface Affine {
  readonly scale: number;
  readonly offset: number;
}

export function affine(scale: number, offset: number): Affine {
  if (!Number.isFinite(scale) || scale === 0 || !Number.isFinite(offset)) {
    throw new RangeError(`degenerate affine map (scale ${scale}, offset ${offset})`);
  }
  return { scale, offset };
}

export function apply(t: Affine, x: number): number {
  return t.scale * x + t.offset;
}

export function invert(t: Affine): Affine {
  return affine(1 / t.scale, -t.offset / t.scale);
}

/** outer ∘ inner: x ↦ outer(inner(x)). */
export function compose(outer: Affine, inner: Affine): Affine {
  return affine(outer.scale * inner.scale, outer.scale * inner.offset + outer.offset);
}

/** The map taking [d0, d1] onto [r0, r1] (d0 ≠ d1). */
export function mapInterval(d0: number, d1: number, r0: number, r1: number): Affine {
  const scale = (r1 - r0) / (d1 - d0);
  return affine(scale, r0 - scale * d0);
}

/** A time window drawn across a box of CSS pixels: what every time axis shares (heat maps, offset scatter). */
export interface TimeBox {
  /** Time window [from, to) in unix seconds. */
  readonly from: number;
  readonly to: number;
  /** Width of the box in CSS pixels. */
  readonly width: number;
}

/** A visible window of time × latency drawn into a box of CSS pixels. */
export interface Viewport extends TimeBox {
  /** Latency window [uLo, uHi) in bucket space; uLo is drawn at the bottom. */
  readonly uLo: number;
  readonly uHi: number;
  /** Height of the box in CSS pixels. */
  readonly height: number;
  readonly dpr: number;
}

/** time → css x. */
export function timeToCss(vp: TimeBox): Affine {
  return mapInterval(vp.from, vp.to, 0, vp.width);
}

/** bucket u → css y (latency grows upwards). */
export function bucketToCss(vp: Viewport): Affine {
  return mapInterval(vp.uLo, vp.uHi, vp.height, 0);
}

/** bucket u → css x, for a latency axis laid left to right (the compare charts). */
export function bucketToCssX(vp: Viewport): Affine {
  return mapInterval(vp.uLo, vp.uHi, 0, vp.width);
}

/** css → device pixels. */
export function cssToDevice(vp: Viewport): Affine {
  return affine(vp.dpr, 0);
}

/** column index → time, for a heat map of `step`-second columns. */
export function columnToTime(step: number): Affine {
  return affine(step, 0);
}

/** column index → css x. */
export function columnToCss(vp: Viewport, step: number): Affine {
  return compose(timeToCss(vp), columnToTime(step));
}

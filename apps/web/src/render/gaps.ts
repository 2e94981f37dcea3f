/**
 * "No data" bands: the columns of a heat map the agent did not record (model/gaps.ts), drawn
 * as a grey hatched band the full height of the plot, so an outage never passes for a quiet
 * disk (whose idle seconds stay plain background). A few fillRects per paint, one per run of
 * unrecorded columns, with a diagonal-stripe pattern anchored to absolute time: bands painted
 * separately (a live append) or after a re-anchoring full paint line up, and the stripes move
 * with the data when the view slides.
 */
import { apply } from '../model/coords.js';
import { type Known, unrecordedRuns } from '../model/gaps.js';
import type { HeatMatrix } from '../model/heatmatrix.js';
import type { RenderContext } from './contract.js';

/** Stripe period in CSS px (one stripe and one gap along x). */
const PERIOD = 8;

type Ctx2D = CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D;

const patterns = new WeakMap<Ctx2D, { colour: string; pattern: CanvasPattern }>();

function makeTile(colour: string): HTMLCanvasElement | OffscreenCanvas | undefined {
  // Drawn at 4× and scaled down by the pattern transform: crisp at any device pixel ratio.
  const k = 4;
  const size = PERIOD * k;
  const tile: HTMLCanvasElement | OffscreenCanvas =
    typeof OffscreenCanvas !== 'undefined' ? new OffscreenCanvas(size, size) : document.createElement('canvas');
  tile.width = size;
  tile.height = size;
  const t = tile.getContext('2d') as Ctx2D | null;
  if (!t) return undefined;
  t.fillStyle = colour;
  t.globalAlpha = 0.14;
  t.fillRect(0, 0, size, size);
  t.globalAlpha = 0.5;
  t.strokeStyle = colour;
  t.lineWidth = 1.25 * k;
  t.beginPath();
  // "/" stripes, continued across the tile's edges so they join seamlessly.
  for (const o of [-size, 0, size]) {
    t.moveTo(o, size);
    t.lineTo(o + size, 0);
  }
  t.stroke();
  return tile;
}

function patternFor(ctx: Ctx2D, colour: string): CanvasPattern | undefined {
  const cached = patterns.get(ctx);
  if (cached?.colour === colour) return cached.pattern;
  const tile = makeTile(colour);
  const pattern = tile ? ctx.createPattern(tile, 'repeat') : null;
  if (!pattern) return undefined;
  patterns.set(ctx, { colour, pattern });
  return pattern;
}

/**
 * Paints the unrecorded runs among columns [c0, c1) of `matrix` inside `known` onto `ctx`
 * (which draws in CSS pixels of `rc`). Does not clear; returns how many runs it painted.
 */
export function drawGaps(ctx: Ctx2D, rc: RenderContext, matrix: HeatMatrix, known: Known, colour: string, c0: number, c1: number): number {
  return paintRuns(ctx, rc, unrecordedRuns(matrix, c0, c1, known), matrix.step, colour);
}

/** Paints runs [a, b) of columns of `step` seconds as "no data" bands; returns how many. */
export function paintRuns(
  ctx: Ctx2D,
  rc: RenderContext,
  runs: readonly (readonly [number, number])[],
  step: number,
  colour: string,
): number {
  if (runs.length === 0) return 0;
  const pattern = patternFor(ctx, colour);
  if (!pattern) return 0;
  // Anchor the stripes at t = 0 (mod one period), so they belong to the time axis.
  const phase = rc.time.offset % PERIOD;
  pattern.setTransform(new DOMMatrix([0.25, 0, 0, 0.25, phase, 0]));
  const dpr = rc.viewport.dpr;
  const snap = (x: number): number => Math.round(x * dpr) / dpr;
  ctx.fillStyle = pattern;
  for (const [a, b] of runs) {
    const x0 = snap(apply(rc.time, a * step));
    const x1 = snap(apply(rc.time, b * step));
    ctx.fillRect(x0, 0, x1 - x0, rc.viewport.height);
  }
  return runs.length;
}

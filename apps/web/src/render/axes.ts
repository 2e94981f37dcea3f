/**
 * Axes and labels as vectors, with d3: SVG on screen (crisp at any zoom, selectable text),
 * and the same ticks painted onto a canvas for the PNG export.
 */
import { type Axis, axisBottom, axisLeft, axisTop, type NumberValue, scaleLinear, scaleTime, select } from 'd3';
import type { BucketSchema } from '@blkheat/shared-types';
import { latencyTicks } from '../model/latency.js';
import { offsetTicks } from '../model/offsetScatter.js';
import { shareTicks } from '../model/shareTicks.js';
import { timeTickFormat, timeTicks } from '../model/timeTicks.js';
import { alreadyShown } from './contract.js';

/**
 * An axis's key for alreadyShown (render/contract.ts): its length and each tick's value, label
 * and position (0.1 px). A call that would draw the same again is skipped: d3's join rewrites
 * every tick's attributes on each call, and a live page called it every second for axes that had
 * not moved (the histograms' share axes, whose top share changes in its fourth digit; the latency
 * axes). The CPU this saves was too small to measure here. Time axes move instead
 * (renderTimeAxis), and are redrawn only when their ticks change. Tick lines and labels take
 * their colour from CSS (currentColor), so a theme change needs no redraw.
 */
function axisKey(length: number, ticks: readonly { readonly value: number; readonly label: string }[], at: (v: number) => number): string {
  let key = `${length}`;
  for (const t of ticks) key += `|${t.value}:${t.label}@${at(t.value).toFixed(1)}`;
  return key;
}

export function timeScale(from: number, to: number, width: number) {
  return scaleTime()
    .domain([new Date(from * 1000), new Date(to * 1000)])
    .range([0, width]);
}

/**
 * A time axis's ticks as last drawn, in the slide group (slideGroup) they were drawn into: which
 * ticks (values and labels), at which length and span, and the window start they were placed for.
 */
interface DrawnTimeTicks {
  readonly ticks: string;
  readonly from: number;
  dx: number;
}
const drawnTimeTicks = new WeakMap<SVGGElement, DrawnTimeTicks>();

/**
 * The group a time axis draws its ticks into, inside `g`: moved as one (its transform) while
 * the window slides and the ticks stay the same. A live window slides every second; drawing the
 * axis again rewrote each tick's position, line and label (a new text node each), and chromium
 * laid out every label again each second.
 */
function slideGroup(g: SVGGElement): SVGGElement {
  const slide = g.querySelector<SVGGElement>(':scope > g.time-slide');
  if (slide) return slide;
  return select(g).append('g').attr('class', 'time-slide').node() as SVGGElement;
}

/**
 * The shared time axis above the heat maps; ticks never finer than the data's `step`
 * (model/timeTicks.ts). When the window has only slid (the same span and length) and the ticks
 * are the same times, the drawn ticks are moved, not drawn again. The domain line is drawn a
 * length either side, so that the moved group still spans the axis (the svg clips it).
 */
export function renderTimeAxis(g: SVGGElement, from: number, to: number, width: number, orient: 'top' | 'bottom' = 'top', step = 1): void {
  const values = timeTicks(from, to, width, step);
  const ticks = `${orient}/${width}/${to - from}/${values.map((d) => `${d.getTime()}:${timeTickFormat(d)}`).join('|')}`;
  const slide = slideGroup(g);
  const drawn = drawnTimeTicks.get(g);
  if (drawn?.ticks === ticks) {
    const dx = to > from ? ((drawn.from - from) * width) / (to - from) : 0;
    if (dx !== drawn.dx) {
      slide.setAttribute('transform', `translate(${dx},0)`);
      drawn.dx = dx;
    }
    return;
  }
  drawnTimeTicks.set(g, { ticks, from, dx: 0 });
  slide.removeAttribute('transform');
  const scale = timeScale(from, to, width);
  const axis = (orient === 'top' ? axisTop(scale) : axisBottom(scale))
    .tickValues(values)
    .tickFormat((d) => timeTickFormat(d as Date))
    .tickSizeOuter(0);
  select(slide).call(axis);
  const domain = select(slide).select<SVGPathElement>('.domain');
  // d3's "M0.5,0V0.5H<width>.5V0" (its 0.5 px offset at DPR 1), from -width to 2 width.
  domain.attr('d', (domain.attr('d') ?? '').replace(/^M[^,]+,/, `M${-width},`).replace(/H[^V]+/, `H${2 * width}`));
}

/** `axis` with a tick at each value, labelled as given ('' for none), and no outer ticks. */
function labelledAxis(axis: Axis<NumberValue>, ticks: readonly { readonly value: number; readonly label: string }[]): Axis<NumberValue> {
  const label = new Map(ticks.map((t) => [t.value, t.label]));
  return axis
    .tickValues(ticks.map((t) => t.value))
    .tickFormat((v) => label.get(v as number) ?? '')
    .tickSizeOuter(0);
}

/** A latency axis (log, in bucket space of `schema`) to the left of a heat map. */
export function renderLatencyAxis(g: SVGGElement, uLo: number, uHi: number, schema: BucketSchema, height: number): void {
  const scale = scaleLinear().domain([uLo, uHi]).range([height, 0]);
  const ticks = latencyTicks(uLo, uHi, schema);
  // Keep labels at least ~14 px apart.
  const pxPerU = height / Math.max(1e-9, uHi - uLo);
  const majors = ticks.filter((t) => t.major);
  const labelled = new Set<number>();
  let lastY = Infinity;
  for (const t of majors) {
    const y = t.u * pxPerU;
    if (Math.abs(y - lastY) >= 14 || lastY === Infinity) {
      labelled.add(t.u);
      lastY = y;
    }
  }
  const shown = ticks.map((t) => ({ value: t.u, label: labelled.has(t.u) ? t.label : '' }));
  if (alreadyShown(g, axisKey(height, shown, scale))) return;
  const axis = labelledAxis(axisLeft(scale), shown);
  const sel = select(g).call(axis);
  sel.selectAll<SVGLineElement, number>('.tick line').attr('x2', (u) => (labelled.has(u) ? -6 : -3));
}

/** The offset scatter's y axis: sectors drawn linearly, labelled with their byte offsets (model/offsetScatter.ts). */
export function renderOffsetAxis(g: SVGGElement, sectorLo: number, sectorHi: number, height: number): void {
  const scale = scaleLinear().domain([sectorLo, sectorHi]).range([height, 0]);
  const ticks = offsetTicks(sectorLo, sectorHi, height).map((t) => ({ value: t.sector, label: t.label }));
  if (alreadyShown(g, axisKey(height, ticks, scale))) return;
  select(g).call(labelledAxis(axisLeft(scale), ticks));
}

/** Share axis under a histogram: no ticks without I/O, labels never overlapping (model/shareTicks.ts). */
export function renderShareAxis(g: SVGGElement, maxShare: number, width: number): void {
  const length = width - 4;
  const scale = scaleLinear()
    .domain([0, Math.max(maxShare, 1e-9)])
    .range([0, length]);
  const ticks = shareTicks(maxShare, length);
  if (alreadyShown(g, axisKey(length, ticks, scale))) return;
  select(g).call(labelledAxis(axisBottom(scale), ticks));
}

/** Time axis painted on a canvas (PNG export). */
export function paintTimeAxis(
  ctx: CanvasRenderingContext2D,
  from: number,
  to: number,
  x: number,
  y: number,
  width: number,
  colour: string,
  step = 1,
): void {
  const scale = timeScale(from, to, width);
  ctx.save();
  ctx.strokeStyle = colour;
  ctx.fillStyle = colour;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  ctx.beginPath();
  ctx.moveTo(x, y + 0.5);
  ctx.lineTo(x + width, y + 0.5);
  for (const d of timeTicks(from, to, width, step)) {
    const px = Math.round(x + scale(d)) + 0.5;
    ctx.moveTo(px, y);
    ctx.lineTo(px, y - 5);
    ctx.fillText(timeTickFormat(d), px, y - 7);
  }
  ctx.stroke();
  ctx.restore();
}

/** Latency axis (bucket space of `schema`) painted on a canvas (PNG export). */
export function paintLatencyAxis(
  ctx: CanvasRenderingContext2D,
  uLo: number,
  uHi: number,
  schema: BucketSchema,
  x: number,
  y: number,
  height: number,
  colour: string,
): void {
  const scale = scaleLinear()
    .domain([uLo, uHi])
    .range([y + height, y]);
  ctx.save();
  ctx.strokeStyle = colour;
  ctx.fillStyle = colour;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  ctx.beginPath();
  ctx.moveTo(x + 0.5, y);
  ctx.lineTo(x + 0.5, y + height);
  let lastY = Infinity;
  for (const t of latencyTicks(uLo, uHi, schema)) {
    const py = Math.round(scale(t.u)) + 0.5;
    const labelled = t.major && Math.abs(py - lastY) >= 14;
    ctx.moveTo(x, py);
    ctx.lineTo(x - (labelled ? 6 : 3), py);
    if (labelled) {
      ctx.fillText(t.label, x - 8, py);
      lastY = py;
    }
  }
  ctx.stroke();
  ctx.restore();
}

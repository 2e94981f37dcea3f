/**
 * Where the time axes put their ticks. d3's time scale picks "nice" intervals down to
 * milliseconds, but the data comes in whole steps (1 s at the finest) and labels read to the
 * second: on a 6 s wide range d3 ticks every half second and two ticks print the same label.
 * Ticks are kept on whole multiples of the data's step only, so no two share a label.
 */
import { scaleTime, timeFormat } from 'd3';

/** Roughly one labelled tick per this many CSS pixels. */
export const TIME_TICK_SPACING = 90;

/** Tick times for [from, to) (unix seconds) drawn `width` px wide, never finer than `step` seconds. */
export function timeTicks(from: number, to: number, width: number, step = 1): Date[] {
  const scale = scaleTime()
    .domain([new Date(from * 1000), new Date(to * 1000)])
    .range([0, width]);
  const every = Math.max(1, step) * 1000;
  return scale.ticks(Math.max(2, Math.floor(width / TIME_TICK_SPACING))).filter((d) => d.getTime() % every === 0);
}

const fmtSecond = timeFormat('%H:%M:%S');
const fmtMinute = timeFormat('%H:%M');
const fmtDay = timeFormat('%b %d');

/** Local-time tick labels: seconds when zoomed in, dates at day boundaries. */
export function timeTickFormat(d: Date): string {
  if (d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0) return fmtDay(d);
  return d.getSeconds() === 0 ? fmtMinute(d) : fmtSecond(d);
}

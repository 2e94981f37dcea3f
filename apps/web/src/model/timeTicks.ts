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
  const fits = Math.max(2, Math.floor(width / MIN_TICK_SPACING));
  const ticks = scale.ticks(Math.max(2, Math.floor(width / TIME_TICK_SPACING))).filter((d) => d.getTime() % every === 0);
  if (ticks.length <= fits) return ticks;
  // d3 settles on 1 s ticks for spans of up to ~30 s whatever the width: thinner than a label
  // on a narrow axis. Take the finest whole-second interval whose ticks leave room for labels.
  const secs = SECOND_INTERVALS.find((c) => c % Math.max(1, step) === 0 && (to - from) / c <= fits) ?? SECOND_INTERVALS.at(-1)!;
  const out: Date[] = [];
  for (let t = Math.ceil(from / secs) * secs; t <= to; t += secs) out.push(new Date(t * 1000));
  return out;
}

/** Labels of "HH:MM:SS" need about this many CSS pixels each, with a gap. */
const MIN_TICK_SPACING = 64;
/** Intervals (s) for thinned second ticks: minute-aligned multiples of the finer ones. */
const SECOND_INTERVALS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

const fmtSecond = timeFormat('%H:%M:%S');
const fmtMinute = timeFormat('%H:%M');
const fmtDay = timeFormat('%b %d');

/** Local-time tick labels: seconds when zoomed in, dates at day boundaries. */
export function timeTickFormat(d: Date): string {
  if (d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0) return fmtDay(d);
  return d.getSeconds() === 0 ? fmtMinute(d) : fmtSecond(d);
}

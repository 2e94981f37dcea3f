/**
 * Seconds the agent did not record, told apart from seconds it recorded without I/O.
 *
 * The protocol says it with frames: a frame with `disks: []` is a recorded second with no I/O,
 * and a second with no frame at all was not recorded (the agent was down or restarting). Both
 * give a column of zero counts; only the frames tell them apart, and only where the source
 * has spoken: inside a `Known` range (what the live stream or a range answer covered). Outside
 * it nothing is claimed: the live edge, seconds not fetched yet, and snapshots (the snapshot
 * format leaves idle steps out, so a missing step there means "no I/O").
 *
 * HeatMatrix counts the recorded seconds of each column (`recordedSeconds`); everything here
 * reads that, so the renderer, the tooltip and the range statistics agree.
 */
import type { HeatMatrix } from './heatmatrix.js';

/**
 * Seconds [from, to) in which a second without a frame was not recorded. `from` is -Infinity
 * when everything before `to` is known (the range reaches back to the agent's oldest second).
 */
export interface Known {
  readonly from: number;
  readonly to: number;
}

/** Nothing known (a snapshot, or no answer yet): no column is ever called unrecorded. */
export const NOTHING_KNOWN: Known = Object.freeze({ from: Infinity, to: -Infinity });

export type ColumnRecording =
  /** Every second of the column was recorded (with or without I/O). */
  | { readonly state: 'recorded' }
  /** Some seconds were recorded, `missing` were not (frames finer than the column). */
  | { readonly state: 'partial'; readonly missing: number }
  /** No second of the column was recorded: the agent was not running. */
  | { readonly state: 'unrecorded' }
  /** The source has not said (outside the known range or the matrix). */
  | { readonly state: 'unknown' };

/** The first and last (exclusive) whole columns of `m` inside `known`, clipped to [c0, c1). */
function knownColumns(m: HeatMatrix, c0: number, c1: number, known: Known): [number, number] {
  const step = m.step;
  const lo = known.from === -Infinity ? -Infinity : Number.isFinite(known.from) ? Math.ceil(known.from / step) : Infinity;
  const a = Math.max(c0, m.start, lo);
  const b = Math.min(c1, m.end, Number.isFinite(known.to) ? Math.floor(known.to / step) : -Infinity);
  return [a, b];
}

/** What is known about the recording of column `col`. */
export function columnRecording(m: HeatMatrix, col: number, known: Known): ColumnRecording {
  const [a, b] = knownColumns(m, col, col + 1, known);
  if (a >= b) {
    // A column reaching past the known range's end (the live edge at a coarse step) is still
    // "recorded" as far as its frames go, but an absent frame there says nothing.
    return m.recordedSeconds(col) > 0 ? { state: 'recorded' } : { state: 'unknown' };
  }
  const seconds = m.recordedSeconds(col);
  if (seconds <= 0) return { state: 'unrecorded' };
  if (seconds < m.step) return { state: 'partial', missing: m.step - seconds };
  return { state: 'recorded' };
}

/**
 * Runs [start, end) of consecutive columns in [c0, c1) with nothing recorded, inside `known`
 * (whole columns only), in order. What the heat map draws as "no data".
 */
export function unrecordedRuns(m: HeatMatrix, c0: number, c1: number, known: Known): [number, number][] {
  const [a, b] = knownColumns(m, c0, c1, known);
  const out: [number, number][] = [];
  let run = -1;
  for (let c = a; c < b; c++) {
    const empty = (m.recorded[m.slot(c)] as number) <= 0;
    if (empty && run < 0) run = c;
    else if (!empty && run >= 0) {
      out.push([run, c]);
      run = -1;
    }
  }
  if (run >= 0) out.push([run, b]);
  return out;
}

/** Seconds of columns [c0, c1) inside `known` that were not recorded (partial columns count their missing part). */
export function unrecordedSeconds(m: HeatMatrix, c0: number, c1: number, known: Known): number {
  const [a, b] = knownColumns(m, c0, c1, known);
  let missing = 0;
  for (let c = a; c < b; c++) missing += Math.max(0, m.step - (m.recorded[m.slot(c)] as number));
  return missing;
}

/**
 * Seconds of columns [c0, c1) some frame covered. Not what the page's rates divide by: they are
 * over every second of the range the agent recorded, idle ones without a frame too
 * (Summary.windowSeconds: the range less unrecordedSeconds).
 */
export function recordedSecondsIn(m: HeatMatrix, c0: number, c1: number): number {
  const a = Math.max(c0, m.start);
  const b = Math.min(c1, m.end);
  let s = 0;
  for (let c = a; c < b; c++) s += Math.min(m.step, m.recorded[m.slot(c)] as number);
  return s;
}

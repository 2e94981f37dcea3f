/**
 * The host's I/O pressure per heat map column (protocol 4 `Frame.psi`, from the kernel's PSI,
 * /proc/pressure/io): the share of the column's time during which some task was stalled waiting
 * for I/O (`some`), and every non-idle task was (`full`, within `some`). Host-wide, not per disk:
 * it sees waits no block tracepoint can (bios held by blk-throttle, page-cache waits). A column
 * sums the stall of its frames that carry `psi` over the seconds those frames cover, so a coarse
 * column of a 10 s frame is some_us / (10 × 1e6), and a column still filling from 1 s live frames
 * is its stall over the seconds that came. NaN means no data (no frame of the column has `psi`:
 * an agent before protocol 4, a kernel without PSI, the agent's first second, not recorded).
 *
 * The same for one cgroup (protocol 4 `Frame.cg_psi`: its cgroup2 io.pressure, every disk's
 * stall of its tasks): a series asked for a cgroup reads that cgroup's entry of each frame.
 */
import type { Frame, IoPressure } from '@blkheat/shared-types';
import { formatShare } from './format.js';

export interface PressureSeries {
  readonly step: number;
  /** Column of index 0 (columns are absolute: floor(ts / step)). */
  readonly col0: number;
  /** Per column [col0, col0 + length): share of the time some task was stalled on I/O, 0..1 (NaN: no data). */
  readonly some: Float64Array;
  /** Share of the time every non-idle task was. */
  readonly full: Float64Array;
}

/** The pressure at one column. */
export interface PressureShare {
  readonly some: number;
  readonly full: number;
}

/** Where the numbers come from, as the tooltip says it. */
export const PRESSURE_SOURCE = 'host, /proc/pressure/io';

/** Where a cgroup's numbers come from, as the tooltip and the strip say it. */
export function cgroupPressureSource(cgroup: string): string {
  return `cgroup ${cgroup}, its io.pressure`;
}

/** A frame's pressure: the host's, or `cgroup`'s (undefined: the frame has none). */
function pressureOf(f: Frame, cgroup: string | undefined): IoPressure | undefined {
  return cgroup === undefined ? f.psi : f.cg_psi?.find((p) => p.g === cgroup);
}

/**
 * The least top of the strip's scale: a host that is barely ever stalled (a few hundredths of a
 * percent) must not fill the strip as if it were stalled all the time.
 */
export const PRESSURE_SCALE_FLOOR = 0.05;

/** Whether any frame carries the host's pressure, or `cgroup`'s (newest first: live data answers at once). */
export function hasPressure(frames: readonly Frame[], cgroup?: string): boolean {
  for (let i = frames.length - 1; i >= 0; i--) if (pressureOf(frames[i] as Frame, cgroup)) return true;
  return false;
}

/** The series of columns [col0, col1) from `frames`, the host's or `cgroup`'s (any order; frames without it add nothing). */
export function pressureSeries(frames: readonly Frame[], step: number, col0: number, col1: number, cgroup?: string): PressureSeries {
  const len = Math.max(0, col1 - col0);
  const someUs = new Float64Array(len);
  const fullUs = new Float64Array(len);
  const seconds = new Float64Array(len);
  for (const f of frames) {
    const p = pressureOf(f, cgroup);
    if (!p) continue;
    const i = Math.floor(f.ts / step) - col0;
    if (i < 0 || i >= len) continue;
    someUs[i] = (someUs[i] as number) + p.some_us;
    fullUs[i] = (fullUs[i] as number) + p.full_us;
    seconds[i] = (seconds[i] as number) + f.step;
  }
  const some = new Float64Array(len).fill(NaN);
  const full = new Float64Array(len).fill(NaN);
  for (let i = 0; i < len; i++) {
    const s = seconds[i] as number;
    if (s <= 0) continue;
    some[i] = Math.min(1, (someUs[i] as number) / (s * 1e6));
    full[i] = Math.min(1, (fullUs[i] as number) / (s * 1e6));
  }
  return { step, col0, some, full };
}

/** The pressure at column `col`, or undefined where there is no data. */
export function pressureAt(s: PressureSeries, col: number): PressureShare | undefined {
  const i = col - s.col0;
  if (i < 0 || i >= s.some.length) return undefined;
  const some = s.some[i] as number;
  return Number.isNaN(some) ? undefined : { some, full: s.full[i] as number };
}

/** The top of the strip: the largest share of `some`, at least PRESSURE_SCALE_FLOOR, at most 1. */
export function pressureScale(s: PressureSeries): number {
  let m = PRESSURE_SCALE_FLOOR;
  for (const v of s.some) if (v > m) m = v;
  return Math.min(1, m);
}

/** Space the strip keeps free above its bars, css px. */
export const PRESSURE_PAD_PX = 2;

/** The css height of a bar for `share` in a strip `height` px tall scaled to `scale`: any stall shows (1 px at least). */
export function pressureBarHeight(share: number, scale: number, height: number): number {
  if (!(share > 0) || !(scale > 0)) return 0;
  return Math.max(1, (Math.min(share, scale) / scale) * (height - PRESSURE_PAD_PX));
}

/** "some 42.0%, full 10.0%": as the tooltip and the strip write a column's pressure. */
export function pressureText(p: PressureShare): string {
  return `some ${formatShare(p.some)}, full ${formatShare(p.full)}`;
}

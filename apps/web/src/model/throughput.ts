/**
 * Throughput and queue depth per heat map column (issue 11, "Throughput lines"): for one disk,
 * per column of `step` seconds, IOPS (Σ n of the classes /proc/diskstats counts, i.e. without
 * `pt`, per second), MB/s (Σ b of those classes / 1e6 per second), queue depth (I/Os in
 * flight when the step closed; for a column of several frames, the worst one) and the age of
 * the oldest I/O in flight (`inflight.oldest_ns`, in seconds, the worst of the column: a stuck
 * I/O shows as a ramp growing one second per second). NaN means "no
 * data", never 0: a column no frame covers (not recorded), MB/s of data with I/Os but no byte
 * count (`b` is new in protocol 3), queue depth and oldest age of a disk entry without `inflight` (before 2).
 * A recorded second without the disk had no I/O and nothing in flight (the agent leaves a disk
 * out only then): 0 for all three. Rates are over the seconds recorded in the column.
 */
import type { DiskFrame, Frame } from '@blkheat/shared-types';
import { formatLatency } from './latency.js';

export interface ThroughputSeries {
  readonly dev: string;
  readonly step: number;
  /** Column of index 0 (columns are absolute: floor(ts / step)). */
  readonly col0: number;
  /** Per column [col0, col0 + length): I/Os per second. */
  readonly iops: Float64Array;
  /** Megabytes (1e6 bytes) per second. */
  readonly mbps: Float64Array;
  /** I/Os in flight. */
  readonly queue: Float64Array;
  /** Age of the oldest I/O in flight, seconds. */
  readonly oldest: Float64Array;
}

/** The three series as named in the strip, tooltip and test hook. */
export const THROUGHPUT_KEYS = ['iops', 'mbps', 'queue', 'oldest'] as const;
export type ThroughputKey = (typeof THROUGHPUT_KEYS)[number];

interface Acc {
  seconds: number;
  n: number;
  b: number;
  bKnown: boolean;
  q: number;
  /** Oldest age in flight, ns. */
  o: number;
  qKnown: boolean;
}

function addDisk(a: Acc, d: DiskFrame | undefined): void {
  if (!d) {
    a.q = Math.max(a.q, 0);
    return;
  }
  for (const c of d.cls) {
    if (c.pt) continue;
    a.n += c.n;
    if (c.b !== undefined) a.b += c.b;
    else if (c.n > 0) a.bKnown = false;
  }
  if (d.inflight) {
    a.q = Math.max(a.q, d.inflight.n);
    a.o = Math.max(a.o, d.inflight.oldest_ns);
  } else a.qKnown = false;
}

/** The series of columns [col0, col1) of `dev` from `frames` (any order; others are ignored). */
export function throughputSeries(frames: readonly Frame[], dev: string, step: number, col0: number, col1: number): ThroughputSeries {
  const len = Math.max(0, col1 - col0);
  const accs: (Acc | undefined)[] = new Array<Acc | undefined>(len);
  for (const f of frames) {
    const i = Math.floor(f.ts / step) - col0;
    if (i < 0 || i >= len) continue;
    let a = accs[i];
    if (!a) accs[i] = a = { seconds: 0, n: 0, b: 0, bKnown: true, q: 0, o: 0, qKnown: true };
    a.seconds += f.step;
    addDisk(
      a,
      f.disks.find((d) => d.dev === dev),
    );
  }
  const iops = new Float64Array(len).fill(NaN);
  const mbps = new Float64Array(len).fill(NaN);
  const queue = new Float64Array(len).fill(NaN);
  const oldest = new Float64Array(len).fill(NaN);
  for (let i = 0; i < len; i++) {
    const a = accs[i];
    if (!a || a.seconds <= 0) continue;
    iops[i] = a.n / a.seconds;
    if (a.bKnown) mbps[i] = a.b / a.seconds / 1e6;
    if (a.qKnown) {
      queue[i] = a.q;
      oldest[i] = a.o / 1e9;
    }
  }
  return { dev, step, col0, iops, mbps, queue, oldest };
}

/** The value of one series at column `col` (NaN: no data, or outside the series). */
export function throughputAt(s: ThroughputSeries, key: ThroughputKey, col: number): number {
  const i = col - s.col0;
  return i >= 0 && i < s[key].length ? (s[key][i] as number) : NaN;
}

/** The largest value of a series (0 when it has none). */
export function seriesMax(values: Float64Array): number {
  let m = 0;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** A rate or depth for the strip and tooltip: "–" for no data, 3 significant digits, k/M above 1000. */
export function formatRate(v: number): string {
  if (Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a < 1e3) return String(+v.toPrecision(3));
  if (a < 1e6) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+(v / 1e6).toPrecision(3)}M`;
}

export const THROUGHPUT_LABELS: Readonly<Record<ThroughputKey, string>> = {
  iops: 'IOPS',
  mbps: 'MB/s',
  queue: 'in flight',
  oldest: 'oldest in flight',
};

/** A value of series `key` as the strip and tooltip write it: an age as a latency, the rest as rates. */
export function formatThroughput(key: ThroughputKey, v: number): string {
  return key === 'oldest' ? (Number.isNaN(v) ? '–' : formatLatency(v)) : formatRate(v);
}

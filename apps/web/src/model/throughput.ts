/**
 * Throughput and queue depth per heat map column: for one disk, per column of `step` seconds, IOPS
 * (Σ n of the classes /proc/diskstats counts, i.e. without `pt`, per second), MB/s (Σ b of those
 * classes / 1e6 per second), queue depth (I/Os in flight when the step closed; for a column of
 * several frames, the worst one) and the age of the oldest I/O in flight (`inflight.oldest_ns`, in
 * seconds, the worst of the column: a stuck I/O shows as a ramp growing one second per second). NaN
 * means "no data", never 0: a column no frame covers (not recorded), MB/s of data with I/Os but no
 * byte count (`b` is new in protocol 3), queue depth and oldest age of a disk entry without
 * `inflight` (before 2). A recorded second without the disk had no I/O and nothing in flight (the
 * agent leaves a disk out only then): 0 for all three. Rates are over the seconds recorded in the
 * column.
 *
 * Beside the requests in flight, the bios still waiting for a request (protocol 4
 * `inflight.waiting`, not in `n`), the oldest one's age, and whether the queue was frozen: the
 * worst frame's of the column, as for in flight; 0 where the data does not say (before 4).
 */
import type { DiskFrame, Frame } from '@blkheat/shared-types';
import { droppedFromFront } from './diskFrames.js';
import { formatRate } from './format.js';
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
  /** Bios waiting for a request (protocol 4; 0 without; NaN where `queue` is). */
  readonly waiting: Float64Array;
  /** Age of the oldest of them, seconds. */
  readonly oldestWait: Float64Array;
  /** 1 where the disk's queue was frozen in some frame of the column. */
  readonly frozen: Uint8Array;
}

/** The three series as named in the strip, tooltip and test hook. */
export const THROUGHPUT_KEYS = ['iops', 'mbps', 'queue', 'oldest'] as const;
export type ThroughputKey = (typeof THROUGHPUT_KEYS)[number];

/** One column's totals while its frames are summed. */
interface Acc {
  /** Seconds recorded in the column. */
  seconds: number;
  /** Completed I/Os of the classes /proc/diskstats counts. */
  ios: number;
  bytes: number;
  /** False once a frame had I/Os but no byte count (an agent before protocol 3). */
  bytesKnown: boolean;
  /** I/Os in flight, the worst frame's. */
  inFlight: number;
  /** Oldest age in flight, ns, the worst frame's. */
  oldestNs: number;
  /** False once a disk entry had no `inflight` (an agent before protocol 2). */
  inFlightKnown: boolean;
  /** Bios waiting for a request and the oldest one's age, ns, the worst frame's; the queue frozen in any. */
  waiting: number;
  oldestWaitNs: number;
  frozen: boolean;
}

function addDisk(a: Acc, disk: DiskFrame | undefined): void {
  if (!disk) {
    a.inFlight = Math.max(a.inFlight, 0);
    return;
  }
  for (const series of disk.cls) {
    if (series.pt) continue; // passthrough: not an I/O /proc/diskstats counts
    a.ios += series.n;
    if (series.b !== undefined) a.bytes += series.b;
    else if (series.n > 0) a.bytesKnown = false;
  }
  const inf = disk.inflight;
  if (inf) {
    a.inFlight = Math.max(a.inFlight, inf.n);
    a.oldestNs = Math.max(a.oldestNs, inf.oldest_ns);
    a.waiting = Math.max(a.waiting, inf.waiting ?? 0);
    a.oldestWaitNs = Math.max(a.oldestWaitNs, inf.oldest_wait_ns ?? 0);
    if (inf.frozen) a.frozen = true;
  } else a.inFlightKnown = false;
}

/** The series of columns [col0, col1) of `dev` from `frames` (any order; others are ignored). */
export function throughputSeries(frames: readonly Frame[], dev: string, step: number, col0: number, col1: number): ThroughputSeries {
  const columns = new ThroughputColumns(dev, step);
  // Only the columns asked for (the tooltip asks for one column of a whole window).
  for (const f of frames) {
    const col = Math.floor(f.ts / step);
    if (col >= col0 && col < col1) columns.add(f);
  }
  return columns.series(col0, col1);
}

function newAcc(): Acc {
  return {
    seconds: 0,
    ios: 0,
    bytes: 0,
    bytesKnown: true,
    inFlight: 0,
    oldestNs: 0,
    inFlightKnown: true,
    waiting: 0,
    oldestWaitNs: 0,
    frozen: false,
  };
}

/**
 * One disk's column totals, fed frame by frame. A live window's strip keeps one over the window's
 * frames and feeds it only the seconds new since its last draw (catchUp): summing the whole window
 * again for every strip at every live second took 860 ms of 30 s of the page's main thread at
 * 45,000 IOPS on four disks (bench/web's live section, an hour on screen).
 */
export class ThroughputColumns {
  private readonly accs = new Map<number, Acc>();
  /** The frames fed, in order (catchUp compares references). */
  private readonly fed: Frame[] = [];

  constructor(
    readonly dev: string,
    readonly step: number,
  ) {}

  /** Adds one frame to its column. */
  add(f: Frame): void {
    const col = Math.floor(f.ts / this.step);
    let a = this.accs.get(col);
    if (!a) this.accs.set(col, (a = newAcc()));
    a.seconds += f.step;
    addDisk(
      a,
      f.disks.find((d) => d.dev === this.dev),
    );
  }

  /**
   * Brings the totals to `frames`, when it is the array fed so far with its oldest frames dropped
   * and new ones added at its end (a live window: pipeline/windowLoader.ts); false otherwise (a new
   * window, or a second inserted in the middle: make a new one). The columns of dropped frames are
   * summed again from the frames left.
   */
  catchUp(frames: readonly Frame[]): boolean {
    const dropped = droppedFromFront(this.fed, frames);
    if (dropped === undefined) return false;
    if (dropped > 0) {
      const cols = new Set<number>();
      for (let i = 0; i < dropped; i++) cols.add(Math.floor((this.fed[i] as Frame).ts / this.step));
      this.fed.splice(0, dropped);
      for (const c of cols) this.accs.delete(c);
      for (const f of this.fed) if (cols.has(Math.floor(f.ts / this.step))) this.add(f);
    }
    for (let i = this.fed.length; i < frames.length; i++) {
      const f = frames[i] as Frame;
      this.add(f);
      this.fed.push(f);
    }
    return true;
  }

  /** The series of columns [col0, col1). */
  series(col0: number, col1: number): ThroughputSeries {
    const len = Math.max(0, col1 - col0);
    const iops = new Float64Array(len).fill(NaN);
    const mbps = new Float64Array(len).fill(NaN);
    const queue = new Float64Array(len).fill(NaN);
    const oldest = new Float64Array(len).fill(NaN);
    const waiting = new Float64Array(len).fill(NaN);
    const oldestWait = new Float64Array(len).fill(NaN);
    const frozen = new Uint8Array(len);
    for (let i = 0; i < len; i++) {
      const a = this.accs.get(col0 + i);
      if (!a || a.seconds <= 0) continue;
      iops[i] = a.ios / a.seconds;
      if (a.bytesKnown) mbps[i] = a.bytes / a.seconds / 1e6;
      if (a.inFlightKnown) {
        queue[i] = a.inFlight;
        oldest[i] = a.oldestNs / 1e9;
        waiting[i] = a.waiting;
        oldestWait[i] = a.oldestWaitNs / 1e9;
      }
      if (a.frozen) frozen[i] = 1;
    }
    return { dev: this.dev, step: this.step, col0, iops, mbps, queue, oldest, waiting, oldestWait, frozen };
  }
}

/** Bios waiting for a request at column `col`: count, oldest age (seconds) and the queue frozen; undefined when none waited and it was not frozen. */
export function waitingAt(s: ThroughputSeries, col: number): { count: number; oldestS: number; frozen: boolean } | undefined {
  const i = col - s.col0;
  if (i < 0 || i >= s.waiting.length) return undefined;
  const count = s.waiting[i] as number;
  const frozen = s.frozen[i] === 1;
  if (!(count > 0) && !frozen) return undefined;
  return { count: count > 0 ? count : 0, oldestS: (s.oldestWait[i] as number) || 0, frozen };
}

/** The value of one series at column `col` (NaN: no data, or outside the series). */
export function throughputAt(s: ThroughputSeries, key: ThroughputKey, col: number): number {
  const i = col - s.col0;
  return i >= 0 && i < s[key].length ? (s[key][i] as number) : NaN;
}

/**
 * The second value a lane draws beside its own: the bios waiting for a request, stacked on the
 * in-flight bars, and the oldest of them, standing behind the oldest in-flight age.
 */
export function laneExtra(series: ThroughputSeries, key: ThroughputKey): Float64Array | undefined {
  return key === 'queue' ? series.waiting : key === 'oldest' ? series.oldestWait : undefined;
}

/**
 * The share of a lane's top its largest visible value may fall to before the lane is scaled
 * again. A live column's rate is over the seconds it has so far, so the newest column swings
 * more than the settled ones and often holds the largest value for a second; scaled to it
 * exactly, the lane's top moved most seconds, and every bar of the strip was painted again.
 */
export const LANE_TOP_HOLD = 0.75;

/**
 * Whether a lane drawn to `top` keeps it now that its largest visible value is `max`: while no
 * bar would pass the top and the tallest still reaches LANE_TOP_HOLD of it. The caption then
 * says the top in force ("IOPS ≤ 12.3k"), which stays an upper bound of every bar.
 */
export function laneTopHeld(top: number, max: number): boolean {
  return max <= top && max >= LANE_TOP_HOLD * top;
}

/** What a strip says of one lane over the columns of a series. */
export interface LaneFacts {
  /** Its scale's top: the largest value, with waiting bios stacked (in flight) or the oldest wait (age); 0 without any. */
  readonly top: number;
  /** Some column carries the lane's value (not "no data"). */
  readonly inView: boolean;
  /** Some column with a value also has waiting bios to draw (its caption names them). */
  readonly waiting: boolean;
}

export function laneFacts(series: ThroughputSeries, key: ThroughputKey): LaneFacts {
  const values = series[key];
  const extra = laneExtra(series, key);
  let top = 0;
  let inView = false;
  let waiting = false;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isNaN(v)) continue;
    inView = true;
    const e = extra ? (extra[i] as number) || 0 : 0;
    if (e > 0) waiting = true;
    top = Math.max(top, key === 'queue' ? v + e : Math.max(v, e));
  }
  return { top, inView, waiting };
}

export const THROUGHPUT_LABELS: Readonly<Record<ThroughputKey, string>> = {
  iops: 'IOPS',
  mbps: 'MB/s',
  queue: 'in flight',
  oldest: 'oldest in flight',
};

/** The lanes that draw waiting bios beside their own value, as their captions then name them. */
const WAITING_LABELS: Partial<Record<ThroughputKey, string>> = {
  queue: 'in flight + waiting',
  oldest: 'oldest in flight / waiting',
};

/**
 * A lane's caption in the strip: what it shows and its scale's top ("MB/s ≤ 12.3"), or, when no
 * column in view carries the lane's value, that there is none ("MB/s: no data"). A fleet view's
 * rows sum latency histograms only, and an agent before protocol 3 sent no byte counts: their
 * lanes' tops are 0, and "MB/s ≤ 0" read as a measured zero. `waiting`: the lane also drew
 * waiting bios (protocol 4), stacked on the in-flight bars or behind the oldest age.
 */
export function laneCaption(key: ThroughputKey, top: number, inView: boolean, waiting: boolean): string {
  const label = (waiting ? WAITING_LABELS[key] : undefined) ?? THROUGHPUT_LABELS[key];
  return inView ? `${label} ≤ ${formatThroughput(key, top)}` : `${label}: no data`;
}

/**
 * A value of series `key` as the strip and tooltip write it: an age as a latency, the rest
 * (IOPS, MB/s, depth) as rates; each formatter writes NaN (no data) as "–".
 */
export function formatThroughput(key: ThroughputKey, v: number): string {
  return key === 'oldest' ? formatLatency(v) : formatRate(v);
}

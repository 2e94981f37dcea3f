/**
 * Columnar heat map matrix (uPlot-style typed arrays): one column per `step` seconds, one row
 * per dense latency bucket, stored column-major in a ring of `capacity` columns.
 *
 * Column-major because every consumer works column by column: a live frame writes one
 * column, and `column(c)` is a zero-copy dense histogram the shared-types quantile functions
 * accept as is. A ring because live data appends at the right and expires at the left: both
 * are O(rows), nothing is ever shifted. Columns are absolute (`floor(ts / step)`), so the
 * same second always lands in the same column however the window moves. Every ring slot has
 * a change counter (`slotVersion`), so each consumer (bitmaps, percentile caches) can find
 * the columns that changed since it last looked, independently of the others.
 *
 * Each column also counts the seconds the agent recorded in it (`recordedSeconds`): a frame
 * with `disks: []` is a recorded second without I/O, while a second with no frame at all was
 * not recorded (the agent was down). The two look the same in the counts; model/gaps.ts tells
 * them apart for the renderer and the tooltip.
 */
import { type DiskInfo, type Frame, type LatencyKind, phaseHist, type SparseHist } from '@blkheat/shared-types';
import { cgroupLatency } from './diskFrames.js';

/** Which part of the frames a matrix counts. */
export interface MatrixFilter {
  readonly dev: string;
  /** The latency phase counted (phaseHist()). */
  readonly kind: LatencyKind;
  /** The disk's kind: a bio-based disk's total is its device latency, it has no queue or submit phase. Default 'request'. */
  readonly diskKind?: DiskInfo['kind'] | undefined;
  /** Classes to count; undefined = all. */
  readonly classes?: ReadonlySet<string> | undefined;
  /**
   * Count only the latency of `kind` charged to this cgroup (DiskFrame.cg) instead of the
   * classes'; `cg` is not split by class, so `classes` is not applied, and before protocol 4 it
   * carries device latency only (model/cgroups.ts: cgroupFilterApplies).
   */
  readonly cgroup?: string | undefined;
}

export class HeatMatrix {
  readonly counts: Float64Array;
  /** Sum of each column (same ring slots as counts). */
  readonly totals: Float64Array;
  /** Per-slot change counter, so per-column derived data (percentiles) can cache. */
  readonly slotVersion: Uint32Array;
  /** Seconds of each slot's column covered by a frame (any frame, with or without I/O). */
  readonly recorded: Float64Array;
  /**
   * 1 where a slot's counts may hold non-zeros (addSparse wrote it since it was last cleared).
   * A new matrix's counts are zeros and most columns of a sparse window are never written, so
   * clearing every column a window spans (buildMatrix ensures its first and last columns: the
   * whole window) touched all of a fresh array for nothing: at an hour of 1 s columns that is
   * 3 MB per disk, on every rebuild (a time-range click, a filter change).
   */
  private readonly written: Uint8Array;
  /** Columns [start, end) hold data; everything else reads as zero. */
  private startCol = 0;
  private endCol = 0;
  /** Bumped on every change. */
  version = 0;

  constructor(
    readonly rows: number,
    readonly step: number,
    readonly capacity: number,
    firstColumn = 0,
  ) {
    if (!Number.isInteger(step) || step < 1) throw new RangeError(`step ${step} must be a positive integer`);
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity ${capacity} must be a positive integer`);
    this.counts = new Float64Array(capacity * rows);
    this.totals = new Float64Array(capacity);
    this.slotVersion = new Uint32Array(capacity);
    this.recorded = new Float64Array(capacity);
    this.written = new Uint8Array(capacity);
    this.startCol = firstColumn;
    this.endCol = firstColumn;
  }

  get start(): number {
    return this.startCol;
  }

  get end(): number {
    return this.endCol;
  }

  /** Time covered, [startTime, endTime). */
  get startTime(): number {
    return this.startCol * this.step;
  }

  get endTime(): number {
    return this.endCol * this.step;
  }

  columnOf(ts: number): number {
    return Math.floor(ts / this.step);
  }

  slot(col: number): number {
    const s = col % this.capacity;
    return s < 0 ? s + this.capacity : s;
  }

  has(col: number): boolean {
    return col >= this.startCol && col < this.endCol;
  }

  /** The dense histogram of a column (a view into the matrix; do not keep it across changes). */
  column(col: number): Float64Array {
    const base = this.slot(col) * this.rows;
    return this.counts.subarray(base, base + this.rows);
  }

  count(col: number, row: number): number {
    if (!this.has(col) || row < 0 || row >= this.rows) return 0;
    return this.counts[this.slot(col) * this.rows + row] as number;
  }

  total(col: number): number {
    return this.has(col) ? (this.totals[this.slot(col)] as number) : 0;
  }

  /** Seconds of column `col` some frame covered (0: nothing recorded, or outside the window). */
  recordedSeconds(col: number): number {
    return this.has(col) ? (this.recorded[this.slot(col)] as number) : 0;
  }

  /**
   * Notes that `seconds` of column `col` were recorded (a frame arrived for them, maybe with no
   * I/O). Changes the slot's version: whether a column was recorded is drawn.
   */
  markRecorded(col: number, seconds: number): boolean {
    if (!this.ensure(col)) return false;
    const s = this.slot(col);
    this.recorded[s] = (this.recorded[s] as number) + seconds;
    this.slotVersion[s] = (this.slotVersion[s] as number) + 1;
    this.version++;
    return true;
  }

  /**
   * Makes `col` part of the window, growing it to the right (expiring the oldest columns when
   * the ring is full) or to the left while there is room. Returns false for a column too old
   * to fit, which the caller drops.
   */
  ensure(col: number): boolean {
    if (this.has(col)) return true;
    if (this.startCol === this.endCol) {
      this.startCol = col;
      this.endCol = col + 1;
      this.clear(col);
      this.version++;
      return true;
    }
    if (col >= this.endCol) {
      const newStart = Math.max(this.startCol, col + 1 - this.capacity);
      // Clear every slot that becomes live (at most a full ring).
      const from = Math.max(this.endCol, col + 1 - this.capacity);
      for (let c = from; c <= col; c++) this.clear(c);
      this.startCol = newStart;
      this.endCol = col + 1;
      this.version++;
      return true;
    }
    // Growing to the left: only while the ring has room.
    if (this.endCol - col > this.capacity) return false;
    for (let c = col; c < this.startCol; c++) this.clear(c);
    this.startCol = col;
    this.version++;
    return true;
  }

  /** Adds a sparse histogram into column `col`. */
  addSparse(col: number, sparse: SparseHist): boolean {
    if (!this.ensure(col)) return false;
    const base = this.slot(col) * this.rows;
    let added = 0;
    for (let k = 0; k + 1 < sparse.length; k += 2) {
      const row = sparse[k] as number;
      const n = sparse[k + 1] as number;
      if (row < 0 || row >= this.rows) continue; // foreign bucket: validated upstream, never trusted here
      this.counts[base + row] = (this.counts[base + row] as number) + n;
      added += n;
    }
    const s = this.slot(col);
    this.written[s] = 1;
    this.totals[s] = (this.totals[s] as number) + added;
    this.slotVersion[s] = (this.slotVersion[s] as number) + 1;
    this.version++;
    return true;
  }

  /**
   * Counts one frame's histograms for `filter` into the column holding `frame.ts`, and its
   * seconds as recorded (whether or not the disk had I/O in it).
   */
  addFrame(frame: Frame, filter: MatrixFilter): boolean {
    const col = this.columnOf(frame.ts);
    const disk = frame.disks.find((d) => d.dev === filter.dev);
    if (!this.markRecorded(col, frame.step)) return false;
    if (!disk) return true;
    if (filter.cgroup !== undefined) {
      const latency = cgroupLatency(disk, filter.cgroup, filter.kind, filter.diskKind ?? 'request');
      if (latency) this.addSparse(col, latency);
      return true;
    }
    for (const series of disk.cls) {
      if (filter.classes && !filter.classes.has(series.c)) continue;
      this.addSparse(col, phaseHist(series, filter.kind, filter.diskKind ?? 'request'));
    }
    return true;
  }

  /** Sum of columns [c0, c1) clipped to the window, as a dense histogram. */
  sumColumns(c0: number, c1: number, out: Float64Array = new Float64Array(this.rows)): Float64Array {
    const a = Math.max(c0, this.startCol);
    const b = Math.min(c1, this.endCol);
    for (let c = a; c < b; c++) {
      const base = this.slot(c) * this.rows;
      for (let r = 0; r < this.rows; r++) out[r] = (out[r] as number) + (this.counts[base + r] as number);
    }
    return out;
  }

  /** Largest cell count in columns [c0, c1). */
  maxCell(c0 = this.startCol, c1 = this.endCol): number {
    const a = Math.max(c0, this.startCol);
    const b = Math.min(c1, this.endCol);
    let max = 0;
    for (let c = a; c < b; c++) {
      const base = this.slot(c) * this.rows;
      for (let r = 0; r < this.rows; r++) {
        const v = this.counts[base + r] as number;
        if (v > max) max = v;
      }
    }
    return max;
  }

  /** Lowest and highest rows with any count in columns [c0, c1); undefined when empty. */
  rowExtent(c0 = this.startCol, c1 = this.endCol): [number, number] | undefined {
    const sum = this.sumColumns(c0, c1);
    let lo = -1;
    let hi = -1;
    for (let r = 0; r < this.rows; r++) {
      if ((sum[r] as number) > 0) {
        if (lo < 0) lo = r;
        hi = r;
      }
    }
    return lo < 0 ? undefined : [lo, hi];
  }

  private clear(col: number): void {
    const s = this.slot(col);
    if (this.written[s] === 1) {
      this.counts.fill(0, s * this.rows, (s + 1) * this.rows);
      this.written[s] = 0;
    }
    this.totals[s] = 0;
    this.recorded[s] = 0;
    this.slotVersion[s] = (this.slotVersion[s] as number) + 1;
  }
}

/**
 * A matrix for [from, to) at `step` holding every frame of `frames` that falls inside, with
 * room for `extraColumns` more (live growth) before the oldest expire. Frames may have any
 * step that fits inside one column (1 s frames summed into 10 s columns is the range merge).
 */
export function buildMatrix(
  frames: readonly Frame[],
  opts: { from: number; to: number; step: number; rows: number; filter: MatrixFilter; extraColumns?: number },
): HeatMatrix {
  const c0 = Math.floor(opts.from / opts.step);
  const c1 = Math.ceil(opts.to / opts.step);
  const cols = Math.max(1, c1 - c0);
  const m = new HeatMatrix(opts.rows, opts.step, cols + (opts.extraColumns ?? 0), c0);
  m.ensure(c0);
  m.ensure(c1 - 1);
  for (const f of frames) {
    if (f.ts < opts.from || f.ts >= opts.to) continue;
    m.addFrame(f, opts.filter);
  }
  return m;
}

/**
 * The data model of a recorded second (or a coarser step): what the agent keeps in history,
 * sends on the wire and writes into snapshots. Protocol version 1.
 */
import type { SparseHist } from './histogram.js';

/** A block device as the agent knows it. `dev` is the kernel's "MAJ:MIN". */
export interface DiskInfo {
  readonly dev: string;
  /** Kernel name from sysfs ("vda", "loop3", "zram0"); "MAJ:MIN" while unresolved. */
  readonly name: string;
  /** "request": blk-mq, timed issue->complete; "bio": bio-based (zram, dm, md, bcache), timed queue->complete. */
  readonly kind: 'request' | 'bio';
  /** False once the device went away (its history stays). */
  readonly present: boolean;
  readonly sizeBytes?: number;
  readonly model?: string;
}

/** One op class of one disk over one step. */
export interface ClassSeries {
  /** Class name, e.g. "Read", "Sync-Write", "Metadata-Read", "Flush". */
  readonly c: string;
  /** Completed I/Os (the count that matches /proc/diskstats). */
  readonly n: number;
  /** Device latency (issue -> complete; bio-based: queue -> complete). Sum <= n. */
  readonly d: SparseHist;
  /** Queue latency (request start -> issue). Sum <= n; empty for bio-based disks. */
  readonly q: SparseHist;
}

/** One disk over one step. */
export interface DiskFrame {
  readonly dev: string;
  readonly cls: readonly ClassSeries[];
  /** I/Os of this step with no sample record (not sampled, over budget, or ring buffer full). */
  readonly dropped?: number;
  /**
   * I/Os with no latency: their start was not seen (started before the probes were attached),
   * or the kernel never delivered their completion to the probes and blkheat's per-request books
   * found it (such I/Os are in `n`, so counts stay exact).
   */
  readonly missed?: number;
}

/** All disks over one step starting at `ts`. */
export interface Frame {
  /** Unix seconds of the step's start (wall-clock aligned to `step`). */
  readonly ts: number;
  /** Seconds covered: 1 for live frames, 10/60/... for coarser history tiers. */
  readonly step: number;
  readonly disks: readonly DiskFrame[];
}

/** A sampled I/O record. */
export interface IoSample {
  /** Completion time, unix microseconds. */
  readonly ts_us: number;
  readonly dev: string;
  readonly c: string;
  /** First sector; null for requests without one (a flush request carries sector_t -1). */
  readonly sector: number | null;
  readonly bytes: number;
  /** Queue latency in ns; null when unknown (bio-based disks, or start not seen). */
  readonly q_ns: number | null;
  /** Device latency in ns. */
  readonly d_ns: number;
  /** Submitting process, captured at submission (0 / "" when unknown). */
  readonly pid: number;
  readonly comm: string;
  readonly cgroup: number;
  /** Kept because it was among the slowest of its second (not by random sampling). */
  readonly outlier: boolean;
}

/** Which latency a heat map, histogram or sample query is about. */
export type LatencyKind = 'device' | 'queue';

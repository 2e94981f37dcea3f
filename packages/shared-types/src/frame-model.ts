/**
 * The data model of a recorded second (or a coarser step): what the agent keeps in history,
 * sends on the wire and writes into snapshots. Protocol version 1; later fields say which version added them.
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
  /**
   * Fleet view only (added in 3, `blkheat fleet`): the host (the agent's `instance` label) this
   * disk is on; `dev` is then the fleet's own id for the host × disk and `name` reads "host/disk".
   */
  readonly host?: string;
  /** Fleet view only (added in 3): that host's own agent dashboard, for per-I/O drill-down. */
  readonly link?: string;
}

/**
 * A series' latency by phase: what phaseHist() reads. Op classes carry every phase (`q` since 1,
 * `w`, `t`, `wu` since 4); sizes and cgroups carry `d` since they were added, and `q`, `w`, `t`,
 * `wu` since protocol 4 (snapshot 4, record JSON 4), so that size × latency and the cgroup
 * filter follow the phase on screen. Sums as for the class: Σ of a phase over sizes (or
 * cgroups of counted classes) = that phase over the classes.
 */
export interface PhaseSeries {
  /** Device latency (issue -> complete; bio-based: queue -> complete). */
  readonly d: SparseHist;
  /** Queue latency (request start -> issue). */
  readonly q?: SparseHist;
  /** Submit wait (request-based disks): ClassSeries.w. */
  readonly w?: SparseHist;
  /** Total (request-based disks): ClassSeries.t. */
  readonly t?: SparseHist;
  /** I/Os whose bio's submission was not seen: in neither `w` nor `t`. */
  readonly wu?: number;
}

/** One op class of one disk over one step. */
export interface ClassSeries extends PhaseSeries {
  /** Class name, e.g. "Read", "Sync-Write", "Metadata-Read", "Flush". */
  readonly c: string;
  /** Completed I/Os (the count that matches /proc/diskstats). */
  readonly n: number;
  /** Device latency (issue -> complete; bio-based: queue -> complete). Sum <= n. */
  readonly d: SparseHist;
  /** Queue latency (request start -> issue). Sum <= n; empty for bio-based disks. */
  readonly q: SparseHist;
  /**
   * Failed I/Os (included in `n`, with their latencies) by block status name, e.g. {"IOERR": 3}.
   * Added in 2.
   */
  readonly e?: Readonly<Record<string, number>>;
  /**
   * True for I/O that /proc/diskstats does not count: passthrough commands (SG_IO, NVMe admin,
   * virtio GET_ID: class names "DrvIn"/"DrvOut") and requests of queues with iostats off.
   * Such classes are outside the totals that equal diskstats. Added in 2.
   */
  readonly pt?: true;
  /**
   * By I/O size (added in 2): `s` is the size class, the smallest s with bytes <= 2^s (4 KiB: 12,
   * 1 MiB: 20; 0 for I/O with no data, e.g. flushes), with its count and device latency: the
   * size histogram and the size x latency joint. Σ n over sizes = n.
   */
  readonly sz?: readonly SizeSeries[];
  /**
   * Bytes moved by the `n` completed I/Os (the size each was issued with), for throughput:
   * MB/s = b / step / 1e6. Added in protocol 3, snapshot 3 and record JSON 3 (optional: data
   * from agents before it has none).
   */
  readonly b?: number;
  /**
   * Submit wait (added in protocol 4, snapshot 4, record JSON 4; request-based disks only): from
   * the submission of the bio that made the request (block_bio_queue) to the request's
   * allocation (block_getrq): the queue freeze, rq_qos throttling (wbt, iocost) and the wait for
   * a tag. Sum = n - wu. docs/accounting.md says what merged, split and requeued I/O get.
   */
  readonly w?: SparseHist;
  /**
   * Total (added in 4; request-based disks only): from that bio's submission to the request's
   * completion, what the application sees of the block layer. Sum = n - wu. A bio-based disk's
   * total is `d` (its bio -> completion time): read it through phaseHist().
   */
  readonly t?: SparseHist;
  /** I/Os in `n` whose bio's submission was not seen: in neither `w` nor `t` (added in 4). */
  readonly wu?: number;
}

/** One size class of a class series: its count and phases (device latency; the others added in 4). */
export interface SizeSeries extends PhaseSeries {
  readonly s: number;
  readonly n: number;
}

/** The diskstats op groups, for untimed I/Os. */
export type OpGroup = 'read' | 'write' | 'discard' | 'flush';
export const OP_GROUPS: readonly OpGroup[] = ['read', 'write', 'discard', 'flush'];

/** One I/O in flight at the end of a step. */
export interface InflightIo {
  readonly c: string;
  /** Submitting process (0 / "" when unknown). */
  readonly pid: number;
  readonly comm: string;
  readonly sector: number | null;
  readonly bytes: number;
  /** Time since the request was made, ns. */
  readonly age_ns: number;
  /** Time since it was issued to the driver, ns (null: not issued yet). */
  readonly dev_age_ns: number | null;
}

/** In-flight I/Os listed per disk and frame (the oldest); the count `n` covers them all. */
export const INFLIGHT_LISTED = 8;

/** I/Os in flight on one disk when the step was closed. Added in 2. */
export interface InflightState {
  /** I/Os with the driver. */
  readonly n: number;
  /** Age of the oldest of them, ns. */
  readonly oldest_ns: number;
  /**
   * The oldest few, oldest first, of those the agent lists (at most 256 machine-wide: with more in
   * flight, `n` and `oldest_ns` stay exact but these may not be the very oldest).
   */
  readonly ios: readonly InflightIo[];
  /**
   * Bios submitted and still waiting for a request (added in 4): not in `n`. A frozen queue, a
   * full tag set or QoS throttling holds them here, before any request exists.
   */
  readonly waiting?: number;
  /** Age of the oldest waiting bio, ns (added in 4; with `waiting`). */
  readonly oldest_wait_ns?: number;
  /** The disk's queue was frozen when the scan looked (added in 4): waiting bios wait for it. */
  readonly frozen?: true;
}

/** Block I/O charged to one cgroup on one disk over one step, with its phases (`d`; the others added in 4). Added in 3. */
export interface CgroupSeries extends PhaseSeries {
  /**
   * The cgroup's path in the hierarchy that holds the io controller (cgroup v1 "blkio" or cgroup2
   * "io"), "/" for its root; CGROUP_NONE for I/O charged to no cgroup (requests without a bio,
   * e.g. flushes); "cgroup#ID" for one removed before it could be named; CGROUP_OTHER for all
   * past the CGROUPS_LISTED busiest.
   */
  readonly g: string;
  /** Completed I/Os of classes /proc/diskstats counts (not `pt`): Σ n over cgroups = Σ n of those classes. */
  readonly n: number;
}

/** Cgroup names that are not paths. */
export const CGROUP_NONE = '(none)';
export const CGROUP_OTHER = '(other)';
/** Most cgroups listed per disk and frame (busiest first); the rest are summed as CGROUP_OTHER. */
export const CGROUPS_LISTED = 64;

/** One disk over one step. */
export interface DiskFrame {
  readonly dev: string;
  readonly cls: readonly ClassSeries[];
  /** I/Os of this step with no sample record (not sampled, over budget, or ring buffer full). */
  readonly dropped?: number;
  /** I/Os in `n` with no latency: their start was not seen (started before the probes were attached). */
  readonly missed?: number;
  /** Requests sent back to the queue by the driver (each is issued again). Added in 2. */
  readonly requeues?: number;
  /**
   * Untimed I/Os: I/Os /proc/diskstats counted that no blkheat probe saw, by op group, measured
   * against the kernel's own counters (docs/accounting.md). Not in `cls`; counts of the disk are
   * Σ n of classes without `pt` + Σ untimed. Added in 2.
   */
  readonly untimed?: Readonly<Partial<Record<OpGroup, number>>>;
  /** What was in flight when the step closed (for coarser steps: the step's worst second). Added in 2. */
  readonly inflight?: InflightState;
  /** By cgroup the I/O was charged to (the bio's blkcg), busiest first. Added in 3. */
  readonly cg?: readonly CgroupSeries[];
  /**
   * Causes of submit wait seen in this step (added in 4), each a count of the step's completed
   * I/Os whose bio met it: `frozen`, the queue was frozen when the bio was submitted
   * (bio_queue_enter waited for it to thaw); `refused`, a REQ_NOWAIT submission of it (io_uring's
   * first try) was turned away for want of a free tag (or a frozen queue) and it was resubmitted.
   */
  readonly causes?: Readonly<Partial<Record<SubmitCause, number>>>;
  /**
   * wbt's latency windows in this step in which writeback throttling held buffered writes below
   * its default depth (its read latency target, queue/wbt_lat_usec, missed; wbt_timer): those
   * writes waited for it before their request. A mark of the disk, not a count of I/Os; absent
   * when none (added in 4).
   */
  readonly wbt?: number;
  /**
   * Queue settings whose value changed in this step (added in 4), as the agent saw them once a
   * second: switching queue/scheduler or resizing queue/nr_requests freezes the queue while it
   * applies (the udev rule behind a frozen-queue stall). Absent when none changed.
   */
  readonly queue_changed?: readonly QueueSetting[];
  /**
   * Seconds of this step in which the in-flight scan found tasks asleep for a tag of the disk's
   * queue (blk_mq_get_tag(): every tag was in use), added in 5. A mark of the disk, like `wbt`: it
   * names the wait of a blocking submitter (psync, a page-cache flush), which sleeps unseen by any
   * tracepoint, where `causes.refused` counts io_uring's REQ_NOWAIT tries. Absent when none.
   */
  readonly tags_full?: number;
}

/** Why a bio waited before its request existed, where the kernel shows it (added in 4). */
export type SubmitCause = 'frozen' | 'refused';
export const SUBMIT_CAUSES: readonly SubmitCause[] = ['frozen', 'refused'];

/** How each cause reads after "waiting" (row heads, tooltips, text output: one wording everywhere). */
export const SUBMIT_CAUSE_WAIT: Readonly<Record<SubmitCause, string>> = {
  frozen: 'on a frozen queue',
  refused: 'for a tag',
};

/** How wbt's mark (DiskFrame.wbt) reads after "waiting": the wait named when no I/O's cause is. */
export const WBT_WAIT = 'in writeback throttling (wbt)';

/** "every tag in use with bios waiting in 5 seconds": the tags mark (DiskFrame.tags_full), one wording everywhere; `count` formats the number. */
export function tagsFullText(seconds: number, count: (n: number) => string = String): string {
  return `every tag in use with bios waiting in ${count(seconds)} second${seconds === 1 ? '' : 's'}`;
}

/** The queue settings whose change freezes the queue, as files of /sys/block/<disk>/queue (DiskFrame.queue_changed; added in 4). */
export const QUEUE_SETTINGS = ['scheduler', 'nr_requests'] as const;
export type QueueSetting = (typeof QUEUE_SETTINGS)[number];

/** The settings changed in any of `lists`, each once, in QUEUE_SETTINGS order (how steps' `queue_changed` join). */
export function joinQueueSettings(...lists: readonly (readonly QueueSetting[] | undefined)[]): QueueSetting[] {
  return QUEUE_SETTINGS.filter((s) => lists.some((l) => l?.includes(s)));
}

/** "wbt held writes back in 6 windows": wbt's mark (DiskFrame.wbt), one wording everywhere; `count` formats the number. */
export function wbtWindowsText(windows: number, count: (n: number) => string = String): string {
  return `wbt held writes back in ${count(windows)} window${windows === 1 ? '' : 's'}`;
}

/** "queue/scheduler and queue/nr_requests changed": a step's queue changes, one wording everywhere. */
export function queueChangedText(changed: readonly QueueSetting[]): string {
  return `${changed.map((s) => `queue/${s}`).join(' and ')} changed`;
}

/**
 * The host's I/O pressure over a step, from the kernel's PSI (/proc/pressure/io): microseconds of
 * the step during which some task (`some_us`) or every non-idle task (`full_us`) was stalled
 * waiting for I/O. Each is at most the step (step × 1e6 µs: maxStallMicros in limits.ts). Host-wide:
 * it sees waits no block tracepoint can (bios held by blk-throttle before block_bio_queue,
 * page-cache waits). Added in protocol 4, snapshot 4 and record JSON 4.
 */
export interface IoPressure {
  readonly some_us: number;
  readonly full_us: number;
}

/**
 * One cgroup's I/O pressure over a step (added in protocol 4, snapshot 4, record JSON 4): its
 * cgroup2 `io.pressure`, µs of the step during which some task of the cgroup (`some_us`) or every
 * non-idle one (`full_us`) was stalled on I/O, each at most the step. `g` is the path as in
 * DiskFrame.cg: the agent reads the cgroups block I/O was charged to lately. Where the io
 * controller is on cgroup v1 (blkio), the cgroup2 directory of the same path (systemd's hybrid
 * layout keeps the two trees alike); where that has none, nothing. docs/accounting.md says more.
 */
export interface CgroupPressure extends IoPressure {
  readonly g: string;
}

/** Most cgroups whose pressure a frame carries (the most stalled first). */
export const CGROUP_PSI_LISTED = 64;

/** All disks over one step starting at `ts`. */
export interface Frame {
  /** Unix seconds of the step's start (wall-clock aligned to `step`). */
  readonly ts: number;
  /** Seconds covered: 1 for live frames, 10/60/... for coarser history tiers. */
  readonly step: number;
  readonly disks: readonly DiskFrame[];
  /**
   * The host's I/O pressure in this step (added in 4). Absent: not known (agents before it, a
   * kernel without PSI, the agent's first second, a second whose counters went back, the fleet
   * view). A coarse step's is the sum over its seconds that had it.
   */
  readonly psi?: IoPressure;
  /**
   * I/O pressure of the cgroups I/O was charged to lately (added in 4; at most CGROUP_PSI_LISTED,
   * the most stalled first, each path once). Absent: none known. A coarse step's sums each
   * cgroup's over its seconds that had it.
   */
  readonly cg_psi?: readonly CgroupPressure[];
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
  /**
   * Submit wait in ns (added in 4): bio submission -> request allocation; null when the bio's
   * submission was not seen; absent from older agents and bio-based disks.
   */
  readonly w_ns?: number | null;
  /** Submitting process, captured at submission (0 / "" when unknown). */
  readonly pid: number;
  readonly comm: string;
  /** Kernfs id of the cgroup the I/O was charged to (since 3: the bio's blkcg; before: the submitter's cgroup2). */
  readonly cgroup: number;
  /** That cgroup's path, as in DiskFrame.cg (added in 3). */
  readonly cg?: string;
  /** Kept because it was among the slowest of its second (not by random sampling). */
  readonly outlier: boolean;
}

/**
 * Which latency (phase) a heat map, histogram or sample query is about: 'total' is what the
 * application sees (submit + queue + device), 'submit' the wait for a request (added in 4),
 * 'queue' request start -> issue, 'device' issue -> complete.
 */
export type LatencyKind = 'total' | 'submit' | 'queue' | 'device';
export const LATENCY_KINDS: readonly LatencyKind[] = ['total', 'submit', 'queue', 'device'];

/**
 * The histogram of one phase of a class, size or cgroup series, for a disk of `kind`: the one
 * rule for it. A bio-based disk's total and device time are both `d` (bio -> completion), it has
 * no queue or submit phase; data from before protocol 4 has no total or submit phase, and its
 * sizes and cgroups no queue phase (empty: phaseCarried() tells that from "none waited").
 */
export function phaseHist(cls: PhaseSeries, phase: LatencyKind, kind: DiskInfo['kind']): SparseHist {
  switch (phase) {
    case 'device':
      return cls.d;
    case 'queue':
      return cls.q ?? [];
    case 'submit':
      return kind === 'bio' ? [] : (cls.w ?? []);
    case 'total':
      return kind === 'bio' ? cls.d : (cls.t ?? []);
  }
}

/**
 * True when the series carries `phase` for a disk of `kind` (phaseHist() of it is its data, not
 * an absence): device always; queue where `q` came (every class; sizes and cgroups since 4);
 * submit and total where `w`/`t` came, and a bio-based disk's total (its `d`).
 */
export function phaseCarried(series: PhaseSeries, phase: LatencyKind, kind: DiskInfo['kind']): boolean {
  switch (phase) {
    case 'device':
      return true;
    case 'queue':
      return series.q !== undefined;
    case 'submit':
      return kind === 'request' && series.w !== undefined;
    case 'total':
      return kind === 'bio' || series.t !== undefined;
  }
}

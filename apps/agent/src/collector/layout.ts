/**
 * Binary layouts shared with the kernel programs (bpf/include/blkheat.h). The collector
 * checks these sizes against what libbpf reports for the loaded object and refuses to run
 * against a mismatched build.
 */
import { OP_GROUPS, type OpGroup } from '@blkheat/shared-types';

/**
 * What depends on the bucket schema an object was built for (BH_SCHEMA in blkheat.h): the
 * length of the kernel's dense bucket arrays and of bounds_ns. Scale 2 is blkheat.bpf.o, scale 3
 * blkheat_s3.bpf.o (added in layout 3).
 */
export interface SchemaLayout {
  /** Dense latency buckets per kernel histogram (BH_NR_BUCKETS). */
  readonly nrBuckets: number;
  /** Entries of bounds_ns (BH_MAX_BOUNDS). */
  readonly maxBounds: number;
  /** sizeof(struct bh_hist). */
  readonly histValueSize: number;
  /** The compiled object's file name in bpf/build. */
  readonly objectFile: string;
}

const SCHEMA_LAYOUTS: Readonly<Record<number, { nrBuckets: number; maxBounds: number; objectFile: string }>> = {
  2: { nrBuckets: 112, maxBounds: 128, objectFile: 'blkheat.bpf.o' },
  3: { nrBuckets: 216, maxBounds: 256, objectFile: 'blkheat_s3.bpf.o' },
};

/** The kernel layout for a bucket schema scale; throws RangeError for a scale with no object. */
export function schemaLayout(scale: number): SchemaLayout {
  const l = SCHEMA_LAYOUTS[scale];
  if (!l) throw new RangeError(`no kernel object for bucket schema scale ${scale} (built: ${Object.keys(SCHEMA_LAYOUTS).join(', ')})`);
  return { ...l, histValueSize: HIST_HEADER + 2 * l.nrBuckets * 8 };
}

export const COMM_LEN = 16;
export const BUDGET_SLOTS = 4;

/** Class code bits (low 8 bits: kernel req_op value). */
export const CLS_OP_MASK = 0xff;
export const CLS_FLAG_BITS = Object.freeze({
  Sync: 1 << 8,
  Metadata: 1 << 9,
  ForcedUnitAccess: 1 << 10,
  Priority: 1 << 11,
  ReadAhead: 1 << 12,
  Background: 1 << 13,
  Preflush: 1 << 14,
});
/** The kernel does not count this I/O in /proc/diskstats (passthrough, or iostats off). */
export const CLS_NOSTAT = 1 << 15;
/** blk_status_t values counted per histogram; higher ones are counted in the last. */
export const NR_STATUS = 20;

export const SAMPLE_OUTLIER = 1 << 0;
export const SAMPLE_QUEUE_KNOWN = 1 << 1;
export const SAMPLE_SUBMITTER_KNOWN = 1 << 2;

/** struct bh_hist_key { u32 slot; u32 dev; u16 cls; u8 size_log2; u8 pad; u32 pad2; u64 cgroup; } */
export const HIST_KEY_SIZE = 24;
/** A histogram table entry's claim (map hist_claims): u64, 0 = free, 1 = a program is writing the key, else the key's slot (layout 6). */
export const HIST_CLAIM_SIZE = 8;
export const HIST_CLAIM_BUSY = 1n;
/** struct bh_hist: 4 u64 counters, u32 max bucket + pad, errors[] by status, then device[] and queue[] u64 arrays. */
export const HIST_REQUEUES_OFFSET = 24;
/** u64 bytes of the counted I/Os (layout 3). */
export const HIST_BYTES_OFFSET = 32;
export const HIST_MAX_BUCKET_OFFSET = 40;
export const HIST_ERRORS_OFFSET = 48;
/** Where device[] starts; queue[] follows it. */
export const HIST_DEVICE_OFFSET = HIST_ERRORS_OFFSET + NR_STATUS * 8;
const HIST_HEADER = HIST_DEVICE_OFFSET;
/** struct bh_rq_slot: one cache line. */
export const RQ_SLOT_SIZE = 64;
/** struct bh_inflight_summary { u64 now_ns; u32 found, listed; } */
export const INFLIGHT_SUMMARY_SIZE = 16;
/** struct bh_inflight_io */
export const INFLIGHT_IO_SIZE = 56;
/** struct bh_inflight_kept { u64 start_ns, sector, issue_ns, pid_tgid, task; } (layout 6): an I/O in flight 100 ms or more, kept by request. */
export const INFLIGHT_KEPT_SIZE = 40;
/** struct bh_inflight_disk { u64 count; u64 oldest_start_ns; } (map inflight_disks, u32 dev_t keys) */
export const INFLIGHT_DISK_SIZE = 16;
export const INFLIGHT_MAX = 256;
/** struct bh_disk_count { u32 dev; u32 used; u64 n[4]; } (layout 5): a disk's running count by op group. */
export const DISK_COUNT_SIZE = 40;
/** Entries of struct bh_disk_counts, the one per-CPU value of map disk_counts. */
export const DISK_COUNT_SLOTS = 512;
export const DISK_COUNTS_SIZE = DISK_COUNT_SIZE * DISK_COUNT_SLOTS;
/** Ops the kernel's op_group[] table covers (req_op values below this). */
export const OP_GROUP_TABLE_SIZE = 64;
/** struct bh_sample */
export const SAMPLE_SIZE = 80;
/** struct bh_budget { u64 slot, outliers, fair; } */
export const BUDGET_SIZE = 24;
/** struct bh_settings { s64 wall_offset_ns; u32 fair_threshold, fair_budget, outlier_budget, pad; } */
export const SETTINGS_SIZE = 24;
/** struct bh_counters: u64 each, in this order. */
export const COUNTER_NAMES = [
  'requeues',
  'ringLost',
  'bioStartFull',
  'kernelTimes',
  'partial',
  'bioUnknownDev',
  'histLost',
  'flushSeqData',
  'errors',
  'slotTaken',
  'counted',
  'diskCountsFull',
] as const;
export type CounterName = (typeof COUNTER_NAMES)[number];
export const COUNTERS_SIZE = COUNTER_NAMES.length * 8;

export interface HistKey {
  readonly slot: number;
  readonly dev: number;
  readonly cls: number;
  /** Size class: the smallest s with bytes <= 2^s; 0 = no data. */
  readonly size: number;
  /** Kernfs id of the charged cgroup (its directory's inode number); 0n = none. */
  readonly cgroup: bigint;
}

export function decodeHistKey(buf: Buffer, offset = 0): HistKey {
  return {
    slot: buf.readUInt32LE(offset),
    dev: buf.readUInt32LE(offset + 4),
    cls: buf.readUInt16LE(offset + 8),
    size: buf.readUInt8(offset + 10),
    cgroup: buf.readBigUInt64LE(offset + 16),
  };
}

/** One histogram entry summed over CPUs. */
export interface HistValue {
  count: number;
  dropped: number;
  missed: number;
  requeues: number;
  /** Bytes of the counted I/Os. */
  bytes: number;
  /** Failed I/Os by blk_status_t (index = status). */
  readonly errors: Float64Array;
  readonly device: Float64Array;
  readonly queue: Float64Array;
}

/** A zero value with the kernel's `nrBuckets` dense buckets per array (SchemaLayout.nrBuckets). */
export function emptyHistValue(nrBuckets: number): HistValue {
  return {
    count: 0,
    dropped: 0,
    missed: 0,
    requeues: 0,
    bytes: 0,
    errors: new Float64Array(NR_STATUS),
    device: new Float64Array(nrBuckets),
    queue: new Float64Array(nrBuckets),
  };
}

/**
 * Adds a per-CPU histogram value (`cpus` consecutive values of `stride` bytes starting at
 * `offset`) into `into`. Counts are u64 in the kernel; per-second values stay far below 2^53.
 * The bucket arrays are as long as `into`'s (emptyHistValue(layout.nrBuckets)).
 */
export function addPerCpuHist(into: HistValue, buf: Buffer, offset: number, stride: number, cpus: number): void {
  for (let c = 0; c < cpus; c++) {
    const base = offset + c * stride;
    into.count += readU64(buf, base);
    into.dropped += readU64(buf, base + 8);
    into.missed += readU64(buf, base + 16);
    into.requeues += readU64(buf, base + HIST_REQUEUES_OFFSET);
    into.bytes += readU64(buf, base + HIST_BYTES_OFFSET);
    for (let st = 1; st < NR_STATUS; st++) {
      const e = readU64(buf, base + HIST_ERRORS_OFFSET + st * 8);
      if (e !== 0) into.errors[st] = (into.errors[st] as number) + e;
    }
    const nrBuckets = into.device.length;
    const dev = base + HIST_HEADER;
    const que = dev + nrBuckets * 8;
    for (let b = 0; b < nrBuckets; b++) {
      const d = readU64(buf, dev + b * 8);
      if (d !== 0) into.device[b] = (into.device[b] as number) + d;
      const q = readU64(buf, que + b * 8);
      if (q !== 0) into.queue[b] = (into.queue[b] as number) + q;
    }
  }
}

/** The I/O count alone of a per-CPU histogram value (the seconds still open need no more). */
export function perCpuCount(buf: Buffer, stride: number, cpus: number): number {
  let n = 0;
  for (let c = 0; c < cpus; c++) n += readU64(buf, c * stride);
  return n;
}

export interface RawSample {
  readonly tsNs: bigint;
  /** null where the request has no sector (flushes carry sector_t -1). */
  readonly sector: number | null;
  readonly queueNs: number;
  readonly deviceNs: number;
  /** The charged cgroup's kernfs id (see HistKey.cgroup). */
  readonly cgroupId: bigint;
  readonly dev: number;
  readonly bytes: number;
  readonly pid: number;
  readonly cls: number;
  readonly flags: number;
  readonly comm: string;
  /** The second whose histogram counted this I/O (kernel's own slot: exact attribution). */
  readonly slot: number;
}

export function decodeSample(buf: Buffer): RawSample {
  if (buf.length < SAMPLE_SIZE) throw new RangeError(`sample record of ${buf.length} bytes, expected ${SAMPLE_SIZE}`);
  const commBytes = buf.subarray(56, 56 + COMM_LEN);
  const nul = commBytes.indexOf(0);
  return {
    tsNs: buf.readBigUInt64LE(0),
    sector: buf.readUInt32LE(12) >= 0x200000 ? null : readU64(buf, 8), // >= 2^53: the "no sector" sentinel
    queueNs: readU64(buf, 16),
    deviceNs: readU64(buf, 24),
    cgroupId: buf.readBigUInt64LE(32),
    dev: buf.readUInt32LE(40),
    bytes: buf.readUInt32LE(44),
    pid: buf.readUInt32LE(48),
    cls: buf.readUInt16LE(52),
    flags: buf.readUInt16LE(54),
    comm: commBytes.subarray(0, nul < 0 ? COMM_LEN : nul).toString('utf8'),
    slot: buf.readUInt32LE(72),
  };
}

export function encodeBudget(slot: number): Buffer {
  const buf = Buffer.alloc(BUDGET_SIZE);
  buf.writeBigUInt64LE(BigInt(slot), 0);
  return buf;
}

export interface Settings {
  readonly wallOffsetNs: bigint;
  readonly fairThreshold: number;
  readonly fairBudget: number;
  readonly outlierBudget: number;
}

export function encodeSettings(s: Settings): Buffer {
  const buf = Buffer.alloc(SETTINGS_SIZE);
  buf.writeBigInt64LE(s.wallOffsetNs, 0);
  buf.writeUInt32LE(s.fairThreshold >>> 0, 8);
  buf.writeUInt32LE(s.fairBudget >>> 0, 12);
  buf.writeUInt32LE(s.outlierBudget >>> 0, 16);
  return buf;
}

/** One I/O the in-flight scan found with the driver. */
export interface RawInflight {
  readonly startNs: bigint;
  /** 0n: not issued to the driver yet. */
  readonly issueNs: bigint;
  readonly sector: number | null;
  readonly dev: number;
  readonly bytes: number;
  readonly pid: number;
  readonly cls: number;
  readonly comm: string;
}

export function decodeInflight(buf: Buffer, offset = 0): RawInflight {
  const comm = buf.subarray(offset + 40, offset + 40 + COMM_LEN);
  const nul = comm.indexOf(0);
  return {
    startNs: buf.readBigUInt64LE(offset),
    issueNs: buf.readBigUInt64LE(offset + 8),
    sector: buf.readUInt32LE(offset + 20) >= 0x200000 ? null : readU64(buf, offset + 16),
    dev: buf.readUInt32LE(offset + 24),
    bytes: buf.readUInt32LE(offset + 28),
    pid: buf.readUInt32LE(offset + 32),
    cls: buf.readUInt16LE(offset + 36),
    comm: comm.subarray(0, nul < 0 ? COMM_LEN : nul).toString('utf8'),
  };
}

export interface InflightSummary {
  readonly nowNs: bigint;
  readonly found: number;
  readonly listed: number;
}

export function decodeInflightSummary(buf: Buffer): InflightSummary {
  return { nowNs: buf.readBigUInt64LE(0), found: buf.readUInt32LE(8), listed: buf.readUInt32LE(12) };
}

/** One disk's line of inflight_disks: every in-flight I/O counted, and the oldest start. */
export function decodeInflightDisk(key: Buffer, value: Buffer): { dev: number; count: number; oldestStartNs: bigint } {
  return { dev: key.readUInt32LE(0), count: Number(value.readBigUInt64LE(0)), oldestStartNs: value.readBigUInt64LE(8) };
}

/**
 * Sums a per-CPU bh_disk_counts value: each disk's running count, per op group (OP_GROUPS
 * order), by dev_t. A disk has at most one entry per CPU.
 */
export function decodeDiskCounts(buf: Buffer, stride: number, cpus: number): Map<number, Record<OpGroup, number>> {
  const out = new Map<number, Record<OpGroup, number>>();
  for (let c = 0; c < cpus; c++) {
    for (let i = 0; i < DISK_COUNT_SLOTS; i++) {
      const at = c * stride + i * DISK_COUNT_SIZE;
      if (buf.readUInt32LE(at + 4) === 0) continue;
      const dev = buf.readUInt32LE(at);
      let n = out.get(dev);
      if (!n) out.set(dev, (n = { read: 0, write: 0, discard: 0, flush: 0 }));
      OP_GROUPS.forEach((g, k) => {
        n[g] += readU64(buf, at + 8 + k * 8);
      });
    }
  }
  return out;
}

/** Sums a per-CPU bh_counters value. */
export function decodeCounters(buf: Buffer, stride: number, cpus: number): Record<CounterName, number> {
  const out = Object.fromEntries(COUNTER_NAMES.map((n) => [n, 0])) as Record<CounterName, number>;
  for (let c = 0; c < cpus; c++) {
    COUNTER_NAMES.forEach((name, i) => {
      out[name] += readU64(buf, c * stride + i * 8);
    });
  }
  return out;
}

/** A u32 map key or value (array indexes, dev_t filter keys). */
export function u32(v: number): Buffer {
  const buf = Buffer.alloc(4);
  buf.writeUInt32LE(v >>> 0);
  return buf;
}

/** Kernel dev_t (major << 20 | minor) as "MAJ:MIN". */
export function devString(dev: number): string {
  return `${dev >>> 20}:${dev & 0xfffff}`;
}

export function parseDevString(s: string): number | undefined {
  const m = /^(\d+):(\d+)$/.exec(s);
  if (!m) return undefined;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major > 0xfff || minor > 0xfffff) return undefined;
  return ((major << 20) | minor) >>> 0;
}

function readU64(buf: Buffer, offset: number): number {
  // Two 32-bit halves: exact below 2^53, and cheaper than BigInt on the hot path.
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * 0x100000000;
}

/**
 * collector/abi/ is the kernel ABI: the records, knobs and values the agent shares with
 * bpf/include/blkheat.h, read from the built object (kernel-abi.ts), the encoders and decoders
 * of one buffer, and the knob tables. It reads no map (decode/ and host/ do, with these layouts),
 * and it imports nothing from decode/.
 *
 * This file: the decoders and encoders of the kernel's records. Every offset and length comes
 * from the object's own layout (KernelAbi.records), so a record whose fields moved in blkheat.h
 * is still read right; the fields read and their widths are kernel-abi.ts's RECORD_FIELDS.
 */
import { OP_GROUPS, SUBMIT_CAUSES, type OpGroup, type SubmitCause } from '@blkheat/shared-types';
import { COUNTER_FIELDS, COUNTER_NAMES, type CounterName, type KernelAbi, type KernelRecords } from './kernel-abi.js';

export interface HistKey {
  readonly slot: number;
  readonly dev: number;
  readonly cls: number;
  /** Size class: the smallest s with bytes <= 2^s; 0 = no data. */
  readonly size: number;
  /** Kernfs id of the charged cgroup (its directory's inode number); 0n = none. */
  readonly cgroup: bigint;
}

export function decodeHistKey(k: KernelRecords['bh_hist_key'], buf: Buffer, offset = 0): HistKey {
  return {
    slot: buf.readUInt32LE(offset + k.at.slot),
    dev: buf.readUInt32LE(offset + k.at.dev),
    cls: buf.readUInt16LE(offset + k.at.cls),
    size: buf.readUInt8(offset + k.at.size_log2),
    cgroup: buf.readBigUInt64LE(offset + k.at.cgroup),
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
  /** I/Os of request-based disks whose bio's submission was not seen (in count, not in submit or total). */
  submitUnknown: number;
  /** I/Os by the cause of submit wait their bio met (bh_hist's field of the same name). */
  readonly causes: Record<SubmitCause, number>;
  readonly device: Float64Array;
  readonly queue: Float64Array;
  /** Submit wait: the bio's submission -> its request's allocation. */
  readonly submit: Float64Array;
  /** The bio's submission -> the request's completion. */
  readonly total: Float64Array;
}

/** The latency arrays of a histogram value, as bh_hist names them. */
export const HIST_PHASES = ['device', 'queue', 'submit', 'total'] as const;

/** No I/O by any cause of submit wait (HistValue.causes, and the frame builder's per-disk sums). */
export function noCauses(): Record<SubmitCause, number> {
  return Object.fromEntries(SUBMIT_CAUSES.map((c) => [c, 0])) as Record<SubmitCause, number>;
}

/** A zero value with the object's dense buckets and status counts per array. */
export function emptyHistValue(abi: Pick<KernelAbi, 'nrBuckets' | 'nrStatus'>): HistValue {
  return {
    count: 0,
    dropped: 0,
    missed: 0,
    requeues: 0,
    bytes: 0,
    submitUnknown: 0,
    causes: noCauses(),
    errors: new Float64Array(abi.nrStatus),
    device: new Float64Array(abi.nrBuckets),
    queue: new Float64Array(abi.nrBuckets),
    submit: new Float64Array(abi.nrBuckets),
    total: new Float64Array(abi.nrBuckets),
  };
}

/**
 * Adds a per-CPU histogram value (`cpus` consecutive values of `stride` bytes starting at
 * `offset`) into `into`. Counts are u64 in the kernel; per-second values stay far below 2^53.
 * The arrays are as long as `into`'s (emptyHistValue of the same object).
 */
export function addPerCpuHist(
  h: KernelRecords['bh_hist'],
  into: HistValue,
  buf: Buffer,
  offset: number,
  stride: number,
  cpus: number,
): void {
  const { at } = h;
  const nrStatus = into.errors.length;
  const nrBuckets = into.device.length;
  for (let c = 0; c < cpus; c++) {
    const base = offset + c * stride;
    into.count += readU64(buf, base + at.count);
    into.dropped += readU64(buf, base + at.dropped);
    into.missed += readU64(buf, base + at.missed);
    into.requeues += readU64(buf, base + at.requeues);
    into.bytes += readU64(buf, base + at.bytes);
    into.submitUnknown += readU64(buf, base + at.submit_unknown);
    for (const cause of SUBMIT_CAUSES) into.causes[cause] += readU64(buf, base + at[cause]);
    for (let st = 1; st < nrStatus; st++) {
      const e = readU64(buf, base + at.errors + st * 8);
      if (e !== 0) into.errors[st] = (into.errors[st] as number) + e;
    }
    for (const phase of HIST_PHASES) {
      const from = base + at[phase];
      const to = into[phase];
      for (let b = 0; b < nrBuckets; b++) {
        const v = readU64(buf, from + b * 8);
        if (v !== 0) to[b] = (to[b] as number) + v;
      }
    }
  }
}

/** The I/O count alone of a per-CPU histogram value (the seconds still open need no more). */
export function perCpuCount(h: KernelRecords['bh_hist'], buf: Buffer, stride: number, cpus: number): number {
  let n = 0;
  for (let c = 0; c < cpus; c++) n += readU64(buf, c * stride + h.at.count);
  return n;
}

export interface RawSample {
  readonly tsNs: bigint;
  /** null where the request has no sector (flushes carry sector_t -1). */
  readonly sector: number | null;
  readonly queueNs: number;
  readonly deviceNs: number;
  /** Submit wait (valid with the sample flag submitKnown). */
  readonly submitNs: number;
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

export function decodeSample(s: KernelRecords['bh_sample'], buf: Buffer): RawSample {
  if (buf.length < s.size) throw new RangeError(`sample record of ${buf.length} bytes, expected ${s.size}`);
  const { at } = s;
  return {
    tsNs: buf.readBigUInt64LE(at.ts_ns),
    sector: readSector(buf, at.sector),
    queueNs: readU64(buf, at.queue_ns),
    deviceNs: readU64(buf, at.device_ns),
    submitNs: readU64(buf, at.submit_ns),
    cgroupId: buf.readBigUInt64LE(at.cgroup_id),
    dev: buf.readUInt32LE(at.dev),
    bytes: buf.readUInt32LE(at.bytes),
    pid: buf.readUInt32LE(at.pid),
    cls: buf.readUInt16LE(at.cls),
    flags: buf.readUInt16LE(at.flags),
    comm: readComm(buf, at.comm, s.len.comm),
    slot: buf.readUInt32LE(at.slot),
  };
}

export function encodeBudget(b: KernelRecords['bh_budget'], slot: number): Buffer {
  const buf = Buffer.alloc(b.size);
  buf.writeBigUInt64LE(BigInt(slot), b.at.slot);
  return buf;
}

export interface Settings {
  readonly wallOffsetNs: bigint;
  readonly fairThreshold: number;
  readonly fairBudget: number;
  readonly outlierBudget: number;
}

export function encodeSettings(l: KernelRecords['bh_settings'], s: Settings): Buffer {
  const buf = Buffer.alloc(l.size);
  buf.writeBigInt64LE(s.wallOffsetNs, l.at.wall_offset_ns);
  buf.writeUInt32LE(s.fairThreshold >>> 0, l.at.fair_threshold);
  buf.writeUInt32LE(s.fairBudget >>> 0, l.at.fair_budget);
  buf.writeUInt32LE(s.outlierBudget >>> 0, l.at.outlier_budget);
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

export function decodeInflight(l: KernelRecords['bh_inflight_io'], buf: Buffer, offset = 0): RawInflight {
  const { at } = l;
  return {
    startNs: buf.readBigUInt64LE(offset + at.start_ns),
    issueNs: buf.readBigUInt64LE(offset + at.issue_ns),
    sector: readSector(buf, offset + at.sector),
    dev: buf.readUInt32LE(offset + at.dev),
    bytes: buf.readUInt32LE(offset + at.bytes),
    pid: buf.readUInt32LE(offset + at.pid),
    cls: buf.readUInt16LE(offset + at.cls),
    comm: readComm(buf, offset + at.comm, l.len.comm),
  };
}

export interface InflightSummary {
  readonly nowNs: bigint;
  readonly found: number;
  readonly listed: number;
}

export function decodeInflightSummary(l: KernelRecords['bh_inflight_summary'], buf: Buffer): InflightSummary {
  return { nowNs: buf.readBigUInt64LE(l.at.now_ns), found: buf.readUInt32LE(l.at.found), listed: buf.readUInt32LE(l.at.listed) };
}

export interface InflightDisk {
  readonly dev: number;
  /** Requests with the driver, and the oldest one's start. */
  readonly count: number;
  readonly oldestStartNs: bigint;
  /** Bios waiting for a request, and the oldest one's submission (0n: none). */
  readonly waiting: number;
  readonly oldestSubmitNs: bigint;
  /** A waiting bio's queue was frozen when the scan looked. */
  readonly frozen: boolean;
  /** Tasks asleep for a tag of the disk's queue when the scan looked (read where bios wait). */
  readonly tagSleepers: number;
}

/** One disk's line of inflight_disks (u32 dev_t key): every in-flight I/O counted, and the oldest start. */
export function decodeInflightDisk(l: KernelRecords['bh_inflight_disk'], key: Buffer, value: Buffer): InflightDisk {
  return {
    dev: key.readUInt32LE(0),
    count: readU64(value, l.at.count),
    oldestStartNs: value.readBigUInt64LE(l.at.oldest_start_ns),
    waiting: readU64(value, l.at.waiting),
    oldestSubmitNs: value.readBigUInt64LE(l.at.oldest_submit_ns),
    frozen: value.readUInt32LE(l.at.frozen) !== 0,
    tagSleepers: value.readUInt32LE(l.at.tag_sleepers),
  };
}

/** One line of wbt_events: a disk's wbt windows since load in which wbt held writes back (dev 0: a free line). */
export function decodeWbtEvents(l: KernelRecords['bh_wbt_events'], value: Buffer): { dev: number; limited: number } {
  return { dev: readU64(value, l.at.dev), limited: readU64(value, l.at.limited) };
}

/**
 * Sums a per-CPU bh_disk_counts value: each disk's running count, per op group (OP_GROUPS
 * order), by dev_t. A disk has at most one entry per CPU.
 */
export function decodeDiskCounts(
  abi: Pick<KernelAbi, 'records' | 'diskCountSlots'>,
  buf: Buffer,
  stride: number,
  cpus: number,
): Map<number, Record<OpGroup, number>> {
  const e = abi.records.bh_disk_count;
  const first = abi.records.bh_disk_counts.at.e;
  const out = new Map<number, Record<OpGroup, number>>();
  for (let c = 0; c < cpus; c++) {
    for (let i = 0; i < abi.diskCountSlots; i++) {
      const at = c * stride + first + i * e.size;
      if (buf.readUInt32LE(at + e.at.used) === 0) continue;
      const dev = buf.readUInt32LE(at + e.at.dev);
      let n = out.get(dev);
      if (!n) out.set(dev, (n = { read: 0, write: 0, discard: 0, flush: 0 }));
      OP_GROUPS.forEach((g, k) => {
        n[g] += readU64(buf, at + e.at.n + k * 8);
      });
    }
  }
  return out;
}

/** Sums a per-CPU bh_counters value. */
export function decodeCounters(l: KernelRecords['bh_counters'], buf: Buffer, stride: number, cpus: number): Record<CounterName, number> {
  const out = zeroCounters();
  // Every field is there: readKernelAbi refuses an object whose bh_counters lacks one.
  const offsets = COUNTER_FIELDS.map((field) => l.at[field] ?? 0);
  for (let c = 0; c < cpus; c++) {
    COUNTER_NAMES.forEach((name, i) => {
      out[name] += readU64(buf, c * stride + (offsets[i] ?? 0));
    });
  }
  return out;
}

/** Counters of a kernel that counted nothing. */
export function zeroCounters(): Record<CounterName, number> {
  return Object.fromEntries(COUNTER_NAMES.map((n) => [n, 0])) as Record<CounterName, number>;
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

/** A sector_t; null for the "no sector" sentinel (all ones, as flushes carry: anything >= 2^53). */
function readSector(buf: Buffer, offset: number): number | null {
  return buf.readUInt32LE(offset + 4) >= 0x200000 ? null : readU64(buf, offset);
}

/** A NUL-padded char array. */
function readComm(buf: Buffer, offset: number, length: number): string {
  const bytes = buf.subarray(offset, offset + length);
  const nul = bytes.indexOf(0);
  return bytes.subarray(0, nul < 0 ? length : nul).toString('utf8');
}

function readU64(buf: Buffer, offset: number): number {
  // Two 32-bit halves: exact below 2^53, and cheaper than BigInt on the hot path.
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * 0x100000000;
}

/**
 * The kernel ABI as the agent reads it: every record it decodes or encodes, every value it
 * shares with the programs, taken from the built object itself. bpf/include/blkheat.h is the one
 * source; nothing of it is copied here. What this file states is only what the decoders need:
 * which fields of which structs they read, and at what width (RECORD_FIELDS). Where each field
 * lies, how long each array is, and the values of the header's enums come from the object's BTF
 * (and its globals' and maps' declared sizes) when it is opened, before anything is loaded.
 *
 * An object that lacks a field the agent reads, or lays one out at a width the agent cannot read
 * it at, is refused with the struct and the field named. An object whose fields merely moved is
 * read right: the decoders take every offset from here.
 */
import { loadKernelBtf, openObject, type BpfObject, type KernelBtf, type StructLayout } from '@blkheat/bpf-loader';
import { CLASS_FLAGS, OP_GROUPS, SUBMIT_CAUSES, type ClassFlag } from '@blkheat/shared-types';
import { CollectorError, errorText } from '../errors.js';

/** How a decoder reads a field: an unsigned or signed integer of its width, or an array. */
type FieldKind = 'u8' | 'u16' | 'u32' | 'u64' | 's64' | 'u64[]' | 'char[]' | 'bytes';
const WIDTH: Partial<Record<FieldKind, number>> = { u8: 1, u16: 2, u32: 4, u64: 8, s64: 8 };

/** The kernel's u64 event counters (struct bh_counters), as the agent names them. */
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
  'refusalsKept',
  'refusalsLinked',
  'refusalsOverwritten',
] as const;
export type CounterName = (typeof COUNTER_NAMES)[number];

/** struct bh_request_bits: the kernel's op and flag values, each a u32 knob. */
export const REQUEST_BITS_FIELDS = [
  'op_mask',
  'op_flush',
  'op_drv_in',
  'op_drv_out',
  'rqf_flush_seq',
  'rqf_stats',
  'rqf_io_stat',
  'cls_shift',
  'bio_in_flight',
  'sts_again',
  'wbt_lat_exceeded',
] as const;

const u64s = <const N extends string>(names: readonly N[]): Record<N, 'u64'> =>
  Object.fromEntries(names.map((n) => [n, 'u64'])) as Record<N, 'u64'>;

/** The field of struct bh_counters that holds each counter, in COUNTER_NAMES order (the C names are snake_case). */
export const COUNTER_FIELDS: readonly string[] = COUNTER_NAMES.map((name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));

/** Every struct of blkheat.h the agent reads or writes, with the fields it uses and their widths. */
const RECORD_FIELDS = {
  bh_hist_key: { slot: 'u32', dev: 'u32', cls: 'u16', size_log2: 'u8', cgroup: 'u64' },
  bh_hist: {
    ...u64s(['count', 'dropped', 'missed', 'requeues', 'bytes', 'submit_unknown', ...SUBMIT_CAUSES]),
    max_bucket_plus1: 'u32',
    errors: 'u64[]',
    device: 'u64[]',
    queue: 'u64[]',
    submit: 'u64[]',
    total: 'u64[]',
  },
  bh_sample: {
    ...u64s(['ts_ns', 'sector', 'queue_ns', 'device_ns', 'cgroup_id', 'submit_ns']),
    dev: 'u32',
    bytes: 'u32',
    pid: 'u32',
    cls: 'u16',
    flags: 'u16',
    comm: 'char[]',
    slot: 'u32',
  },
  bh_budget: u64s(['slot', 'outliers', 'fair']),
  bh_counters: Object.fromEntries(COUNTER_FIELDS.map((field) => [field, 'u64' as const])),
  bh_rq_slot: u64s(['key', 'issue_ns', 'pid_tgid', 'task']),
  bh_inflight_summary: { now_ns: 'u64', found: 'u32', listed: 'u32' },
  bh_inflight_io: { ...u64s(['start_ns', 'issue_ns', 'sector']), dev: 'u32', bytes: 'u32', pid: 'u32', cls: 'u16', comm: 'char[]' },
  bh_disk_count: { dev: 'u32', used: 'u32', n: 'u64[]' },
  bh_disk_counts: { e: 'bytes' },
  bh_inflight_disk: { ...u64s(['count', 'oldest_start_ns', 'waiting', 'oldest_submit_ns']), frozen: 'u32', tag_sleepers: 'u32' },
  bh_wbt_events: u64s(['dev', 'limited']),
  bh_inflight_kept: u64s(['start_ns', 'sector', 'issue_ns', 'pid_tgid', 'task']),
  bh_settings: { wall_offset_ns: 's64', fair_threshold: 'u32', fair_budget: 'u32', outlier_budget: 'u32' },
  bh_request_bits: Object.fromEntries(REQUEST_BITS_FIELDS.map((n) => [n, 'u32' as const])) as Record<
    (typeof REQUEST_BITS_FIELDS)[number],
    'u32'
  >,
} as const satisfies Record<string, Record<string, FieldKind>>;

type RecordName = keyof typeof RECORD_FIELDS;

/** A struct as the object lays it out: its size, and each field's byte offset and byte length. */
export interface RecordLayout<F extends string = string> {
  readonly size: number;
  readonly at: Readonly<Record<F, number>>;
  readonly len: Readonly<Record<F, number>>;
}

export type KernelRecords = { readonly [N in RecordName]: RecordLayout<keyof (typeof RECORD_FIELDS)[N] & string> };

/** The class code's parts (enum bh_cls_bits). */
export interface ClassBits {
  /** The low bits: the kernel's req_op value. */
  readonly opMask: number;
  /** The bit of each flag a class name shows. */
  readonly flags: Readonly<Record<ClassFlag, number>>;
  /** Not counted in /proc/diskstats (passthrough, or iostats off). */
  readonly nostat: number;
}

export interface KernelAbi {
  /** The object file this was read from. */
  readonly path: string;
  readonly records: KernelRecords;
  /** Dense latency buckets per kernel histogram (bh_hist.device). */
  readonly nrBuckets: number;
  /** blk_status_t values counted per histogram (bh_hist.errors); higher ones go in the last. */
  readonly nrStatus: number;
  /** Entries of bounds_ns: bucket upper bounds the agent may hand the programs. */
  readonly maxBounds: number;
  /** Entries of bucket_first: 64 powers of two, 2^bucketSplitBits parts each. */
  readonly bucketTableSize: number;
  readonly bucketSplitBits: number;
  /** cls_flag_table covers this many request flag bits. */
  readonly clsFlagTableBits: number;
  /** Entries of op_group: the req_op values the programs can group. */
  readonly opGroupTableSize: number;
  /** Entries of bh_disk_counts: disks the per-disk counts can hold. */
  readonly diskCountSlots: number;
  /** In-flight I/Os one scan lists (map inflight_list). */
  readonly inflightMax: number;
  /** Seconds of sample budget kept (map budget, indexed by second). */
  readonly budgetSlots: number;
  readonly classBits: ClassBits;
  /** bh_sample.flags (enum bh_sample_flags). */
  readonly sampleFlags: {
    readonly outlier: number;
    readonly queueKnown: number;
    readonly submitterKnown: number;
    readonly submitKnown: number;
  };
  /** A histogram claim while a program writes its key (enum bh_claim). */
  readonly claimBusy: bigint;
  /** An op value no request has (enum bh_no_op). */
  readonly noOp: number;
}

/** The C name of each class flag bit (enum bh_cls_bits), by the flag a class name shows. */
const CLASS_FLAG_ENUMERATORS: Readonly<Record<ClassFlag, string>> = {
  Sync: 'BH_CLS_SYNC',
  Metadata: 'BH_CLS_META',
  ForcedUnitAccess: 'BH_CLS_FUA',
  Priority: 'BH_CLS_PRIO',
  ReadAhead: 'BH_CLS_RAHEAD',
  Background: 'BH_CLS_BACKGROUND',
  Preflush: 'BH_CLS_PREFLUSH',
};

/**
 * Reads the ABI of the object at `path` (its BTF, globals and maps: nothing reaches the kernel).
 * Throws CollectorError naming every struct, field, enum or global that is not as the agent reads it.
 */
export function readKernelAbi(path: string): KernelAbi {
  let btf: KernelBtf | undefined;
  let object: BpfObject | undefined;
  try {
    btf = loadKernelBtf(path);
    object = openObject(path, { logLevel: 'quiet' });
  } catch (err) {
    btf?.close();
    throw new CollectorError(`reading the kernel ABI (BTF) of ${path} failed: ${errorText(err)}`, err);
  }
  try {
    const problems: string[] = [];
    const abi = resolveAbi(path, btf, object, problems);
    if (problems.length > 0 || !abi) {
      throw new CollectorError(
        `kernel object ${path} does not lay out its records as this agent reads them: ${problems.join('; ')}. Rebuild bpf/ and the agent together (./bootstrap setup)`,
      );
    }
    return abi;
  } finally {
    object.close();
    btf.close();
  }
}

/** Lays out `struct` from its BTF, checking each field the agent reads; problems are appended. */
export function resolveRecord<F extends string>(
  struct: string,
  fields: Readonly<Record<F, FieldKind>>,
  have: StructLayout | undefined,
  problems: string[],
): RecordLayout<F> | undefined {
  if (!have) {
    problems.push(`struct ${struct} is missing`);
    return undefined;
  }
  const at: Partial<Record<F, number>> = {};
  const len: Partial<Record<F, number>> = {};
  let ok = true;
  for (const [field, kind] of Object.entries(fields) as [F, FieldKind][]) {
    const m = have.members.find((x) => x.name === field);
    const problem = !m ? `struct ${struct} has no field ${field}` : fieldProblem(struct, field, kind, m.offset, m.size, have.size);
    if (problem || !m) {
      problems.push(problem ?? `struct ${struct} has no field ${field}`);
      ok = false;
      continue;
    }
    at[field] = m.offset;
    len[field] = m.size;
  }
  return ok ? { size: have.size, at: at as Record<F, number>, len: len as Record<F, number> } : undefined;
}

function fieldProblem(
  struct: string,
  field: string,
  kind: FieldKind,
  offset: number,
  size: number,
  structSize: number,
): string | undefined {
  const width = WIDTH[kind];
  const where = `struct ${struct} field ${field}`;
  if (offset < 0 || size <= 0 || offset + size > structSize) return `${where} has no fixed place in the struct`;
  if (width !== undefined && size !== width) return `${where} is ${size} bytes; the agent reads it as ${kind} (${width} bytes)`;
  if (kind === 'u64[]' && size % 8 !== 0) return `${where} is ${size} bytes; the agent reads it as an array of u64`;
  if (width !== undefined && offset % width !== 0) return `${where} is at byte ${offset}, not aligned for ${kind}`;
  return undefined;
}

function resolveAbi(path: string, btf: KernelBtf, object: BpfObject, problems: string[]): KernelAbi | undefined {
  const records: Partial<Record<RecordName, RecordLayout>> = {};
  for (const [struct, fields] of Object.entries(RECORD_FIELDS) as [RecordName, Record<string, FieldKind>][]) {
    const r = resolveRecord(struct, fields, btf.structLayout(struct), problems);
    if (r) records[struct] = r;
  }
  /** A reader of one enum's values: each value it cannot give is a problem, named. */
  const enumOf = (enumName: string): ((name: string) => number) => {
    const e = btf.enumValues(enumName);
    if (!e) problems.push(`enum ${enumName} is missing (blkheat.h's struct bh_btf_enums must use it)`);
    return (name) => {
      const v = e?.get(name);
      if (e && v === undefined) problems.push(`enum ${enumName} has no ${name}`);
      return v ?? 0;
    };
  };
  const globals = new Map(object.globals().map((g) => [g.name, g.size]));
  const maps = new Map(object.maps().map((m) => [m.name, m.maxEntries]));
  const globalSize = (name: string): number => {
    const size = globals.get(name);
    if (size === undefined) problems.push(`global ${name} is missing`);
    return size ?? 0;
  };
  const mapEntries = (name: string): number => {
    const entries = maps.get(name);
    if (entries === undefined) problems.push(`map ${name} is missing`);
    return entries ?? 0;
  };
  const cls = enumOf('bh_cls_bits');
  const sample = enumOf('bh_sample_flags');
  const classBits: ClassBits = {
    opMask: cls('BH_CLS_OP_MASK'),
    flags: Object.fromEntries(CLASS_FLAGS.map((f) => [f, cls(CLASS_FLAG_ENUMERATORS[f])])) as Record<ClassFlag, number>,
    nostat: cls('BH_CLS_NOSTAT'),
  };
  const sampleFlags = {
    outlier: sample('BH_SAMPLE_OUTLIER'),
    queueKnown: sample('BH_SAMPLE_QUEUE_KNOWN'),
    submitterKnown: sample('BH_SAMPLE_SUBMITTER_KNOWN'),
    submitKnown: sample('BH_SAMPLE_SUBMIT_KNOWN'),
  };
  const claimBusy = BigInt(enumOf('bh_claim')('BH_CLAIM_BUSY'));
  const noOp = enumOf('bh_no_op')('BH_NO_OP');
  const sizes = {
    maxBounds: globalSize('bounds_ns') / 8,
    opGroupTableSize: globalSize('op_group'),
    inflightMax: mapEntries('inflight_list'),
    budgetSlots: mapEntries('budget'),
  };
  const bucketTableSize = globalSize('bucket_first');
  const clsTableEntries = globalSize('cls_flag_table') / 2;
  const bucketSplitBits = Math.log2(bucketTableSize / 64);
  const clsFlagTableBits = Math.log2(clsTableEntries);
  if (!Number.isInteger(bucketSplitBits))
    problems.push(`global bucket_first is ${bucketTableSize} bytes: not 64 powers of two of 2^n parts`);
  if (!Number.isInteger(clsFlagTableBits)) problems.push(`global cls_flag_table holds ${clsTableEntries} entries: not a power of two`);
  if (problems.length > 0) return undefined;
  const r = records as KernelRecords;
  const groups = r.bh_disk_count.len.n / 8;
  if (groups !== OP_GROUPS.length)
    problems.push(`struct bh_disk_count field n counts ${groups} op groups; the agent has ${OP_GROUPS.length} (${OP_GROUPS.join(', ')})`);
  if (r.bh_sample.len.comm !== r.bh_inflight_io.len.comm)
    problems.push('struct bh_sample and struct bh_inflight_io hold comm at different lengths');
  for (const phase of ['queue', 'submit', 'total'] as const)
    if (r.bh_hist.len.device !== r.bh_hist.len[phase]) problems.push(`struct bh_hist fields device and ${phase} differ in length`);
  if (problems.length > 0) return undefined;
  return {
    path,
    records: r,
    nrBuckets: r.bh_hist.len.device / 8,
    nrStatus: r.bh_hist.len.errors / 8,
    ...sizes,
    bucketTableSize,
    bucketSplitBits,
    clsFlagTableBits,
    diskCountSlots: r.bh_disk_counts.len.e / r.bh_disk_count.size,
    classBits,
    sampleFlags,
    claimBusy,
    noOp,
  };
}

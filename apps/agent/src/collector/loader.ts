/**
 * Loading blkheat's kernel object: the object built for the bucket schema, its knobs set, the
 * hook flavour that loads on this kernel (tp_btf, falling back to raw_tp), the request-based
 * disks' programs attached, and its maps' layouts checked against what the agent decodes.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BpfError, openObject, possibleCpus, TRACING_PRIVILEGE, type BpfMap, type BpfObject, type Link } from '@blkheat/bpf-loader';
import { BUCKET_SCHEMA, OP_GROUPS, type BucketSchema } from '@blkheat/shared-types';
import { kernelBucketKnobs, type KernelBucketKnobs } from './abi/bucket-table.js';
import type { ClassNamer } from './decode/classes.js';
import { CollectorError, errorText } from './errors.js';
import { HIST_TABLE_MAPS } from './decode/harvest.js';
import { INFLIGHT_PROGRAM } from './decode/inflight.js';
import type { KernelFacts } from './host/kernel-facts.js';
import type { KernelAbi } from './abi/kernel-abi.js';
import { u32 } from './abi/layout.js';
import { requestBitsKnobs, type RequestBitsKnobs } from './abi/request-bits.js';
import type { CollectorOptions } from './types.js';

/**
 * The object bpf/Makefile builds for each bucket schema scale: blkheat.h's BH_SCHEMA sizes its
 * histograms' bucket arrays, and the agent reads those sizes from the object (abi/kernel-abi.ts).
 */
const OBJECT_FILES: Readonly<Record<number, string>> = { 2: 'blkheat.bpf.o', 3: 'blkheat_s3.bpf.o' };

/** Path of the compiled kernel object for a bucket schema; BLKHEAT_BPF_OBJECT overrides it. */
export function defaultObjectPath(schema: BucketSchema = BUCKET_SCHEMA): string {
  const file = OBJECT_FILES[schema.scale];
  if (file === undefined)
    throw new CollectorError(`no kernel object for bucket schema scale ${schema.scale} (built: ${Object.keys(OBJECT_FILES).join(', ')})`);
  return process.env.BLKHEAT_BPF_OBJECT ?? fileURLToPath(new URL(`../../../../bpf/build/${file}`, import.meta.url));
}

export type Flavour = 'tp_btf' | 'raw_tp';

export interface Loaded {
  readonly object: BpfObject;
  readonly links: Link[];
  readonly flavour: Flavour;
  /** Every program loaded for the hooks (for run-time statistics), attached or not. */
  readonly programs: string[];
  /** The bio-based disks' programs: attached once such a disk is there to trace (see syncBioHooks). */
  readonly bioPrograms: string[];
  /** Request-based I/O is timed from its bio's submission (submit wait and total). */
  readonly submitPhase: boolean;
  /** The wbt_events map is filled (wbt_timer is attached). */
  readonly wbtEvents: boolean;
}

/** What loading needs to know of the collector being started. */
export interface LoadRequest {
  readonly options: CollectorOptions;
  readonly schema: BucketSchema;
  /** The object's records and sizes, read from it before loading (readKernelAbi). */
  readonly abi: KernelAbi;
  /** Sampled records wanted (samples_enabled). */
  readonly samples: boolean;
  /** Only the disks in the disk_filter map are traced (filter_disks). */
  readonly filterDisks: boolean;
  /** Names classes and owns the op -> diskstats group rule (op_group). */
  readonly namer: ClassNamer;
  readonly log: (line: string) => void;
}

/** The object to load for `schema`, present (readKernelAbi reads it before loadObject loads it). */
export function objectPathFor(schema: BucketSchema): string {
  const path = defaultObjectPath(schema);
  if (!existsSync(path)) throw new CollectorError(`kernel object ${path} is missing: build it first (make -C bpf, or ./bootstrap setup)`);
  return path;
}

export async function loadObject(facts: KernelFacts, req: LoadRequest): Promise<Loaded> {
  const path = req.abi.path;
  // Knobs that do not depend on the hook flavour: a schema or a kernel they cannot express is
  // refused here, before any flavour is tried.
  const knobs: Knobs = {
    buckets: kernelBucketKnobs(req.schema, req.abi),
    requestBits: requestBitsKnobs(facts, req.abi),
    opGroup: opGroupTable(req.namer, req.abi.opGroupTableSize),
  };
  const want = req.options.hooks ?? 'auto';
  const flavours: Flavour[] = want === 'raw_tp' ? ['raw_tp'] : want === 'tp_btf' ? ['tp_btf'] : ['tp_btf', 'raw_tp'];
  let firstError: unknown;
  for (const flavour of flavours) {
    try {
      return await tryLoad(path, flavour, facts, req, knobs);
    } catch (err) {
      if (isPermissionError(err)) throw describeLoadError(err);
      firstError ??= err;
      if (flavour !== flavours[flavours.length - 1]) req.log(`${flavour} hooks failed (${errorText(err)}); trying raw_tp`);
    }
  }
  throw describeLoadError(firstError);
}

interface Knobs {
  readonly buckets: KernelBucketKnobs;
  readonly requestBits: RequestBitsKnobs;
  readonly opGroup: Buffer;
}

async function tryLoad(path: string, flavour: Flavour, facts: KernelFacts, req: LoadRequest, knobs: Knobs): Promise<Loaded> {
  const object = openObject(path, {
    ...(req.options.btf ? { btfCustomPath: req.options.btf } : {}),
    logLevel: req.options.onLog ? 'info' : 'quiet',
    ...(req.options.onLog ? { onLog: (_level: string, line: string) => req.log(line.trimEnd()) } : {}),
  });
  try {
    const submitPhase = req.options.submitPhase !== false && facts.hasSubmitHooks;
    if (req.options.submitPhase !== false && !submitPhase)
      req.log("this kernel's block_getrq/block_split/bio merge tracepoints do not pass the bio first (before 5.11): no submit wait");
    const { request, bio } = selectPrograms(flavour, facts, submitPhase);
    const programs = [...request, ...bio];
    const selected = new Set(facts.hasInflightScan ? [...programs, INFLIGHT_PROGRAM] : programs);
    for (const p of object.programs()) object.setAutoload(p.name, selected.has(p.name));

    object.setGlobal('bounds_ns', knobs.buckets.bounds);
    object.setGlobal('bucket_first', knobs.buckets.table);
    object.setGlobal('kernel_times', Buffer.from([req.options.issueTimestamps === 'kernel' ? 1 : 0]));
    object.setGlobal('samples_enabled', Buffer.from([req.samples ? 1 : 0]));
    object.setGlobal('submit_phase', Buffer.from([submitPhase ? 1 : 0]));
    object.setGlobal('rq_arg_idx', u32(facts.rqLayout === 'queue-first' ? 1 : 0));
    object.setGlobal('filter_disks', Buffer.from([req.filterDisks ? 1 : 0]));
    object.setGlobal('op_group', knobs.opGroup);
    object.setGlobal('req_bits', knobs.requestBits.reqBits);
    object.setGlobal('cls_flag_table', knobs.requestBits.clsFlagTable);
    object.setGlobal('shared_slot_dev', u32(req.options.sharedSlotDev ?? 0));
    sizeHistTable(object, possibleCpus(), req.options.histTableEntries);
    await object.load();
    const links = attachAll(object, request);
    req.log(`attached ${request.length} ${flavour} programs: ${request.join(', ')}`);
    if (!facts.hasWbtTimer) req.log('this kernel has no wbt_timer tracepoint (no CONFIG_BLK_WBT): no writeback throttling mark');
    return { object, links, flavour, programs, bioPrograms: bio, submitPhase, wbtEvents: facts.hasWbtTimer };
  } catch (err) {
    object.close();
    throw err;
  }
}

/**
 * The kernel's op_group[] knob: each req_op value's /proc/diskstats group, as an index into
 * OP_GROUPS. The namer is the one owner of that rule; the kernel only looks it up (for classes
 * diskstats counts: the kernel checks BH_CLS_NOSTAT itself).
 */
export function opGroupTable(namer: ClassNamer, size: number): Buffer {
  const table = Buffer.alloc(size);
  for (let op = 0; op < size; op++) {
    const group = namer.group(op);
    if (group === undefined) throw new CollectorError(`no /proc/diskstats group for req_op ${op}`);
    table[op] = OP_GROUPS.indexOf(group);
  }
  return table;
}

/**
 * Gives each possible CPU its partition of the histogram table (see decode/harvest.ts): the object
 * declares one partition (BH_HIST_PER_CPU in blkheat.h, its one owner) as the maps' size. A test
 * may ask for fewer entries in all (`entries`).
 */
function sizeHistTable(object: BpfObject, cpus: number, entries?: number): void {
  for (const name of HIST_TABLE_MAPS) {
    const spec = object.maps().find((m) => m.name === name);
    if (!spec) throw new CollectorError(`kernel object has no map ${name}: rebuild bpf/ and the agent together`);
    object.setMaxEntries(name, entries ?? spec.maxEntries * cpus);
  }
}

/**
 * Attaches the bio-based disks' programs (once such a disk is there to trace: the collector's
 * syncBioHooks); returns how many. All or none: when one fails, the others are detached and
 * it throws.
 */
export function attachBioPrograms(loaded: Loaded): number {
  const links = attachAll(loaded.object, loaded.bioPrograms);
  loaded.links.push(...links);
  return links.length;
}

/** Attaches every named program, all or none: when one fails, those attached are closed again and it throws. */
function attachAll(object: BpfObject, names: readonly string[]): Link[] {
  const links: Link[] = [];
  try {
    for (const name of names) links.push(object.attach(name));
  } catch (err) {
    for (const link of links) link.close();
    throw err;
  }
  return links;
}

/** Run time and recursion misses of every program loaded, summed (what a closed object cannot tell is left out). */
export function programRunStats(loaded: Loaded): { runTimeNs: number; recursionMisses: number } {
  let runTimeNs = 0;
  let recursionMisses = 0;
  for (const name of loaded.programs) {
    try {
      const s = loaded.object.program(name).stats();
      runTimeNs += s.runTimeNs;
      recursionMisses += s.recursionMisses;
    } catch {
      // A closed object has no stats; report what we have.
    }
  }
  return { runTimeNs, recursionMisses };
}

/**
 * Each map holds the records the agent decodes from it (the object's own structs,
 * abi/kernel-abi.ts): a map declared with another key or value type is refused, naming it.
 */
export function checkLayout(object: BpfObject, abi: KernelAbi, samples: boolean): void {
  const r = abi.records;
  const expect = (map: BpfMap, key: number, value: number, what: string): void => {
    if (map.keySize !== key || map.valueSize !== value) {
      throw new CollectorError(
        `kernel object map ${map.name} holds ${map.keySize}-byte keys and ${map.valueSize}-byte values; the agent reads ${key}-byte keys and ${what} (${value} bytes): rebuild bpf/ and the agent together`,
      );
    }
  };
  expect(object.map('hists'), 4, r.bh_hist.size, 'struct bh_hist');
  expect(object.map('hist_keys'), 4, r.bh_hist_key.size, 'struct bh_hist_key');
  expect(object.map('hist_claims'), 4, 8, 'u64 claims');
  expect(object.map('counters'), 4, r.bh_counters.size, 'struct bh_counters');
  expect(object.map('settings'), 4, r.bh_settings.size, 'struct bh_settings');
  expect(object.map('budget'), 4, r.bh_budget.size, 'struct bh_budget');
  expect(object.map('rq_slots'), 4, r.bh_rq_slot.size, 'struct bh_rq_slot');
  expect(object.map('inflight_summary'), 4, r.bh_inflight_summary.size, 'struct bh_inflight_summary');
  expect(object.map('inflight_list'), 4, r.bh_inflight_io.size, 'struct bh_inflight_io');
  expect(object.map('inflight_disks'), 4, r.bh_inflight_disk.size, 'struct bh_inflight_disk');
  expect(object.map('inflight_kept'), 8, r.bh_inflight_kept.size, 'struct bh_inflight_kept');
  expect(object.map('disk_counts'), 4, r.bh_disk_counts.size, 'struct bh_disk_counts');
  if (samples) {
    const ring = object.maps().find((m) => m.name === 'samples');
    if (!ring) throw new CollectorError('kernel object has no samples ring buffer');
  }
}

/**
 * The programs for a hook flavour on this kernel: request-based disks' (always attached) and
 * bio-based disks'. With the submit phase, block_bio_queue and block_bio_complete (which time a
 * bio-based disk's I/O) are request-based disks' hooks too, with block_getrq, block_split and the
 * bio merges.
 */
export function selectPrograms(flavour: Flavour, facts: KernelFacts, submitPhase: boolean): { request: string[]; bio: string[] } {
  const sfx = flavour === 'tp_btf' ? 'btf' : 'raw';
  const q = (layout: KernelFacts['rqLayout']): string => (flavour === 'tp_btf' && layout === 'queue-first' ? '_q' : '');
  const rq = [`bh_rq_issue_${sfx}${q(facts.rqLayout)}`, `bh_rq_complete_${sfx}`, `bh_rq_requeue_${sfx}${q(facts.rqLayout)}`];
  const bioQueue = `bh_bio_queue_${sfx}${q(facts.bioQueueLayout)}`;
  const bioComplete = `bh_bio_complete_${sfx}`;
  // wbt's windows (its mark, DiskFrame.wbt), where the kernel has wbt.
  const wbt = facts.hasWbtTimer ? [`bh_wbt_timer_${sfx}`] : [];
  if (!submitPhase) return { request: [...rq, ...wbt], bio: [bioQueue, bioComplete] };
  // block_bio_complete sees a REQ_NOWAIT bio turned away before its request (BLK_STS_AGAIN).
  const submit = ['getrq', 'split', 'backmerge', 'frontmerge'].map((hook) => `bh_bio_${hook}_${sfx}`);
  return { request: [...rq, bioQueue, bioComplete, ...submit, ...wbt], bio: [] };
}

/** EPERM, or an EACCES that is about privilege: a verifier rejection is EACCES too, and must not read as "run as root". */
function isPermissionError(err: unknown): boolean {
  return err instanceof BpfError && (err.code === 'EPERM' || (err.code === 'EACCES' && !err.message.includes('verifier')));
}

function describeLoadError(err: unknown): CollectorError {
  if (isPermissionError(err)) {
    return new CollectorError(
      `the kernel refused to load BPF programs (${errorText(err)}). blkheat must run as root (${TRACING_PRIVILEGE}), and kernel lockdown or kernel.unprivileged_bpf_disabled policies must allow BPF`,
      err,
    );
  }
  return new CollectorError(`loading blkheat's kernel programs failed: ${errorText(err)}`, err);
}

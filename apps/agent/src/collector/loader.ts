/**
 * Loading blkheat's kernel object: the object built for the bucket schema, its knobs set, the
 * hook flavour that loads on this kernel (tp_btf, falling back to raw_tp), the request-based
 * disks' programs attached, and its maps' layouts checked against what the agent decodes.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  BpfError,
  loadKernelBtf,
  openObject,
  possibleCpus,
  TRACING_PRIVILEGE,
  type BpfMap,
  type BpfObject,
  type KernelBtf,
  type Link,
} from '@blkheat/bpf-loader';
import { BUCKET_SCHEMA, OP_GROUPS, type BucketSchema } from '@blkheat/shared-types';
import { kernelBucketKnobs } from './bucket-table.js';
import type { ClassNamer } from './classes.js';
import { CollectorError, errorText } from './errors.js';
import { HIST_TABLE_MAPS } from './harvest.js';
import { INFLIGHT_PROGRAM } from './inflight.js';
import type { KernelFacts } from './kernel-facts.js';
import {
  BUDGET_SIZE,
  COUNTERS_SIZE,
  DISK_COUNTS_SIZE,
  HIST_CLAIM_SIZE,
  HIST_KEY_SIZE,
  INFLIGHT_DISK_SIZE,
  INFLIGHT_IO_SIZE,
  INFLIGHT_KEPT_SIZE,
  INFLIGHT_SUMMARY_SIZE,
  OP_GROUP_TABLE_SIZE,
  RQ_SLOT_SIZE,
  schemaLayout,
  SETTINGS_SIZE,
  type SchemaLayout,
  u32,
} from './layout.js';
import { expectedRecords, recordMismatches } from './record-layouts.js';
import { requestBitsKnobs } from './request-bits.js';
import type { CollectorOptions } from './types.js';

/** Path of the compiled kernel object for a bucket schema; BLKHEAT_BPF_OBJECT overrides it. */
export function defaultObjectPath(schema: BucketSchema = BUCKET_SCHEMA): string {
  const file = schemaLayout(schema.scale).objectFile;
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
}

/** What loading needs to know of the collector being started. */
export interface LoadRequest {
  readonly options: CollectorOptions;
  readonly schema: BucketSchema;
  readonly layout: SchemaLayout;
  /** Sampled records wanted (samples_enabled). */
  readonly samples: boolean;
  /** Only the disks in the disk_filter map are traced (filter_disks). */
  readonly filterDisks: boolean;
  /** Names classes and owns the op -> diskstats group rule (op_group). */
  readonly namer: ClassNamer;
  readonly log: (line: string) => void;
}

export async function loadObject(facts: KernelFacts, req: LoadRequest): Promise<Loaded> {
  const path = defaultObjectPath(req.schema);
  if (!existsSync(path)) throw new CollectorError(`kernel object ${path} is missing: build it first (make -C bpf, or ./bootstrap setup)`);
  checkRecords(path, req.layout);
  const want = req.options.hooks ?? 'auto';
  const flavours: Flavour[] = want === 'raw_tp' ? ['raw_tp'] : want === 'tp_btf' ? ['tp_btf'] : ['tp_btf', 'raw_tp'];
  let firstError: unknown;
  for (const flavour of flavours) {
    try {
      return await tryLoad(path, flavour, facts, req);
    } catch (err) {
      if (isPermissionError(err)) throw describeLoadError(err);
      firstError ??= err;
      if (flavour !== flavours[flavours.length - 1]) req.log(`${flavour} hooks failed (${errorText(err)}); trying raw_tp`);
    }
  }
  throw describeLoadError(firstError);
}

async function tryLoad(path: string, flavour: Flavour, facts: KernelFacts, req: LoadRequest): Promise<Loaded> {
  const object = openObject(path, {
    ...(req.options.btf ? { btfCustomPath: req.options.btf } : {}),
    logLevel: req.options.onLog ? 'info' : 'quiet',
    ...(req.options.onLog ? { onLog: (_level: string, line: string) => req.log(line.trimEnd()) } : {}),
  });
  try {
    const { request, bio } = selectPrograms(flavour, facts);
    const programs = [...request, ...bio];
    const selected = new Set(facts.hasInflightScan ? [...programs, INFLIGHT_PROGRAM] : programs);
    for (const p of object.programs()) object.setAutoload(p.name, selected.has(p.name));

    const buckets = kernelBucketKnobs(req.schema, req.layout);
    object.setGlobal('bounds_ns', buckets.bounds);
    object.setGlobal('bucket_first', buckets.table);
    object.setGlobal('kernel_times', Buffer.from([req.options.issueTimestamps === 'kernel' ? 1 : 0]));
    object.setGlobal('samples_enabled', Buffer.from([req.samples ? 1 : 0]));
    object.setGlobal('rq_arg_idx', u32(facts.rqLayout === 'queue-first' ? 1 : 0));
    object.setGlobal('filter_disks', Buffer.from([req.filterDisks ? 1 : 0]));
    object.setGlobal('op_group', opGroupTable(req.namer));
    const requestBits = requestBitsKnobs(facts);
    object.setGlobal('req_bits', requestBits.reqBits);
    object.setGlobal('cls_flag_table', requestBits.clsFlagTable);
    object.setGlobal('shared_slot_dev', u32(req.options.sharedSlotDev ?? 0));
    sizeHistTable(object, possibleCpus(), req.options.histTableEntries);
    await object.load();
    const links = attachAll(object, request);
    req.log(`attached ${request.length} ${flavour} programs: ${request.join(', ')}`);
    return { object, links, flavour, programs, bioPrograms: bio };
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
export function opGroupTable(namer: ClassNamer): Buffer {
  const table = Buffer.alloc(OP_GROUP_TABLE_SIZE);
  for (let op = 0; op < OP_GROUP_TABLE_SIZE; op++) {
    const group = namer.group(op);
    if (group === undefined) throw new CollectorError(`no /proc/diskstats group for req_op ${op}`);
    table[op] = OP_GROUPS.indexOf(group);
  }
  return table;
}

/**
 * Gives each possible CPU its partition of the histogram table (see harvest.ts): the object
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

/** The object's own BTF lays out every record as this agent reads it (record-layouts.ts); else a clear refusal. */
export function checkRecords(path: string, layout: SchemaLayout): void {
  let btf: KernelBtf;
  try {
    btf = loadKernelBtf(path);
  } catch (err) {
    throw new CollectorError(`reading the record layouts (BTF) of ${path} failed: ${errorText(err)}`, err);
  }
  try {
    const problems = recordMismatches(expectedRecords(layout), (struct) => btf.structLayout(struct));
    if (problems.length > 0) {
      throw new CollectorError(
        `kernel object ${path} does not lay out its records as this agent reads them: ${problems.join('; ')}. Rebuild bpf/ and the agent together (./bootstrap setup)`,
      );
    }
  } finally {
    btf.close();
  }
}

/** The maps' key and value sizes are the ones this agent decodes; a mismatched build is refused. */
export function checkLayout(object: BpfObject, layout: SchemaLayout, samples: boolean): void {
  const expect = (map: BpfMap, key: number, value: number): void => {
    if (map.keySize !== key || map.valueSize !== value) {
      throw new CollectorError(
        `kernel object layout mismatch in map ${map.name} (key ${map.keySize}/${key}, value ${map.valueSize}/${value} bytes): rebuild bpf/ and the agent together`,
      );
    }
  };
  expect(object.map('hists'), 4, layout.histValueSize);
  expect(object.map('hist_keys'), 4, HIST_KEY_SIZE);
  expect(object.map('hist_claims'), 4, HIST_CLAIM_SIZE);
  expect(object.map('counters'), 4, COUNTERS_SIZE);
  expect(object.map('settings'), 4, SETTINGS_SIZE);
  expect(object.map('budget'), 4, BUDGET_SIZE);
  expect(object.map('rq_slots'), 4, RQ_SLOT_SIZE);
  expect(object.map('inflight_summary'), 4, INFLIGHT_SUMMARY_SIZE);
  expect(object.map('inflight_list'), 4, INFLIGHT_IO_SIZE);
  expect(object.map('inflight_disks'), 4, INFLIGHT_DISK_SIZE);
  expect(object.map('inflight_kept'), 8, INFLIGHT_KEPT_SIZE);
  expect(object.map('disk_counts'), 4, DISK_COUNTS_SIZE);
  if (samples) {
    const ring = object.maps().find((m) => m.name === 'samples');
    if (!ring) throw new CollectorError('kernel object has no samples ring buffer');
  }
}

/** The programs for a hook flavour on this kernel: request-based disks' (always attached) and bio-based disks'. */
export function selectPrograms(flavour: Flavour, facts: KernelFacts): { request: string[]; bio: string[] } {
  const sfx = flavour === 'tp_btf' ? 'btf' : 'raw';
  const q = (layout: KernelFacts['rqLayout']): string => (flavour === 'tp_btf' && layout === 'queue-first' ? '_q' : '');
  return {
    request: [`bh_rq_issue_${sfx}${q(facts.rqLayout)}`, `bh_rq_complete_${sfx}`, `bh_rq_requeue_${sfx}${q(facts.rqLayout)}`],
    bio: [`bh_bio_queue_${sfx}${q(facts.bioQueueLayout)}`, `bh_bio_complete_${sfx}`],
  };
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

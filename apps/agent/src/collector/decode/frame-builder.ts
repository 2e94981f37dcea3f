/**
 * collector/decode/ turns what the kernel programs leave in their maps and ring buffer into the
 * wire's shapes: the histogram harvest into Frames, sampled records into IoSamples, the in-flight
 * scan into InflightState, our running counts against /proc/diskstats into untimed I/Os, class
 * codes into class names; and it writes the kernel's per-second knobs (settings, sample budget).
 * It reads records through abi/ and names disks, cgroups and seconds through host/.
 *
 * This file: turns one second's kernel histogram entries (per disk x class code, summed over CPUs)
 * into a Frame: disks by name, partitions rolled up into their disk unless asked otherwise,
 * classes by name, histograms sparse. Kernel bucket k is dense bucket k of the schema the kernel
 * object was built for (FrameOptions.schema).
 */
import {
  addCgroup,
  BUCKET_SCHEMA,
  bucketCount,
  type BucketSchema,
  cgroupSeries,
  compareDev,
  addPhases,
  newPhaseAcc,
  type PhaseAcc,
  phasesOf,
  type PhaseSeries,
  toSparse,
  type ClassSeries,
  type DiskFrame,
  type Frame,
  type InflightState,
  type IoPressure,
  type CgroupPressure,
  mostStalled,
  type OpGroup,
  type QueueSetting,
  SUBMIT_CAUSES,
  type SubmitCause,
} from '@blkheat/shared-types';
import type { ClassNamer } from './classes.js';
import { statusName } from '../abi/block-status.js';
import type { DeviceRegistry } from '../host/devices.js';
import { noCauses, type HistValue } from '../abi/layout.js';

export interface SlotEntry {
  readonly dev: number;
  readonly cls: number;
  /** Size class (smallest s with bytes <= 2^s; 0 = no data). */
  readonly size: number;
  /** Path of the cgroup charged (see host/cgroups.ts). */
  readonly cgroup: string;
  readonly value: HistValue;
}

export interface FrameOptions {
  /** Keep partitions as their own disks. */
  readonly partitions: boolean;
  /** Only these disks (dev_t after roll-up); undefined = all. */
  readonly only?: ReadonlySet<number>;
  /** The bucket schema of the kernel's histograms (default BUCKET_SCHEMA, scale 2). */
  readonly schema?: BucketSchema;
  /** Request-based disks' I/O is timed from its bio's submission: their classes carry w, t and wu. */
  readonly submitPhase?: boolean;
}

/** What a second carries besides its histogram entries; keyed by shown disk dev_t. */
export interface FrameExtras {
  /** Records over the sample budget, dropped by the agent. */
  readonly extraDropped?: ReadonlyMap<number, number> | undefined;
  /** Untimed I/Os found (see untimed.ts). */
  readonly untimed?: ReadonlyMap<number, Readonly<Partial<Record<OpGroup, number>>>> | undefined;
  readonly inflight?: ReadonlyMap<number, InflightState> | undefined;
  /** The host's I/O pressure in the second (host/pressure.ts): the frame's `psi`. */
  readonly psi?: IoPressure | undefined;
  /** Cgroups' I/O pressure in the second (host/cgroup-pressure.ts): the frame's `cg_psi`. */
  readonly cgPsi?: readonly CgroupPressure[] | undefined;
  /** wbt's windows that held writes back since the last frame, by disk dev_t (decode/wbt-events.ts). */
  readonly wbt?: ReadonlyMap<number, number> | undefined;
  /** Queue settings changed since the last frame, by disk dev_t (host/queue-settings.ts). */
  readonly queueChanged?: ReadonlyMap<number, readonly QueueSetting[]> | undefined;
  /** Tasks the in-flight scan found asleep for a tag of the disk's queue (decode/inflight.ts): the tags mark. */
  readonly tagSleepers?: ReadonlyMap<number, number> | undefined;
}

interface ClassAcc {
  n: number;
  readonly d: Float64Array;
  readonly q: Float64Array;
  /** Submit wait and total (request-based disks); wu: I/Os whose submission was not seen. */
  readonly w: Float64Array;
  readonly t: Float64Array;
  wu: number;
  readonly e: Map<string, number>;
  readonly pt: boolean;
  /** Per size class: count and phases (the size x latency joint). */
  readonly sizes: Map<number, PhaseAcc>;
  /** Bytes of the counted I/Os. */
  bytes: number;
}

interface DiskAcc {
  readonly dev: string;
  readonly name: string;
  /** Its classes carry the submit phase (a request-based disk, with the submit phase on). */
  readonly submitPhase: boolean;
  readonly classes: Map<string, ClassAcc>;
  /** I/Os by the cause of submit wait their bio met (DiskFrame.causes). */
  readonly causes: Record<SubmitCause, number>;
  wbt: number;
  /** The in-flight scan found tasks asleep for a tag of the disk's queue. */
  tagsFull: boolean;
  queueChanged: readonly QueueSetting[] | undefined;
  dropped: number;
  missed: number;
  requeues: number;
  untimed: Readonly<Partial<Record<OpGroup, number>>> | undefined;
  inflight: InflightState | undefined;
  /** By cgroup: I/Os of classes diskstats counts, and their phases. */
  readonly cgroups: Map<string, PhaseAcc>;
}

const NOTHING_IN_FLIGHT: InflightState = { n: 0, oldest_ns: 0, ios: [] };

export function buildFrame(
  slot: number,
  entries: readonly SlotEntry[],
  devices: DeviceRegistry,
  namer: ClassNamer,
  options: FrameOptions,
  extras: FrameExtras = {},
): Frame {
  const buckets = bucketCount(options.schema ?? BUCKET_SCHEMA);
  const folded = (src: Float64Array): Float64Array => {
    const dst = new Float64Array(buckets);
    foldInto(dst, src);
    return dst;
  };
  const disks = new Map<number, DiskAcc>();
  const diskFor = (dev: number): DiskAcc | undefined => {
    const id = devices.resolve(dev);
    const key = options.partitions ? dev : id.wholeDev;
    if (options.only && !options.only.has(key)) return undefined;
    let acc = disks.get(key);
    if (!acc) {
      const shown = key === dev ? id : devices.resolve(key);
      acc = {
        dev: shown.dev,
        name: shown.name,
        submitPhase: options.submitPhase === true && shown.kind === 'request',
        classes: new Map(),
        causes: noCauses(),
        wbt: 0,
        tagsFull: false,
        queueChanged: undefined,
        dropped: 0,
        missed: 0,
        requeues: 0,
        untimed: undefined,
        inflight: undefined,
        cgroups: new Map(),
      };
      disks.set(key, acc);
    }
    return acc;
  };

  for (const e of entries) {
    const disk = diskFor(e.dev);
    if (!disk) continue;
    disk.dropped += e.value.dropped;
    disk.missed += e.value.missed;
    disk.requeues += e.value.requeues;
    for (const cause of SUBMIT_CAUSES) disk.causes[cause] += e.value.causes[cause];
    if (e.value.count === 0 && sum(e.value.device) === 0) continue;
    const name = namer.name(e.cls);
    let cls = disk.classes.get(name);
    if (!cls) {
      cls = {
        n: 0,
        d: new Float64Array(buckets),
        q: new Float64Array(buckets),
        w: new Float64Array(buckets),
        t: new Float64Array(buckets),
        wu: 0,
        e: new Map(),
        pt: namer.notCounted(e.cls),
        sizes: new Map(),
        bytes: 0,
      };
      disk.classes.set(name, cls);
    }
    cls.n += e.value.count;
    cls.bytes += e.value.bytes;
    foldInto(cls.d, e.value.device);
    foldInto(cls.q, e.value.queue);
    foldInto(cls.w, e.value.submit);
    foldInto(cls.t, e.value.total);
    cls.wu += e.value.submitUnknown;
    // The entry's phases once, for its size class and its cgroup (PhaseSeries: sizes and cgroups
    // carry what the class carries, so size x latency and the cgroup filter follow the phase).
    const phases: PhaseSeries = {
      d: toSparse(folded(e.value.device)),
      q: toSparse(folded(e.value.queue)),
      ...(disk.submitPhase
        ? {
            w: toSparse(folded(e.value.submit)),
            t: toSparse(folded(e.value.total)),
            ...(e.value.submitUnknown > 0 ? { wu: e.value.submitUnknown } : {}),
          }
        : {}),
    };
    let size = cls.sizes.get(e.size);
    if (!size) cls.sizes.set(e.size, (size = newPhaseAcc(buckets)));
    addPhases(size, e.value.count, phases);
    if (!cls.pt && e.value.count > 0) addCgroup(disk.cgroups, e.cgroup, e.value.count, buckets, phases);
    e.value.errors.forEach((v, status) => {
      if (v > 0) cls.e.set(statusName(status), (cls.e.get(statusName(status)) ?? 0) + v);
    });
  }
  /** Each value of a per-dev_t extra, given to its shown disk (if shown). */
  const toDisks = <V>(byDev: ReadonlyMap<number, V> | undefined, put: (disk: DiskAcc, v: V) => void): void => {
    for (const [dev, v] of byDev ?? []) {
      const disk = diskFor(dev);
      if (disk) put(disk, v);
    }
  };
  toDisks(extras.extraDropped, (disk, n) => (disk.dropped += n));
  toDisks(extras.untimed, (disk, found) => (disk.untimed = found));
  toDisks(extras.wbt, (disk, windows) => (disk.wbt += windows));
  toDisks(extras.queueChanged, (disk, changed) => (disk.queueChanged = changed));
  toDisks(extras.inflight, (disk, state) => (disk.inflight = state));
  toDisks(extras.tagSleepers, (disk, sleepers) => (disk.tagsFull ||= sleepers > 0));
  // The scan looked at every disk: one it found nothing in flight on says so (n 0), so that a
  // disk without `inflight` keeps meaning "not known" (a second closed without a scan).
  if (extras.inflight) for (const disk of disks.values()) disk.inflight ??= NOTHING_IN_FLIGHT;

  const out: DiskFrame[] = [];
  for (const disk of [...disks.values()].sort((a, b) => compareDev(a.dev, b.dev))) {
    const cls: ClassSeries[] = [...disk.classes.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([c, acc]) => ({
        c,
        n: acc.n,
        d: toSparse(acc.d),
        q: toSparse(acc.q),
        ...(disk.submitPhase ? { w: toSparse(acc.w), t: toSparse(acc.t), ...(acc.wu > 0 ? { wu: acc.wu } : {}) } : {}),
        ...(acc.e.size > 0 ? { e: Object.fromEntries([...acc.e.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) } : {}),
        ...(acc.pt ? { pt: true as const } : {}),
        b: acc.bytes,
        sz: [...acc.sizes.entries()].sort(([a], [b]) => a - b).map(([s, v]) => ({ s, n: v.n, ...phasesOf(v) })),
      }));
    const untimed = disk.untimed && Object.values(disk.untimed).some((v) => (v ?? 0) > 0) ? disk.untimed : undefined;
    const causes = SUBMIT_CAUSES.filter((c) => disk.causes[c] > 0);
    if (
      cls.length === 0 &&
      disk.dropped === 0 &&
      disk.missed === 0 &&
      disk.requeues === 0 &&
      causes.length === 0 &&
      disk.wbt === 0 &&
      !disk.tagsFull &&
      !disk.queueChanged &&
      !untimed &&
      !(disk.inflight && (disk.inflight.n > 0 || (disk.inflight.waiting ?? 0) > 0))
    )
      continue;
    out.push({
      dev: disk.dev,
      cls,
      ...(disk.dropped > 0 ? { dropped: disk.dropped } : {}),
      ...(disk.missed > 0 ? { missed: disk.missed } : {}),
      ...(disk.requeues > 0 ? { requeues: disk.requeues } : {}),
      ...(untimed ? { untimed } : {}),
      ...(disk.inflight ? { inflight: disk.inflight } : {}),
      ...(disk.cgroups.size > 0 ? { cg: cgroupSeries(disk.cgroups) } : {}),
      ...(causes.length > 0 ? { causes: Object.fromEntries(causes.map((c) => [c, disk.causes[c]])) } : {}),
      ...(disk.wbt > 0 ? { wbt: disk.wbt } : {}),
      ...(disk.tagsFull ? { tags_full: 1 } : {}),
      ...(disk.queueChanged ? { queue_changed: disk.queueChanged } : {}),
    });
  }
  const cgPsi = extras.cgPsi && extras.cgPsi.length > 0 ? mostStalled(new Map(extras.cgPsi.map((p) => [p.g, p]))) : undefined;
  return { ts: slot, step: 1, disks: out, ...(extras.psi ? { psi: extras.psi } : {}), ...(cgPsi ? { cg_psi: cgPsi } : {}) };
}

/** Kernel arrays are longer than the schema's bucket count; anything past its overflow bucket belongs in it. */
function foldInto(dst: Float64Array, src: Float64Array): void {
  const last = dst.length - 1;
  for (let b = 0; b < src.length; b++) {
    const v = src[b] as number;
    if (v === 0) continue;
    const i = b < last ? b : last;
    dst[i] = (dst[i] as number) + v;
  }
}

function sum(a: Float64Array): number {
  let s = 0;
  for (const v of a) s += v;
  return s;
}

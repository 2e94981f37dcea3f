/**
 * Frame arithmetic shared by the agent (history tiers, range answers) and the dashboard
 * (zooming out, summing a selected range): filtering by disk/class and merging frames into
 * coarser steps. Merging is exact: counts and histogram buckets add, nothing is re-binned.
 *
 * Merged frames are canonical: disks sorted by device number, classes by name, so two
 * different merge paths over the same seconds (e.g. 60 one-second frames, or six ten-second
 * frames) produce deep-equal results.
 */
import { type BucketSchema, BUCKET_SCHEMA, bucketCount } from './buckets.js';
import {
  CGROUP_OTHER,
  CGROUP_PSI_LISTED,
  type CgroupPressure,
  CGROUPS_LISTED,
  type CgroupSeries,
  type ClassSeries,
  type DiskFrame,
  type Frame,
  type InflightState,
  type PhaseSeries,
  type IoPressure,
  type OpGroup,
  joinQueueSettings,
  type QueueSetting,
  type SubmitCause,
} from './frame-model.js';
import { addPhaseAcc, addPhases, newPhaseAcc, type PhaseAcc, phasesOf } from './phase-acc.js';

/** Which disks ("MAJ:MIN") and classes to keep; an absent list keeps everything. */
export interface FrameFilter {
  readonly disks?: readonly string[] | undefined;
  readonly classes?: readonly string[] | undefined;
}

/** True when the filter keeps everything (so callers can skip copying). */
export function isPassThroughFilter(filter: FrameFilter): boolean {
  return filter.disks === undefined && filter.classes === undefined;
}

/**
 * The frame restricted to the filter's disks and classes. A disk left with no class is
 * dropped; the frame itself is always returned (an empty `disks` still says "this step was
 * recorded and had nothing of interest"). Per-disk `dropped`/`missed`/`untimed`/`cg`/`causes` are
 * kept as they are: they are not attributed to classes; so are the host's `psi` and the cgroups' `cg_psi` (no disk's).
 */
export function filterFrame(frame: Frame, filter: FrameFilter): Frame {
  if (isPassThroughFilter(filter)) return frame;
  const disks = filter.disks ? new Set(filter.disks) : undefined;
  const classes = filter.classes ? new Set(filter.classes) : undefined;
  const out: DiskFrame[] = [];
  for (const disk of frame.disks) {
    if (disks && !disks.has(disk.dev)) continue;
    if (!classes) {
      out.push(disk);
      continue;
    }
    const cls = disk.cls.filter((c) => classes.has(c.c));
    if (cls.length > 0) out.push({ ...disk, cls });
  }
  return {
    ts: frame.ts,
    step: frame.step,
    disks: out,
    ...(frame.psi ? { psi: frame.psi } : {}),
    ...(frame.cg_psi ? { cg_psi: frame.cg_psi } : {}),
  };
}

/** True when no disk had any I/O in the frame. */
export function isEmptyFrame(frame: Frame): boolean {
  return frame.disks.length === 0;
}

/** A device number split once (a fleet's disk list holds thousands: a sort splits each name once, not per comparison). */
interface DevKey {
  readonly dev: string;
  readonly maj: number | undefined;
  readonly min: number | undefined;
}

function devKey(dev: string): DevKey {
  const [maj, min] = dev.split(':').map(Number);
  return { dev, maj, min };
}

function compareDevKeys(a: DevKey, b: DevKey): number {
  if (a.maj !== undefined && b.maj !== undefined && a.min !== undefined && b.min !== undefined) {
    if (a.maj !== b.maj) return a.maj - b.maj;
    if (a.min !== b.min) return a.min - b.min;
  }
  return a.dev < b.dev ? -1 : a.dev > b.dev ? 1 : 0;
}

/** Orders "MAJ:MIN" device numbers numerically (8:2 before 8:10), other strings after. */
export function compareDev(a: string, b: string): number {
  return compareDevKeys(devKey(a), devKey(b));
}

/** `items` in compareDev order of `devOf(item)`, each device number split once (a new array). */
export function sortedByDev<T>(items: readonly T[], devOf: (item: T) => string): T[] {
  return items
    .map((item) => ({ item, key: devKey(devOf(item)) }))
    .sort((a, b) => compareDevKeys(a.key, b.key))
    .map((k) => k.item);
}

/** A class's phases (PhaseAcc: submit wait and total present once an added frame's class had them), and the rest of it. */
interface ClassAcc {
  readonly phases: PhaseAcc;
  e: Map<string, number> | undefined;
  pt: boolean;
  sz: Map<number, PhaseAcc> | undefined;
  b: number | undefined;
}

interface DiskAcc {
  readonly classes: Map<string, ClassAcc>;
  dropped: number | undefined;
  missed: number | undefined;
  requeues: number | undefined;
  untimed: Map<OpGroup, number> | undefined;
  inflight: InflightState | undefined;
  cg: Map<string, PhaseAcc> | undefined;
  causes: Map<SubmitCause, number> | undefined;
  wbt: number | undefined;
  tagsFull: number | undefined;
  queueChanged: QueueSetting[] | undefined;
}

/** Adds a frame's counts by key (untimed, causes, queue changes) into `into`, made on first use. */
function addCounts<K extends string>(into: Map<K, number> | undefined, counts: Readonly<Partial<Record<K, number>>>): Map<K, number> {
  const out = into ?? new Map<K, number>();
  for (const [key, v] of Object.entries(counts) as [K, number | undefined][]) if (v !== undefined) out.set(key, (out.get(key) ?? 0) + v);
  return out;
}

/** Counts by key as a frame carries them: keys in order. */
function sortedCounts<K extends string>(counts: Map<K, number>): Partial<Record<K, number>> {
  return Object.fromEntries([...counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) as Partial<Record<K, number>>;
}

/** Adds `n` I/Os with phases `h` to cgroup `g` of `into` (sums over `buckets` buckets). */
export function addCgroup(into: Map<string, PhaseAcc>, g: string, n: number, buckets: number, h: PhaseSeries): void {
  let acc = into.get(g);
  if (!acc) into.set(g, (acc = newPhaseAcc(buckets)));
  addPhases(acc, n, h);
}

/**
 * The cgroup series of a disk: the CGROUPS_LISTED busiest by count (ties by name), the rest summed
 * into CGROUP_OTHER, so Σ n is kept exactly however many cgroups there were.
 */
export function cgroupSeries(accs: ReadonlyMap<string, PhaseAcc>): CgroupSeries[] {
  const sorted = [...accs.entries()].filter(([, v]) => v.n > 0).sort(([ga, a], [gb, b]) => b.n - a.n || (ga < gb ? -1 : ga > gb ? 1 : 0));
  const listed = sorted.slice(0, CGROUPS_LISTED - 1);
  const rest = sorted.slice(CGROUPS_LISTED - 1);
  if (rest.length === 1) listed.push(rest[0] as [string, PhaseAcc]);
  const out: CgroupSeries[] = listed.map(([g, v]) => ({ g, n: v.n, ...phasesOf(v) }));
  if (rest.length > 1) {
    const other = newPhaseAcc((rest[0] as [string, PhaseAcc])[1].d.length);
    for (const [, v] of rest) addPhaseAcc(other, v);
    out.push({ g: CGROUP_OTHER, n: other.n, ...phasesOf(other) });
  }
  return out;
}

/**
 * The worse of two in-flight states: a coarse step shows its worst second, whole. The worst is
 * the one whose oldest outstanding I/O is older, whether with the driver (`oldest_ns`) or, from
 * protocol 4, a bio still waiting for a request (`oldest_wait_ns`: a frozen queue holds bios
 * there with nothing with the driver); then the older `oldest_ns`, more `n`, more `waiting`.
 * `waiting`, `oldest_wait_ns` and `frozen` are that same second's, never maxed apart from it, so
 * the state is one the agent saw. For data without `waiting` this is the rule of protocol 2.
 */
function worseInflight(a: InflightState | undefined, b: InflightState): InflightState {
  if (!a) return b;
  const oldest = (s: InflightState): number => Math.max(s.oldest_ns, s.oldest_wait_ns ?? 0);
  if (oldest(b) !== oldest(a)) return oldest(b) > oldest(a) ? b : a;
  if (b.oldest_ns !== a.oldest_ns) return b.oldest_ns > a.oldest_ns ? b : a;
  if (b.n !== a.n) return b.n > a.n ? b : a;
  return (b.waiting ?? 0) > (a.waiting ?? 0) ? b : a;
}

/** Untimed I/Os of a disk in a frame, all op groups. */
export function untimedCount(disk: DiskFrame): number {
  let n = 0;
  if (disk.untimed) for (const v of Object.values(disk.untimed)) n += v ?? 0;
  return n;
}

/**
 * Conserved I/Os of a disk in a frame: what /proc/diskstats counts, i.e. the classes it counts
 * (not `pt`) plus the untimed I/Os.
 */
export function conservedCount(disk: DiskFrame): number {
  let n = untimedCount(disk);
  for (const c of disk.cls) if (!c.pt) n += c.n;
  return n;
}

/**
 * Sums frames into one, exactly: counts and histograms add (`w`, `t`, `wu` and `causes`, added
 * in 4, as `q`, `b` and `untimed` do: present in the sum when any added frame had them; the
 * host's `psi` and each cgroup's `cg_psi`, added in 4, too: the stall of the seconds that had it). Dense
 * accumulation (one Float64Array per class and latency kind) keeps adding N frames
 * O(N × buckets used) rather than O(N²) sparse merges.
 */
export class FrameAccumulator {
  private readonly disks = new Map<string, DiskAcc>();
  private frames = 0;
  private psi: IoPressure | undefined;
  private readonly cgPsi = new Map<string, IoPressure>();

  constructor(private readonly schema: BucketSchema = BUCKET_SCHEMA) {}

  /** Number of frames added since construction or the last reset(). */
  get count(): number {
    return this.frames;
  }

  add(frame: Frame): void {
    this.frames++;
    if (frame.psi) this.psi = addPressure(this.psi, frame.psi);
    for (const p of frame.cg_psi ?? []) this.cgPsi.set(p.g, addPressure(this.cgPsi.get(p.g), p));
    for (const disk of frame.disks) {
      let acc = this.disks.get(disk.dev);
      if (!acc) {
        acc = {
          classes: new Map(),
          dropped: undefined,
          missed: undefined,
          requeues: undefined,
          untimed: undefined,
          inflight: undefined,
          cg: undefined,
          causes: undefined,
          wbt: undefined,
          tagsFull: undefined,
          queueChanged: undefined,
        };
        this.disks.set(disk.dev, acc);
      }
      if (disk.dropped !== undefined) acc.dropped = (acc.dropped ?? 0) + disk.dropped;
      if (disk.missed !== undefined) acc.missed = (acc.missed ?? 0) + disk.missed;
      if (disk.requeues !== undefined) acc.requeues = (acc.requeues ?? 0) + disk.requeues;
      if (disk.untimed) acc.untimed = addCounts(acc.untimed, disk.untimed);
      if (disk.inflight) acc.inflight = worseInflight(acc.inflight, disk.inflight);
      if (disk.causes) acc.causes = addCounts(acc.causes, disk.causes);
      if (disk.wbt !== undefined) acc.wbt = (acc.wbt ?? 0) + disk.wbt;
      if (disk.tags_full !== undefined) acc.tagsFull = (acc.tagsFull ?? 0) + disk.tags_full;
      if (disk.queue_changed) acc.queueChanged = joinQueueSettings(acc.queueChanged, disk.queue_changed);
      if (disk.cg) {
        acc.cg ??= new Map();
        for (const g of disk.cg) addCgroup(acc.cg, g.g, g.n, bucketCount(this.schema), g);
      }
      for (const cls of disk.cls) {
        let c = acc.classes.get(cls.c);
        if (!c) {
          c = { phases: newPhaseAcc(bucketCount(this.schema)), e: undefined, pt: false, sz: undefined, b: undefined };
          c.phases.q = new Float64Array(bucketCount(this.schema));
          acc.classes.set(cls.c, c);
        }
        addPhases(c.phases, cls.n, cls);
        if (cls.pt) c.pt = true;
        if (cls.b !== undefined) c.b = (c.b ?? 0) + cls.b;
        if (cls.sz) {
          c.sz ??= new Map();
          for (const z of cls.sz) {
            let acc = c.sz.get(z.s);
            if (!acc) c.sz.set(z.s, (acc = newPhaseAcc(bucketCount(this.schema))));
            addPhases(acc, z.n, z);
          }
        }
        if (cls.e) {
          c.e ??= new Map();
          for (const [status, v] of Object.entries(cls.e)) c.e.set(status, (c.e.get(status) ?? 0) + v);
        }
      }
    }
  }

  /** The sum of everything added, as one canonical frame starting at `ts` covering `step` s. */
  toFrame(ts: number, step: number): Frame {
    const devs = [...this.disks.keys()].sort(compareDev);
    const disks: DiskFrame[] = [];
    for (const dev of devs) {
      const acc = this.disks.get(dev) as DiskAcc;
      const names = [...acc.classes.keys()].sort();
      const cls: ClassSeries[] = names.map((c) => {
        const v = acc.classes.get(c) as ClassAcc;
        const { d, q = [], w, t, wu } = phasesOf(v.phases);
        return {
          c,
          n: v.phases.n,
          d,
          q,
          ...(v.e ? { e: Object.fromEntries([...v.e.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) } : {}),
          ...(v.pt ? { pt: true as const } : {}),
          ...(v.b !== undefined ? { b: v.b } : {}),
          ...(v.sz ? { sz: [...v.sz.entries()].sort(([a], [b]) => a - b).map(([s, z]) => ({ s, n: z.n, ...phasesOf(z) })) } : {}),
          ...(w ? { w } : {}),
          ...(t ? { t } : {}),
          ...(wu !== undefined ? { wu } : {}),
        };
      });
      const disk: { -readonly [K in keyof DiskFrame]: DiskFrame[K] } = { dev, cls };
      if (acc.dropped !== undefined) disk.dropped = acc.dropped;
      if (acc.missed !== undefined) disk.missed = acc.missed;
      if (acc.requeues !== undefined) disk.requeues = acc.requeues;
      if (acc.untimed) disk.untimed = sortedCounts(acc.untimed);
      if (acc.inflight) disk.inflight = acc.inflight;
      if (acc.cg) disk.cg = cgroupSeries(acc.cg);
      if (acc.causes) disk.causes = sortedCounts(acc.causes);
      if (acc.wbt !== undefined) disk.wbt = acc.wbt;
      if (acc.tagsFull !== undefined) disk.tags_full = acc.tagsFull;
      if (acc.queueChanged) disk.queue_changed = acc.queueChanged;
      disks.push(disk);
    }
    return {
      ts,
      step,
      disks,
      ...(this.psi ? { psi: this.psi } : {}),
      ...(this.cgPsi.size > 0 ? { cg_psi: mostStalled(this.cgPsi) } : {}),
    };
  }

  reset(): void {
    this.disks.clear();
    this.frames = 0;
    this.psi = undefined;
    this.cgPsi.clear();
  }
}

/** a + b, stall by stall (a absent: b). */
function addPressure(a: IoPressure | undefined, b: IoPressure): IoPressure {
  return { some_us: (a?.some_us ?? 0) + b.some_us, full_us: (a?.full_us ?? 0) + b.full_us };
}

/** Cgroups' pressure as a frame carries it: the CGROUP_PSI_LISTED most stalled (`some`, then `full`, then path). */
export function mostStalled(byPath: ReadonlyMap<string, IoPressure>): CgroupPressure[] {
  return [...byPath.entries()]
    .map(([g, p]) => ({ g, some_us: p.some_us, full_us: p.full_us }))
    .sort((a, b) => b.some_us - a.some_us || b.full_us - a.full_us || (a.g < b.g ? -1 : a.g > b.g ? 1 : 0))
    .slice(0, CGROUP_PSI_LISTED);
}

/** Sums frames into one frame for [ts, ts + step). The inputs' own ts/step are not checked. */
export function mergeFrames(frames: Iterable<Frame>, ts: number, step: number, schema: BucketSchema = BUCKET_SCHEMA): Frame {
  const acc = new FrameAccumulator(schema);
  for (const f of frames) acc.add(f);
  return acc.toFrame(ts, step);
}

/** Start of the step of length `step` that contains second `ts` (steps are aligned to the unix epoch). */
export function alignDown(ts: number, step: number): number {
  return Math.floor(ts / step) * step;
}

/**
 * Merges time-ordered frames into frames of `step` seconds aligned to multiples of `step`.
 * Every input must fit inside one output step (its step divides `step` and it is aligned),
 * otherwise a RangeError says which frame does not. Output steps with no input frame are
 * absent (nothing was recorded for them); a step with only empty inputs gives an empty frame.
 */
export function coarsenFrames(frames: readonly Frame[], step: number, schema: BucketSchema = BUCKET_SCHEMA): Frame[] {
  if (!Number.isInteger(step) || step < 1) throw new RangeError(`step ${step} is not a positive integer`);
  const out: Frame[] = [];
  const acc = new FrameAccumulator(schema);
  let current: number | undefined;
  for (const f of frames) {
    if (step % f.step !== 0 || f.ts % f.step !== 0) {
      throw new RangeError(`frame at ${f.ts} (step ${f.step}) does not fit in steps of ${step} s`);
    }
    const start = alignDown(f.ts, step);
    if (current !== undefined && start < current) throw new RangeError(`frame at ${f.ts} is out of time order`);
    if (current !== undefined && start !== current) {
      out.push(acc.toFrame(current, step));
      acc.reset();
    }
    current = start;
    acc.add(f);
  }
  if (current !== undefined) out.push(acc.toFrame(current, step));
  return out;
}

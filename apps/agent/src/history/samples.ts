/**
 * Sampled I/O records of the recent past, for drill-down into a heat map cell. A fixed-size
 * ring of columns (typed arrays) rather than an array of objects: the memory is bounded and
 * known up front (about 90 bytes per sample), and the garbage collector never walks it.
 * Samples older than the window, or beyond the capacity, are overwritten oldest first. The ring
 * answers for the recent seconds it still holds all of; older ones are on disk (SampleArchive,
 * with SampleSource choosing between the two).
 */
import {
  samplePhaseNs,
  type IoSample,
  type LatencyKind,
  type SamplePhases,
  type SamplePick,
  sizeClassOf,
  spreadHash,
  SpreadPicker,
} from '@blkheat/shared-types';

export interface SampleQuery {
  /** Completion time range [from, to) in unix seconds. */
  readonly from: number;
  readonly to: number;
  /** The phase the latency bounds are of (default 'device'), as samplePhaseNs reads it of a sample. */
  readonly kind?: LatencyKind | undefined;
  /** Inclusive latency bounds of `kind`, ns. */
  readonly minNs?: number | undefined;
  readonly maxNs?: number | undefined;
  readonly disks?: readonly string[] | undefined;
  readonly classes?: readonly string[] | undefined;
  /** Only samples charged to one of these cgroups (paths), or of these size classes (sizeClassOf). */
  readonly cgroups?: readonly string[] | undefined;
  readonly sizeClasses?: readonly number[] | undefined;
  readonly limit: number;
  /**
   * Resume a query from here: the `next` of an earlier answer (samples are numbered in the order
   * they were added). So a long answer can be read a page at a time without holding it whole.
   */
  readonly after?: number | undefined;
  /** More matches than `limit`: the oldest ('first', the default), or spread over [from, to) (SpreadPicker; `after` is not read). */
  readonly pick?: SamplePick | undefined;
}

export interface SampleAnswer {
  /** Matching samples in arrival (roughly completion-time) order, at most `limit`. */
  readonly samples: IoSample[];
  /** More samples matched than `limit`. */
  readonly truncated: boolean;
  /** Where a query with `after` resumes after this answer. */
  readonly next: number;
  /** With pick 'spread': the number of samples that matched. */
  readonly matched?: number;
}

export interface SampleStoreOptions {
  /** Most samples kept. */
  readonly capacity: number;
  /** Seconds a sample is kept at most. */
  readonly windowSeconds: number;
  /** Clock in unix seconds (tests inject one). */
  readonly now?: () => number;
}

const COMM_BYTES = 16;
/** `w_ns` absent (a bio-based disk, an agent before protocol 4) in the wNs column; null is NaN. */
const ABSENT = -1;

/** A sample's phases, written in place (`w_ns` undefined: absent). */
interface Phases extends SamplePhases {
  w_ns: number | null | undefined;
  q_ns: number | null;
  d_ns: number;
}
/** Interned strings (devices, classes, cgroup paths) per table; more distinct values than this are dropped. */
const MAX_INTERNED = 65535;
/** No cgroup path (the table's ids stop below it). */
const NO_PATH = 0xffff;

/** A string <-> small integer table, so the ring stores 2-byte indices instead of strings. */
class Interner {
  private readonly ids = new Map<string, number>();
  readonly values: string[] = [];

  id(value: string): number | undefined {
    let id = this.ids.get(value);
    if (id === undefined) {
      if (this.values.length >= MAX_INTERNED) return undefined;
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }

  find(value: string): number | undefined {
    return this.ids.get(value);
  }
}

export class SampleStore {
  readonly capacity: number;
  private readonly windowSeconds: number;
  private readonly now: () => number;
  private readonly tsUs: Float64Array;
  private readonly dev: Uint16Array;
  private readonly cls: Uint16Array;
  private readonly sector: Float64Array;
  private readonly bytes: Float64Array;
  private readonly qNs: Float64Array;
  private readonly dNs: Float64Array;
  private readonly wNs: Float64Array;
  private readonly pid: Uint32Array;
  private readonly cgroup: Float64Array;
  /** The cgroup's path (NO_PATH: none, or more distinct paths than the table holds: the id is kept). */
  private readonly cgPath: Uint16Array;
  private readonly outlier: Uint8Array;
  private readonly comm: Uint8Array;
  private readonly devs = new Interner();
  private readonly classes = new Interner();
  private readonly paths = new Interner();
  /** Index of the oldest sample and number of samples held. */
  private head = 0;
  private size = 0;
  private total = 0;
  private rejected = 0;
  /** Completion time (µs) of the newest sample the ring let go (-Infinity: none yet). */
  private lostUpToUs = Number.NEGATIVE_INFINITY;
  /** The second the ring was made in. */
  private readonly startedAt: number;

  constructor(options: SampleStoreOptions) {
    const n = options.capacity;
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`sample capacity ${n} is not a positive integer`);
    this.capacity = n;
    this.windowSeconds = options.windowSeconds;
    this.now = options.now ?? (() => Date.now() / 1000);
    this.startedAt = Math.floor(this.now());
    this.tsUs = new Float64Array(n);
    this.dev = new Uint16Array(n);
    this.cls = new Uint16Array(n);
    this.sector = new Float64Array(n);
    this.bytes = new Float64Array(n);
    this.qNs = new Float64Array(n);
    this.dNs = new Float64Array(n);
    this.wNs = new Float64Array(n);
    this.pid = new Uint32Array(n);
    this.cgroup = new Float64Array(n);
    this.cgPath = new Uint16Array(n);
    this.outlier = new Uint8Array(n);
    this.comm = new Uint8Array(n * COMM_BYTES);
  }

  /** Samples held now. */
  get count(): number {
    return this.size;
  }

  /** Whether every sample completed at or after `fromUs` that was added is still held. */
  holdsAllSince(fromUs: number): boolean {
    this.expire();
    return fromUs > this.lostUpToUs;
  }

  /** The oldest second the ring holds every sample of: since it was made, or after the newest it let go. */
  get heldSince(): number {
    this.expire();
    return this.lostUpToUs === Number.NEGATIVE_INFINITY ? this.startedAt : Math.floor(this.lostUpToUs / 1e6) + 1;
  }

  /** Samples added since start, and samples refused (too many distinct devices/classes). */
  get counters(): { added: number; rejected: number } {
    return { added: this.total, rejected: this.rejected };
  }

  /** Bytes of the ring's columns (allocated up front; the OS maps pages as they are written). */
  get memoryBytes(): number {
    return this.capacity * (8 * 8 + 3 * 2 + 4 + 1 + COMM_BYTES);
  }

  add(samples: readonly IoSample[]): void {
    for (const s of samples) this.addOne(s);
    this.expire();
  }

  query(q: SampleQuery): SampleAnswer {
    this.expire();
    const match = this.matcher(q);
    // The oldest sample held is number total - size.
    const first = this.total - this.size;
    if (q.pick === 'spread') return this.spread(q, match, first);
    const out: IoSample[] = [];
    let truncated = false;
    let k = q.after === undefined ? 0 : Math.max(0, q.after - first);
    for (; k < this.size; k++) {
      const i = (this.head + k) % this.capacity;
      if (match(i) === null) continue;
      if (out.length >= q.limit) {
        truncated = true;
        break;
      }
      out.push(this.sampleAt(i));
    }
    return { samples: out, truncated, next: first + k };
  }

  /** Two scans of the ring (count, then pick): memory bounded by the limit, not by the matches. */
  private spread(q: SampleQuery, match: (i: number) => number | null, first: number): SampleAnswer {
    const picker = new SpreadPicker(q.from * 1e6, q.to * 1e6, q.limit);
    for (let k = 0; k < this.size; k++) {
      const i = (this.head + k) % this.capacity;
      const v = match(i);
      if (v !== null) picker.count(this.tsUs[i] as number, v, k);
    }
    picker.plan();
    for (let k = 0; k < this.size; k++) {
      const i = (this.head + k) % this.capacity;
      if (match(i) === null) continue;
      const sector = this.sector[i] as number;
      const ts = this.tsUs[i] as number;
      picker.offer(ts, spreadHash(ts, Number.isNaN(sector) ? null : sector, this.dNs[i] as number), k);
    }
    const r = picker.result();
    return {
      samples: r.at.map((k) => this.sampleAt((this.head + k) % this.capacity)),
      truncated: r.truncated,
      next: first + this.size,
      matched: r.matched,
    };
  }

  /** The query's test of ring slot i: the sample's latency of the query's phase when it matches, else null. */
  private matcher(q: SampleQuery): (i: number) => number | null {
    const fromUs = q.from * 1e6;
    const toUs = q.to * 1e6;
    const minNs = q.minNs ?? 0;
    const maxNs = q.maxNs ?? Number.MAX_SAFE_INTEGER;
    const phase = q.kind ?? 'device';
    // One object reused for every sample looked at: samplePhaseNs is the rule, the loop allocates nothing.
    const phases: Phases = { w_ns: undefined, q_ns: null, d_ns: 0 };
    const devSet = q.disks ? idSet(q.disks, this.devs) : undefined;
    const clsSet = q.classes ? idSet(q.classes, this.classes) : undefined;
    const cgSet = q.cgroups ? idSet(q.cgroups, this.paths) : undefined;
    const sizes = q.sizeClasses ? new Set(q.sizeClasses) : undefined;
    // Cheapest tests first: a spread query runs this twice over every sample held.
    return (i) => {
      const ts = this.tsUs[i] as number;
      if (ts < fromUs || ts >= toUs) return null;
      if (devSet && !devSet.has(this.dev[i] as number)) return null;
      if (clsSet && !clsSet.has(this.cls[i] as number)) return null;
      if (cgSet && !cgSet.has(this.cgPath[i] as number)) return null;
      if (sizes && !sizes.has(sizeClassOf(this.bytes[i] as number))) return null;
      this.phasesAt(i, phases);
      const v = samplePhaseNs(phases, phase);
      // A phase the sample does not tell (null) is never matched.
      if (v === null || v < minNs || v > maxNs) return null;
      return v;
    };
  }

  private addOne(s: IoSample): void {
    const dev = this.devs.id(s.dev);
    const cls = this.classes.id(s.c);
    if (dev === undefined || cls === undefined) {
      this.rejected++;
      return;
    }
    let i: number;
    if (this.size < this.capacity) {
      i = (this.head + this.size) % this.capacity;
      this.size++;
    } else {
      i = this.head;
      this.lostUpToUs = Math.max(this.lostUpToUs, this.tsUs[i] as number);
      this.head = (this.head + 1) % this.capacity;
    }
    this.total++;
    this.tsUs[i] = s.ts_us;
    this.dev[i] = dev;
    this.cls[i] = cls;
    this.sector[i] = s.sector ?? NaN; // null (no sector: a flush) kept as NaN
    this.bytes[i] = s.bytes;
    this.qNs[i] = s.q_ns ?? NaN;
    this.dNs[i] = s.d_ns;
    this.wNs[i] = s.w_ns === undefined ? ABSENT : (s.w_ns ?? NaN);
    this.pid[i] = s.pid;
    this.cgroup[i] = s.cgroup;
    this.cgPath[i] = (s.cg === undefined ? undefined : this.paths.id(s.cg)) ?? NO_PATH;
    this.outlier[i] = s.outlier ? 1 : 0;
    const at = i * COMM_BYTES;
    this.comm.fill(0, at, at + COMM_BYTES);
    // comm is at most 15 bytes in the kernel; anything longer is cut, on a character boundary.
    this.comm.set(encodeComm(s.comm), at);
  }

  /** The phases of sample `i` into `into` (as the sample had them: w_ns absent, null or a number). */
  private phasesAt(i: number, into: Phases): void {
    const q = this.qNs[i] as number;
    const w = this.wNs[i] as number;
    into.q_ns = Number.isNaN(q) ? null : q;
    into.d_ns = this.dNs[i] as number;
    into.w_ns = w === ABSENT ? undefined : Number.isNaN(w) ? null : w;
  }

  private sampleAt(i: number): IoSample {
    const at = i * COMM_BYTES;
    let end = at;
    while (end < at + COMM_BYTES && this.comm[end] !== 0) end++;
    const phases: Phases = { w_ns: undefined, q_ns: null, d_ns: 0 };
    this.phasesAt(i, phases);
    return {
      ts_us: this.tsUs[i] as number,
      dev: this.devs.values[this.dev[i] as number] as string,
      c: this.classes.values[this.cls[i] as number] as string,
      sector: Number.isNaN(this.sector[i] as number) ? null : (this.sector[i] as number),
      bytes: this.bytes[i] as number,
      q_ns: phases.q_ns,
      d_ns: phases.d_ns,
      ...(phases.w_ns !== undefined ? { w_ns: phases.w_ns } : {}),
      pid: this.pid[i] as number,
      comm: Buffer.from(this.comm.subarray(at, end)).toString('utf8'),
      cgroup: this.cgroup[i] as number,
      ...(this.cgPath[i] === NO_PATH ? {} : { cg: this.paths.values[this.cgPath[i] as number] as string }),
      outlier: this.outlier[i] === 1,
    };
  }

  /** Drops samples older than the window from the front (samples arrive roughly in time order). */
  private expire(): void {
    const oldestUs = (this.now() - this.windowSeconds) * 1e6;
    while (this.size > 0 && (this.tsUs[this.head] as number) < oldestUs) {
      this.lostUpToUs = Math.max(this.lostUpToUs, this.tsUs[this.head] as number);
      this.head = (this.head + 1) % this.capacity;
      this.size--;
    }
  }
}

function idSet(values: readonly string[], interner: Interner): Set<number> {
  const s = new Set<number>();
  for (const v of values) {
    const id = interner.find(v);
    if (id !== undefined) s.add(id);
  }
  return s;
}

function encodeComm(comm: string): Uint8Array {
  let buf = Buffer.from(comm, 'utf8');
  if (buf.length < COMM_BYTES) return buf;
  // Cut to 15 bytes, then back off to a character boundary (no dangling UTF-8 continuation bytes).
  let n = COMM_BYTES - 1;
  while (n > 0 && ((buf[n] as number) & 0xc0) === 0x80) n--;
  buf = buf.subarray(0, n);
  return buf;
}

/**
 * `blkheat record --json`: one JSON object per interval per line (NDJSON), format version 5.
 * Documented in docs/record-json.md.
 */
import {
  boundsMicros,
  BUCKET_SCHEMA,
  type BucketSchema,
  type CgroupPressure,
  type Frame,
  type InflightState,
  type IoPressure,
  type IoSample,
  type OpGroup,
  type PhaseSeries,
  type SparseHist,
  type QueueSetting,
  type SubmitCause,
} from '@blkheat/shared-types';

export const RECORD_JSON_VERSION = 5;

/** [lower_us, upper_us, count]; upper_us is null for the overflow bucket (no upper bound). */
export type BucketTriple = [number, number | null, number];

/**
 * A series' latency phases as record JSON carries them (PhaseSeries): `device` always; `queue`,
 * and for request-based disks `submit`, `total`, `submit_unknown`, for classes since 1 and 4,
 * for sizes and cgroups since 4.
 */
export interface RecordPhases {
  device: BucketTriple[];
  queue?: BucketTriple[];
  /** Request-based disks: submit wait (bio submitted -> request allocated). */
  submit?: BucketTriple[];
  /** Request-based disks: total (bio submitted -> completed); a bio-based disk's is `device`. */
  total?: BucketTriple[];
  /** With `submit`: I/Os of `count` whose submission was not seen (in neither histogram). */
  submit_unknown?: number;
}

export interface RecordLine {
  v: number;
  ts: number;
  interval_s: number;
  disks: {
    dev: string;
    name: string;
    dropped: number;
    missed: number;
    /** Added in 2. */
    requeues: number;
    /** Added in 2: I/Os diskstats counted that no probe saw, by op group. */
    untimed: Partial<Record<OpGroup, number>>;
    /**
     * Added in 2: what was in flight when the interval closed (absent: not known). Added in 4:
     * its `waiting`, `oldest_wait_ns` and `frozen` (bios still waiting for a request).
     */
    inflight?: InflightState;
    /**
     * Added in 4: completed I/Os whose bio met a cause of submit wait, by cause (absent: none
     * known): frozen, refused.
     */
    causes?: Partial<Record<SubmitCause, number>>;
    /** Added in 4: wbt's windows in the interval in which it held buffered writes back (absent: none). */
    wbt?: number;
    /** Added in 5: seconds of the interval in which every tag was in use while bios waited (absent: none). */
    tags_full?: number;
    /** Added in 4: the queue settings (scheduler, nr_requests) whose value changed in the interval (absent: none). */
    queue_changed?: QueueSetting[];
    /** Added in 3: by the cgroup the I/O was charged to (path), busiest first; its phases besides `device` added in 4. */
    cgroups: ({ cgroup: string; count: number } & RecordPhases)[];
    classes: ({
      class: string;
      count: number;
      /** Added in 3: bytes moved by the `count` I/Os. */
      bytes?: number;
      /** Added in 2: failed I/Os by block status. */
      errors?: Record<string, number>;
      /** Added in 2: true for I/O /proc/diskstats does not count (passthrough). */
      passthrough?: true;
      /** Added in 2: by I/O size, `max_bytes` = 2^s (0: no data), with the device latency of each; its other phases added in 4. */
      sizes?: ({ max_bytes: number; count: number } & RecordPhases)[];
      /** `submit`, `total` and `submit_unknown` added in 4. */
    } & RecordPhases & { queue: BucketTriple[] })[];
  }[];
  dropped: number;
  /**
   * Added in 4: the host's I/O pressure over the interval (/proc/pressure/io): µs some task,
   * and every non-idle task, was stalled on I/O (absent: not known, e.g. a kernel without PSI).
   */
  psi?: IoPressure;
  /**
   * Added in 4: the I/O pressure of the cgroups I/O was charged to lately, the most stalled first
   * (their cgroup2 io.pressure; absent: none known).
   */
  cg_psi?: CgroupPressure[];
  samples?: IoSample[];
}

export function recordLine(
  frame: Frame,
  names: ReadonlyMap<string, string>,
  intervalS: number,
  samples?: readonly IoSample[],
  schema: BucketSchema = BUCKET_SCHEMA,
): RecordLine {
  let dropped = 0;
  const disks = frame.disks.map((d) => {
    dropped += d.dropped ?? 0;
    return {
      dev: d.dev,
      name: names.get(d.dev) ?? d.dev,
      dropped: d.dropped ?? 0,
      missed: d.missed ?? 0,
      requeues: d.requeues ?? 0,
      untimed: { ...d.untimed },
      ...(d.inflight ? { inflight: d.inflight } : {}),
      ...(d.causes ? { causes: { ...d.causes } } : {}),
      ...(d.wbt ? { wbt: d.wbt } : {}),
      ...(d.tags_full ? { tags_full: d.tags_full } : {}),
      ...(d.queue_changed ? { queue_changed: [...d.queue_changed] } : {}),
      cgroups: (d.cg ?? []).map((g) => ({ cgroup: g.g, count: g.n, ...recordPhases(g, schema) })),
      classes: d.cls.map((c) => {
        const phases = recordPhases(c, schema);
        return {
          class: c.c,
          count: c.n,
          ...(c.b !== undefined ? { bytes: c.b } : {}),
          ...(c.e ? { errors: { ...c.e } } : {}),
          ...(c.pt ? { passthrough: true as const } : {}),
          ...(c.sz ? { sizes: c.sz.map((z) => ({ max_bytes: z.s === 0 ? 0 : 2 ** z.s, count: z.n, ...recordPhases(z, schema) })) } : {}),
          ...phases,
          // Every class carries `q` (since 1): recordPhases gave it.
          queue: phases.queue ?? [],
        };
      }),
    };
  });
  const line: RecordLine = { v: RECORD_JSON_VERSION, ts: frame.ts, interval_s: intervalS, disks, dropped };
  if (frame.psi) line.psi = { some_us: frame.psi.some_us, full_us: frame.psi.full_us };
  if (frame.cg_psi) line.cg_psi = frame.cg_psi.map((p) => ({ g: p.g, some_us: p.some_us, full_us: p.full_us }));
  if (samples) line.samples = [...samples];
  return line;
}

/** A series' phases as record JSON carries them: each one the series has. */
function recordPhases(p: PhaseSeries, schema: BucketSchema): RecordPhases {
  return {
    device: triples(p.d, schema),
    ...(p.q ? { queue: triples(p.q, schema) } : {}),
    ...(p.w ? { submit: triples(p.w, schema) } : {}),
    ...(p.t ? { total: triples(p.t, schema) } : {}),
    ...(p.wu !== undefined ? { submit_unknown: p.wu } : {}),
  };
}

/** [lower µs, upper µs (null: overflow), count] of each bucket, by the data's schema. */
export function triples(sparse: SparseHist, schema: BucketSchema = BUCKET_SCHEMA): BucketTriple[] {
  const out: BucketTriple[] = [];
  for (let k = 0; k < sparse.length; k += 2) {
    const [lo, hi] = boundsMicros(sparse[k] as number, schema);
    out.push([round(lo), Number.isFinite(hi) ? round(hi) : null, sparse[k + 1] as number]);
  }
  return out;
}

/** Bounds are irrational; 4 decimals of a µs (0.1 ns) is below any clock's resolution. */
function round(us: number): number {
  return Math.round(us * 1e4) / 1e4;
}

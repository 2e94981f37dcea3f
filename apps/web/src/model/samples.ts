/**
 * Drill-down: a cell or a box of the heat map (time × latency buckets) as a samples query,
 * the same query answered locally for an imported snapshot, and the table's sort order.
 */
import {
  type BucketSchema,
  type IoSample,
  type LatencyKind,
  pickSpread,
  pickSpreadInSteps,
  runSteps,
  samplePhaseNs,
  type SamplePick,
  type SamplesKept,
  spreadHash,
  type SpreadKeys,
  type SpreadResult,
} from '@blkheat/shared-types';
import { formatClock, formatCount } from './format.js';
import { bucketRangeNs } from './latency.js';
import { sizeClassOf } from './sizeLatency.js';

/** One disk's sampled I/Os of a time range, as the filters on screen narrow them: what every samples view asks for. */
export interface SampleScope {
  readonly dev: string;
  /** [from, to) in unix seconds. */
  readonly from: number;
  readonly to: number;
  /** The latency phase on screen (the query's latency bounds are of this phase). */
  readonly kind: LatencyKind;
  /** Class filter in force; empty = all. */
  readonly classes: readonly string[];
  /** Cgroup filter in force (samples whose `cg` is this path); undefined = every cgroup. */
  readonly cgroup?: string | undefined;
}

/** What the user selected on a heat map (from and to: whole columns). */
export interface CellSelection extends SampleScope {
  /** Dense buckets [lo, hi], inclusive, of `schema`. */
  readonly bucketLo: number;
  readonly bucketHi: number;
  /** The bucket schema of the heat map the cells were picked on (the source's). */
  readonly schema: BucketSchema;
  /** A size × latency cell: only I/Os of this size class (model/sizeLatency.ts). */
  readonly sizeClass?: number | undefined;
  /** A box brushed on the offset scatter: first sectors [sectorLo, sectorHi] (its samples are listed as they were drawn). */
  readonly sectors?: { readonly lo: number; readonly hi: number } | undefined;
}

export interface SamplesQuery {
  readonly from: number;
  readonly to: number;
  readonly kind: LatencyKind;
  readonly minNs: number;
  readonly maxNs: number;
  readonly disks: readonly string[];
  readonly classes?: readonly string[];
  /** Which matches when more than the limit match (the request's `pick`; absent: the oldest). */
  readonly pick?: SamplePick;
  /** In the agent's samples request since protocol 5; applied to an older agent's answer (localFilter). */
  readonly cgroup?: string;
  readonly sizeClass?: number;
}

/** The query for a scope's samples whose latency (of its kind) is in [minNs, maxNs]. */
export function scopeQuery(scope: SampleScope, minNs: number, maxNs: number): SamplesQuery {
  return {
    from: scope.from,
    to: scope.to,
    kind: scope.kind,
    minNs,
    maxNs,
    disks: [scope.dev],
    ...(scope.classes.length > 0 ? { classes: scope.classes } : {}),
    ...(scope.cgroup !== undefined ? { cgroup: scope.cgroup } : {}),
  };
}

export function selectionQuery(sel: CellSelection): SamplesQuery {
  const { minNs, maxNs } = bucketRangeNs(sel.bucketLo, sel.bucketHi, sel.schema);
  return { ...scopeQuery(sel, minNs, maxNs), ...(sel.sizeClass !== undefined ? { sizeClass: sel.sizeClass } : {}) };
}

/**
 * The part of a query an agent before protocol 5 cannot be asked (cgroup, size class), as a
 * predicate for its answer; undefined when there is none.
 */
export function localFilter(q: SamplesQuery): ((s: IoSample) => boolean) | undefined {
  if (q.cgroup === undefined && q.sizeClass === undefined) return undefined;
  return (s) => (q.cgroup === undefined || s.cg === q.cgroup) && (q.sizeClass === undefined || sizeClassOf(s.bytes) === q.sizeClass);
}

/** True when a sample satisfies a query (the agent's semantics, for snapshots offline). */
export function sampleMatches(s: IoSample, q: SamplesQuery): boolean {
  if (s.ts_us < q.from * 1e6 || s.ts_us >= q.to * 1e6) return false;
  if (!q.disks.includes(s.dev)) return false;
  if (q.classes && !q.classes.includes(s.c)) return false;
  if (q.cgroup !== undefined && s.cg !== q.cgroup) return false;
  if (q.sizeClass !== undefined && sizeClassOf(s.bytes) !== q.sizeClass) return false;
  const v = samplePhaseNs(s, q.kind);
  return v !== null && v >= q.minNs && v <= q.maxNs;
}

/** At most `limit` of the samples matching `q`, as the agent picks them (q.pick); `matched` with a spread pick. */
export function matchSamples(all: readonly IoSample[], q: SamplesQuery, limit = Infinity): MatchedSamples {
  return runSteps(matchSamplesInSteps(all, q, limit, Infinity));
}

export interface MatchedSamples {
  readonly samples: IoSample[];
  readonly truncated: boolean;
  readonly matched?: number;
}

/**
 * matchSamples as steps: it yields after every `step` samples it looks at (in each pass of a
 * spread pick too), so that a page matches a big snapshot's samples a task at a time
 * (pipeline/selectedSamples.ts). The answer does not depend on `step`.
 */
export function* matchSamplesInSteps(
  all: readonly IoSample[],
  q: SamplesQuery,
  limit: number,
  step: number,
): Generator<void, MatchedSamples> {
  const spread = q.pick === 'spread' && Number.isFinite(limit);
  const out: IoSample[] = [];
  for (let i = 0; i < all.length; i++) {
    const s = all[i] as IoSample;
    if (sampleMatches(s, q)) {
      if (!spread && out.length >= limit) return { samples: out, truncated: true };
      out.push(s);
    }
    if ((i + 1) % step === 0) yield;
  }
  if (!spread) return { samples: out, truncated: false };
  const r = yield* pickSpreadInSteps(out, q.from * 1e6, q.to * 1e6, limit, spreadKeys(q), step);
  return { samples: r.items, truncated: r.truncated, matched: r.matched };
}

/** The agent's spread pick (sample-spread.ts) of samples that all match `q`: at most `limit`, in their order. */
export function spreadSamples(
  rows: readonly IoSample[],
  q: Pick<SamplesQuery, 'from' | 'to' | 'kind'>,
  limit: number,
): SpreadResult<IoSample> {
  return pickSpread(rows, q.from * 1e6, q.to * 1e6, limit, spreadKeys(q));
}

/** How the spread pick reads a sample matched by `q`. */
function spreadKeys(q: Pick<SamplesQuery, 'kind'>): SpreadKeys<IoSample> {
  return {
    tsUs: (s) => s.ts_us,
    // Every row matched q, so its phase is known (0 never happens; it keeps the types honest).
    latencyNs: (s) => samplePhaseNs(s, q.kind) ?? 0,
    hash: (s) => spreadHash(s.ts_us, s.sector, s.d_ns),
  };
}

export type SampleSortKey = 'ts_us' | 'dev' | 'c' | 'sector' | 'bytes' | 'w_ns' | 'q_ns' | 'd_ns' | 'pid' | 'comm' | 'cg';

export function compareSamples(a: IoSample, b: IoSample, key: SampleSortKey): number {
  // Samples of agents before protocol 3 have no cgroup path, before 4 no submit wait: sorted as unknown.
  const x = a[key] ?? null;
  const y = b[key] ?? null;
  // Unknown latencies (null: queue start or bio submission not seen) sort before every known one.
  if (x === null || y === null) return x === y ? 0 : x === null ? -1 : 1;
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  return String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
}

/** Stable sort by one column; ties keep time order. */
export function sortSamples(rows: readonly IoSample[], key: SampleSortKey, dir: 'asc' | 'desc'): IoSample[] {
  const sign = dir === 'asc' ? 1 : -1;
  return rows
    .map((r, i) => ({ r, i }))
    .sort((p, q) => sign * compareSamples(p.r, q.r, key) || p.i - q.i)
    .map((p) => p.r);
}

/**
 * Why a selection lists no sampled I/O, in one line: the true reason, from what the agent says it
 * keeps for those seconds (`kept`, protocol 5), or what a snapshot carries.
 */
export function noSamplesReason(
  sel: { readonly from: number; readonly to: number },
  kept: SamplesKept | undefined,
  snapshot: boolean,
): string {
  if (snapshot) return 'No sampled I/O of this cell in the snapshot: it carries the samples its agent kept for its range (at most 50,000).';
  if (!kept)
    return 'No sampled I/O in this cell (the agent samples a budget of I/Os a second, slow outliers first; this agent does not say which it still keeps).';
  if (kept.budget === 0) return 'The agent takes no samples (started with --samples-budget 0): no I/O can be listed.';
  if (kept.since === null) return 'The agent has not kept any sample yet.';
  if (sel.to <= kept.since)
    return `Samples of these seconds are no longer kept: the agent has them since ${formatClock(kept.since)} (bounded by --history and --max-sample-size).`;
  if (sel.from < kept.since)
    return `Samples before ${formatClock(kept.since)} are no longer kept, and none of this cell's I/Os after it was sampled.`;
  if (kept.step > 1)
    return `No sample kept in this cell: samples this old are thinned to about 1 in ${kept.step} (at most ${formatCount(Math.ceil(kept.budget / kept.step))} a second, the slowest first).`;
  return `None of this cell's I/Os was sampled: the kernel samples at most ${formatCount(kept.budget)} I/Os a second, slow outliers first.`;
}

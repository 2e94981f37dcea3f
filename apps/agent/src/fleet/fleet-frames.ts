/**
 * Frames of a time range, at a step, from Prometheus: the heat map columns of a fleet view.
 *
 * Two ways, by size:
 *  - **Scrape by scrape** (up to RAW_SCRAPES_PER_SERIES scrapes in the range): the raw samples of
 *    the cumulative native histograms, differenced scrape to scrape. Each difference is what
 *    the agent counted between two scrapes, exactly, and the agent's
 *    blkheat_histogram_window_end_seconds of the same scrapes says which of its seconds that
 *    was: [end at the first, end at the second). The difference goes to the column that second
 *    span starts in. With a 1 s scrape interval every column is the agent's own second, bucket
 *    for bucket.
 *  - **increase() per step** (longer ranges): `increase(metric[step])` evaluated at the end of
 *    each column. Prometheus extrapolates the first and last scrape of each window to its
 *    edges, so counts are rounded estimates (docs/fleet.md says by how much).
 *
 * Queue latency is asked of Prometheus only when the range wants it (`queue`: a range that names
 * its phases without it, protocol 7, gets frames whose `q` are empty and an answer that says so):
 * each metric is a query over every host's samples, and a page showing device latency, a fleet
 * page's default, draws no queue latency.
 *
 * On a big fleet (FleetDirectory.big) a range that names no disk gets the fleet row instead:
 * every host summed by class by Prometheus (`sum by (class) (increase(…))`), its final columns
 * kept by the fleet server (fleet-row-cache.ts) and asked of Prometheus once; named disks are
 * asked for in batches of hosts, so what is held of Prometheus' answers is bounded by
 * RAW_SAMPLES_PER_REQUEST, not by the fleet.
 */
import {
  alignDown,
  filterFrame,
  FLEET_ROW_ID,
  MAX_FRAMES_PER_ANSWER,
  MAX_STEP_SECONDS,
  mergeFrames,
  type BucketSchema,
  type ClassSeries,
  type Frame,
  type FrameFilter,
  type LatencyKind,
} from '@blkheat/shared-types';
import { DEVICE_LATENCY_METRIC, QUEUE_LATENCY_METRIC, WINDOW_END_METRIC } from '../server/metrics.js';
import type { FleetDirectory } from './fleet-disks.js';
import { countsBetween, denseCounts, roundedCounts } from './native-buckets.js';
import type { PrometheusApi, PromSeries } from './prometheus-api.js';
import { matcher, re2Literal } from './promql.js';
import { type Cell, type ColumnSink, type FleetRowCache, rowFromCache } from './fleet-row-cache.js';

/** A host whose newest scrape is this much older than the newest host's is left behind by the live edge (s). */
const STALE_HOST_S = 10;

/** How far behind the newest host a host may be and still hold the live edge back (s): see completeOf. */
export function currentHostBound(scrapeInterval: number): number {
  return Math.max(STALE_HOST_S, 3 * scrapeInterval);
}

/**
 * A column ending at `end` is final `finalAfter(scrapeInterval)` seconds after it, for the
 * hosts' coarsest scrape interval: every host's scrapes in its window are stored by then (a
 * scrape is stamped when it starts and stored when it ends, within its timeout, at most an
 * interval), with the live edge's margin for hosts scraped late.
 */
export function finalAfter(scrapeInterval: number): number {
  return currentHostBound(scrapeInterval) + Math.ceil(scrapeInterval);
}

/** Beyond this many scrapes per series, a range is asked for as increase() per step. */
export const RAW_SCRAPES_PER_SERIES = 3600;

/**
 * Latency histogram samples one answer of Prometheus may hold, at most, on a big fleet: hosts
 * are asked for in batches under it (about 250 bytes of JSON a sample: ~50 MB an answer).
 */
export const RAW_SAMPLES_PER_REQUEST = 200_000;

/**
 * What a fleet's frames carry when queue latency was not asked (RangeAnswer.phases): device
 * latency alone (the agents export no submit wait or total latency to Prometheus).
 */
export const FLEET_PHASES_WITHOUT_QUEUE: readonly LatencyKind[] = ['device'];

/** Marks the overview query (sum by class) in increaseColumns. */
const OVERVIEW = Symbol('overview');

export interface FleetPlan {
  readonly from: number;
  readonly to: number;
  readonly step: number;
}

/**
 * The step a range is answered at: what was asked for, but never finer than the scrape
 * interval (Prometheus has nothing finer) nor so fine that the range exceeds
 * MAX_FRAMES_PER_ANSWER columns; from/to aligned outwards to it.
 */
export function planFleetRange(from: number, to: number, step: number | undefined, scrapeInterval: number): FleetPlan {
  let s = Math.max(step ?? 1, Math.ceil(scrapeInterval), Math.ceil((to - from) / MAX_FRAMES_PER_ANSWER));
  s = Math.min(s, MAX_STEP_SECONDS);
  for (;;) {
    const f = alignDown(from, s);
    const t = alignDown(to + s - 1, s);
    if ((t - f) / s <= MAX_FRAMES_PER_ANSWER || s >= MAX_STEP_SECONDS) return { from: f, to: t, step: s };
    s++;
  }
}

/** Builds frames from per-column, per-series counts. */
class ColumnBuilder implements ColumnSink {
  private readonly cols = new Map<number, Frame[]>();
  /** Columns that some scrape covered (a column no scrape covered is "not recorded"). */
  private readonly seen = new Set<number>();

  constructor(
    private readonly plan: FleetPlan,
    private readonly schema: BucketSchema,
    /** Whether the frames carry queue latency (a kept column's is dropped when not). */
    private readonly queue: boolean,
  ) {}

  /** Marks the seconds [from, to) as counted (their columns exist, empty or not). */
  covered(from: number, to: number): void {
    for (let ts = Math.max(from, this.plan.from); ts < Math.min(to, this.plan.to); ts += this.plan.step) {
      this.seen.add(alignDown(ts, this.plan.step));
    }
    if (to > from && to - 1 >= this.plan.from && to - 1 < this.plan.to) this.seen.add(alignDown(to - 1, this.plan.step));
  }

  add(ts: number, dev: string, cls: string, cell: Cell): void {
    if (ts < this.plan.from || ts >= this.plan.to) return;
    const col = alignDown(ts, this.plan.step);
    this.seen.add(col);
    const d = cell.d ?? [];
    let n = 0;
    for (let i = 1; i < d.length; i += 2) n += d[i] as number;
    const series: ClassSeries = { c: cls, n, d, q: this.queue ? (cell.q ?? []) : [] };
    if (n === 0 && series.q.length === 0) return;
    const list = this.cols.get(col) ?? [];
    list.push({ ts: col, step: this.plan.step, disks: [{ dev, cls: [series] }] });
    this.cols.set(col, list);
  }

  frames(filter: FrameFilter): Frame[] {
    return [...this.seen]
      .sort((a, b) => a - b)
      .map((col) => filterFrame(mergeFrames(this.cols.get(col) ?? [], col, this.plan.step, this.schema), filter));
  }
}

function seriesKey(m: Readonly<Record<string, string>>): string {
  return `${m.instance ?? ''}\u0000${m.dev ?? ''}\u0000${m.class ?? ''}`;
}

/** The window end gauge per instance and scrape time (ms), from its raw samples. */
function windowEnds(series: readonly PromSeries[]): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const s of series) {
    const inst = s.metric.instance;
    if (!inst) continue;
    const m = out.get(inst) ?? new Map<number, number>();
    for (const [t, v] of s.values ?? []) m.set(Math.round(t * 1000), Number(v));
    out.set(inst, m);
  }
  return out;
}

/** Counts scrape by scrape (see the header). */
async function rawColumns(
  api: PrometheusApi,
  dir: FleetDirectory,
  plan: FleetPlan,
  /** The coarsest of the hosts' (ScrapeIntervals). */
  scrapeInterval: number,
  b: ColumnBuilder,
  schema: BucketSchema,
  hosts: string,
  newest: Map<string, number>,
  withQueue: boolean,
): Promise<void> {
  // Scrapes of a second come after it: look one interval and a little past `to`, and one
  // scrape before `from` so the first difference has a start.
  const margin = Math.ceil(scrapeInterval) * 2 + 2;
  const at = plan.to + margin;
  const window = at - plan.from + margin;
  const [dev, queue, ends] = await Promise.all([
    api.rawSamples(DEVICE_LATENCY_METRIC + hosts, window, at),
    withQueue ? api.rawSamples(QUEUE_LATENCY_METRIC + hosts, window, at) : [],
    api.rawSamples(WINDOW_END_METRIC + hosts, window, at),
  ]);
  dir.learn([...dev, ...queue].map((s) => s.metric));
  const endOf = windowEnds(ends);
  const cells = new Map<string, { ts: number; dev: string; cls: string; cell: Cell }>();
  const walk = (series: readonly PromSeries[], kind: 'd' | 'q'): void => {
    for (const s of series) {
      const inst = s.metric.instance ?? '';
      const id = dir.idOf(inst, s.metric.dev ?? '');
      if (!id) continue;
      const ends = endOf.get(inst);
      let prev: Float64Array | undefined;
      let prevEnd: number | undefined;
      for (const [t, h] of s.histograms ?? []) {
        const counts = denseCounts(h, schema);
        const end = ends?.get(Math.round(t * 1000)) ?? Math.floor(t);
        if (prev !== undefined && prevEnd !== undefined && end > prevEnd) {
          b.covered(prevEnd, end);
          const key = `${seriesKey(s.metric)}\u0000${prevEnd}`;
          const entry = cells.get(key) ?? { ts: prevEnd, dev: id, cls: s.metric.class ?? 'Unknown', cell: {} };
          entry.cell[kind] = countsBetween(prev, counts);
          cells.set(key, entry);
        }
        if (prevEnd === undefined || end > prevEnd) {
          prev = counts;
          prevEnd = end;
        }
      }
      if (prevEnd !== undefined) newest.set(inst, Math.max(newest.get(inst) ?? -Infinity, prevEnd));
    }
  };
  walk(dev, 'd');
  walk(queue, 'q');
  for (const c of cells.values()) b.add(c.ts, c.dev, c.cls, c.cell);
}

/** End of what every current host has been scraped for, from each host's newest counted second. */
function completeOf(newest: ReadonlyMap<string, number>, scrapeInterval: number): number | undefined {
  // A host no longer scraped (gone, or its agent down) must not hold the others back.
  const lastEnds = [...newest.values()];
  const latest = Math.max(...lastEnds);
  const current = lastEnds.filter((e) => e >= latest - currentHostBound(scrapeInterval));
  return current.length === 0 ? undefined : Math.min(...current);
}

/** What increaseColumns asks: each host's increase() (a host matcher, '' for every host), or the fleet row summed by Prometheus (OVERVIEW). */
type IncreaseSource = string | typeof OVERVIEW;

/** Counts by increase() per step (see the header). */
async function increaseColumns(
  api: PrometheusApi,
  dir: FleetDirectory,
  plan: FleetPlan,
  b: ColumnSink,
  schema: BucketSchema,
  source: IncreaseSource,
  withQueue: boolean,
): Promise<void> {
  const step = plan.step;
  const q = (metric: string): Promise<PromSeries[]> =>
    api.queryRange(
      source === OVERVIEW ? `sum by (class) (increase(${metric}[${step}s]))` : `increase(${metric}${source}[${step}s])`,
      plan.from + step,
      plan.to,
      step,
    );
  const [dev, queue] = await Promise.all([q(DEVICE_LATENCY_METRIC), withQueue ? q(QUEUE_LATENCY_METRIC) : []]);
  const fleetRow = source === OVERVIEW;
  // increase() drops the metric name: say which is which.
  if (!fleetRow)
    dir.learn([
      ...dev.map((s) => ({ ...s.metric, __name__: DEVICE_LATENCY_METRIC })),
      ...queue.map((s) => ({ ...s.metric, __name__: QUEUE_LATENCY_METRIC })),
    ]);
  const cells = new Map<string, { ts: number; dev: string; cls: string; cell: Cell }>();
  const walk = (series: readonly PromSeries[], kind: 'd' | 'q'): void => {
    for (const s of series) {
      const id = fleetRow ? FLEET_ROW_ID : dir.idOf(s.metric.instance ?? '', s.metric.dev ?? '');
      if (!id) continue;
      for (const [t, h] of s.histograms ?? []) {
        // The value at t is the increase over (t - step, t]: the column that starts at t - step.
        const ts = Math.round(t) - step;
        b.covered(ts, ts + step);
        const key = `${seriesKey(s.metric)}\u0000${ts}`;
        const entry = cells.get(key) ?? { ts, dev: id, cls: s.metric.class ?? 'Unknown', cell: {} };
        entry.cell[kind] = roundedCounts(denseCounts(h, schema));
        cells.set(key, entry);
      }
    }
  };
  walk(dev, 'd');
  walk(queue, 'q');
  for (const c of cells.values()) b.add(c.ts, c.dev, c.cls, c.cell);
}

export interface FleetFrames {
  readonly frames: Frame[];
  /** Columns before this are final: every host was scraped past them (undefined: no data). */
  readonly completeTo: number | undefined;
}

/**
 * The blkheat targets' scrape intervals (s). A range's scrapes are counted at the finest (the
 * most a series can have); a column's closing scrape can come up to the coarsest after it: a
 * range's last column of a host scraped every 15 s read empty for that host when the scrape
 * after the range's end was looked for only two of the fleet's finest intervals (5 s) past it
 * (fleet-live-browser.test.ts, after the page asked its frames again with queue latency).
 */
export interface ScrapeIntervals {
  readonly finest: number;
  readonly coarsest: number;
}

/**
 * Frames of [plan.from, plan.to) at plan.step for the filter (fleet ids), from Prometheus; a big
 * fleet's row from `row.cache` where it has the columns (columns asked that end by
 * `row.finalBefore` are kept there). Without `queue`, no queue latency is asked (see the header).
 */
export async function fleetFrames(
  api: PrometheusApi,
  dir: FleetDirectory,
  plan: FleetPlan,
  filter: FrameFilter,
  intervals: ScrapeIntervals,
  schema: BucketSchema,
  row?: { readonly cache: FleetRowCache; readonly finalBefore: number },
  queue = true,
): Promise<FleetFrames> {
  const b = new ColumnBuilder(plan, schema, queue);
  const scrapes = (plan.to - plan.from) / Math.max(intervals.finest, 1e-3);
  const raw = scrapes <= RAW_SCRAPES_PER_SERIES;
  const named = filter.disks?.filter((d) => d !== FLEET_ROW_ID) ?? [];
  let completeTo: number | undefined = plan.to;
  if (dir.big && wantsOverview(filter)) {
    const ask = (p: FleetPlan, sink: ColumnSink): Promise<void> => increaseColumns(api, dir, p, sink, schema, OVERVIEW, queue);
    await (row ? rowFromCache(row.cache, plan, b, row.finalBefore, ask, queue) : ask(plan, b));
  }
  if (dir.big && named.length === 0) return { frames: b.frames(filter), completeTo };
  const batches = dir.big ? hostBatches(dir, named, raw ? scrapes : (plan.to - plan.from) / plan.step) : [hostMatcher(dir, filter)];
  // One batch at a time: what the fleet server holds of Prometheus' answers stays bounded.
  const newest = new Map<string, number>();
  for (const hosts of batches) {
    if (raw) await rawColumns(api, dir, plan, intervals.coarsest, b, schema, hosts, newest, queue);
    else await increaseColumns(api, dir, plan, b, schema, hosts, queue);
  }
  if (raw) completeTo = completeOf(newest, intervals.coarsest);
  return { frames: b.frames(filter), completeTo };
}

/** Whether a range on a big fleet has the overview row: it names no disk, or that row. */
export function wantsOverview(filter: FrameFilter): boolean {
  return !filter.disks || filter.disks.length === 0 || filter.disks.includes(FLEET_ROW_ID);
}

/**
 * Instance matchers for the hosts of the named disks, each batch of hosts small enough that one
 * answer holds at most RAW_SAMPLES_PER_REQUEST samples (`points` per series: scrapes, or steps).
 */
function hostBatches(dir: FleetDirectory, disks: readonly string[], points: number): string[] {
  const wanted = new Set(disks);
  const instances = [...new Set(dir.disks.filter((d) => wanted.has(d.id)).map((d) => d.instance))].sort();
  const out: string[] = [];
  let batch: string[] = [];
  let samples = 0;
  for (const instance of instances) {
    const cost = dir.seriesOf(instance) * Math.max(1, points);
    if (batch.length > 0 && samples + cost > RAW_SAMPLES_PER_REQUEST) {
      out.push(instanceMatcher(batch));
      batch = [];
      samples = 0;
    }
    batch.push(instance);
    samples += cost;
  }
  if (batch.length > 0) out.push(instanceMatcher(batch));
  return out;
}

/**
 * A label matcher asking Prometheus for the hosts of the disks a request names only (the rows
 * a page shows of a big fleet), or '' for every host: no disks named, or one not known yet.
 */
export function hostMatcher(dir: FleetDirectory, filter: FrameFilter): string {
  if (!filter.disks || filter.disks.length === 0) return '';
  const wanted = new Set(filter.disks);
  const known = dir.disks.filter((d) => wanted.has(d.id));
  if (known.length < wanted.size) return '';
  const instances = [...new Set(known.map((d) => d.instance))];
  if (instances.length === new Set(dir.disks.map((d) => d.instance)).size) return '';
  return instanceMatcher(instances);
}

/** A label matcher for exactly these instances (any names: escaped for RE2, then quoted for PromQL: promql.ts). */
export function instanceMatcher(instances: readonly string[]): string {
  return `{${matcher('instance', '=~', [...instances].sort().map(re2Literal).join('|'))}}`;
}

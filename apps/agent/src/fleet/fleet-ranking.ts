/**
 * The fleet's worst disks over a range, ranked by p99 device latency, computed by Prometheus
 * (PromQL over the native histograms it stores), never by reading samples here: at a thousand
 * hosts the fleet server gets back a few hundred numbers, whatever the range; or, for a big
 * fleet's long range, from every disk's counts summed by Prometheus in parts (below).
 *
 * One instant query ranks every host × disk (`topk` of
 * `histogram_quantile(0.99, sum by (instance, dev, disk) (rate(…[window])))`, every op class
 * together, or the filtered one); then, for the hosts of the ranked disks only, the rest of each
 * row: p99.9, I/Os, failed I/Os, the oldest I/O in flight seen in the range (the agents'
 * newest-second gauge, its highest value), untimed I/Os, and one range query for every row's
 * p99 sparkline (RANKING_SPARK_POINTS steps at most). Seven queries, whatever the fleet's size;
 * none after the first when nothing ranks. A disk whose histograms have no I/O in
 * the range has no p99 and is not ranked.
 *
 * The range counts the scrapes the heat map counts there (docs/fleet.md, "What a cell counts"):
 * the differences between stored scrapes that start in [from, to), i.e. from the first scrape at
 * or after `from` to the first at or after `to`. So each window is the range and one scrape
 * interval more, [from, to + interval), evaluated there (scrapeWindow): it holds those scrapes
 * and no other, two at least for any range of an interval or more. A window of the range alone,
 * ending at `to`, held one scrape fewer: a range of one interval held one scrape, nothing to
 * difference, and the table said "no I/O" beside rows full of it. Counts are the window's rate
 * times the range (the rate over the scrapes' own span: Prometheus extrapolates increase() to
 * the window's edges, here an interval past the range): exact for scrapes an interval apart,
 * estimates where a series begins or ends inside the window. Quantiles are exact to the bucket
 * (the agents' own schema).
 *
 * Over a long range with no filter, a big fleet's ranking reads the per-disk counts of the range
 * (every host's, a histogram each) in parts, most of them kept once final
 * (fleet-ranking-chunks.ts; the first query's cost grew with the range's history): p99, p99.9
 * and the I/Os are then computed here from the summed counts (native-buckets.ts nativeQuantile,
 * as Prometheus computes them), and the rest of the row is asked as above, for the ranked hosts
 * only. The first of the seven queries becomes a few parts, the next two none, and the
 * sparkline's none too: its points are the parts' own (a point per chunk span, sparkFromParts).
 *
 * Label filters (job, instance glob, disk glob, op class) become matchers through promql.ts
 * (quoted, globs escaped), never pasted text. The class filter narrows the latency and error
 * figures; in-flight and untimed I/Os have no class (per disk: the agent's /metrics).
 */
import {
  type BucketSchema,
  DEFAULT_RANKED,
  MAX_RANKED,
  RANKING_SPARK_POINTS,
  type FleetRanking,
  type FleetRankingFilter,
  type RankedDisk,
} from '@blkheat/shared-types';
import { DEVICE_LATENCY_METRIC } from '../server/metrics.js';
import { type FleetDirectory, hostDiskKey } from './fleet-disks.js';
import {
  chunkSeconds,
  fifthSeconds,
  partCounts,
  type PartCounts,
  type CountedPart,
  type RangeCounts,
  type RankingChunkCache,
  rangeCounts,
  rangeParts,
  sparkFromParts,
} from './fleet-ranking-chunks.js';
import { nativeQuantile } from './native-buckets.js';
import type { PrometheusApi } from './prometheus-api.js';
import { labelFilterMatchers, matcher, re2Literal, selector } from './promql.js';

export { MAX_RANKED, type FleetRanking, type RankedDisk } from '@blkheat/shared-types';

export interface RankingRequest {
  /** Unix seconds: the window [from, to). */
  readonly from: number;
  readonly to: number;
  readonly limit?: number | undefined;
  readonly filter?: FleetRankingFilter | undefined;
  /** Prometheus' scrape interval (s): a sparkline step holds two scrapes at least. Default 15. */
  readonly scrapeInterval?: number | undefined;
}

/** The chunks a big fleet's server keeps, and which of them are final now (fleet-ranking-chunks.ts). */
export interface RankingChunks {
  readonly cache: RankingChunkCache;
  /** The head's and tail's fifths kept (their own bound: MAX_FIFTH_NUMBERS); default `cache`. */
  readonly fifths?: RankingChunkCache;
  /** Chunks that end by this (Unix s) are final. */
  readonly finalBefore: number;
  readonly schema: BucketSchema;
}

type Row = Readonly<Record<string, string>>;
const BY = 'instance, dev, disk';

function keyOf(m: Row): string {
  return hostDiskKey(m.instance ?? '', m.dev ?? '');
}

/**
 * The PromQL window of [from, to) and the time to evaluate it at: the range and one scrape
 * interval more, less a millisecond (a range selector's ends are both inside it: the scrape an
 * interval after the first one at or after `to` is left out).
 */
export function scrapeWindow(from: number, to: number, scrapeInterval: number): { readonly window: string; readonly at: number } {
  const ms = Math.round((to - from + scrapeInterval) * 1000) - 1;
  return { window: `${ms}ms`, at: from + ms / 1000 };
}

/** The sparkline's step (s), or undefined when the range holds fewer than two steps. */
export function sparkStep(from: number, to: number, scrapeInterval: number): number | undefined {
  // An increase() window needs two scrapes in it; a step finer than that reads empty.
  const step = Math.max(Math.ceil((to - from) / RANKING_SPARK_POINTS), Math.ceil(2 * scrapeInterval));
  return Math.floor((to - from) / step) >= 2 ? step : undefined;
}

/** Every disk's device latency counts over [from, to): the per-disk rate over its scrape window, times its length. */
async function askPerDisk(api: PrometheusApi, from: number, to: number, scrapeInterval: number, schema: BucketSchema): Promise<PartCounts> {
  const { window, at } = scrapeWindow(from, to, scrapeInterval);
  const samples = await api.instantHistograms(`sum by (${BY}) (rate(${DEVICE_LATENCY_METRIC}[${window}]))`, at);
  return partCounts(samples, to - from, schema);
}

/**
 * Keeps the newest final chunk of [from, to) not kept yet (the fleet server's warm loop); false
 * when every one is kept.
 */
export async function warmRankingChunk(
  api: PrometheusApi,
  chunks: RankingChunks,
  from: number,
  to: number,
  scrapeInterval: number,
): Promise<boolean> {
  const parts = rangeParts(from, to, chunkSeconds(scrapeInterval), chunks.finalBefore);
  if (parts === undefined) return false;
  const start = [...parts.chunks].reverse().find((s) => chunks.cache.get(parts.chunkS, s) === undefined);
  if (start === undefined) return false;
  chunks.cache.put(parts.chunkS, start, await askPerDisk(api, start, start + parts.chunkS, scrapeInterval, chunks.schema));
  return true;
}

/**
 * Keeps the newest final fifth not kept yet of a `spanS` range's head and tail (fleet-ranking-chunks.ts),
 * for a range ending now and one ending a chunk from now (its head's fifths lie a chunk later),
 * so that a page opening on that span in the next minutes asks only the rest of its head and
 * tail of Prometheus; false when every one is kept.
 */
export async function warmRankingFifths(
  api: PrometheusApi,
  chunks: RankingChunks,
  nowS: number,
  spanS: number,
  scrapeInterval: number,
): Promise<boolean> {
  const chunkS = chunkSeconds(scrapeInterval);
  const fifthS = fifthSeconds(chunkS);
  if (fifthS === undefined) return false;
  const fifths = chunks.fifths ?? chunks.cache;
  const wanted = new Set<number>();
  for (const end of [nowS, nowS + chunkS])
    for (const f of rangeParts(end - spanS, end, chunkS, chunks.finalBefore)?.fifths ?? []) wanted.add(f);
  // The wanted fifths kept become the newest, so that what goes first when the cache overfills
  // (a page's ranges add theirs) is what no range wants now; wanted ones that fill it stop it.
  for (const f of wanted) {
    const kept = fifths.get(fifthS, f);
    if (kept) fifths.put(fifthS, f, kept);
  }
  if (fifths.wantedOverThreeQuarters(fifthS, wanted)) return false;
  const start = [...wanted].sort((a, b) => b - a).find((f) => fifths.get(fifthS, f) === undefined);
  if (start === undefined) return false;
  fifths.put(fifthS, start, await askPerDisk(api, start, start + fifthS, scrapeInterval, chunks.schema));
  return true;
}

/** A filter that narrows nothing. */
function unfiltered(f: FleetRankingFilter): boolean {
  return Object.values(f).every((v) => v === undefined);
}

export async function rankFleet(
  api: PrometheusApi,
  dir: FleetDirectory,
  req: RankingRequest,
  chunks?: RankingChunks,
): Promise<FleetRanking> {
  let queries = 0;
  const interval = req.scrapeInterval ?? 15;
  const { window, at } = scrapeWindow(req.from, req.to, interval);
  const instant = (expr: string): ReturnType<PrometheusApi['instant']> => {
    queries++;
    return api.instant(expr, at);
  };
  /** An instant query's vector as key -> value. */
  const byDisk = async (expr: string): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    for (const s of await instant(expr)) {
      const v = Number(s.value[1]);
      if (Number.isFinite(v)) out.set(keyOf(s.metric), v);
    }
    return out;
  };
  const filter = req.filter ?? {};
  const limit = Math.max(1, Math.min(MAX_RANKED, Math.floor(req.limit ?? DEFAULT_RANKED)));
  const rangeS = req.to - req.from;
  /** Per disk, the rate over a window of scrapes (scrapeWindow); `* rangeS` makes it the range's count. */
  const perDisk = (sel: string, w = window): string => `sum by (${BY}) (rate(${sel}[${w}]))`;
  const latency = (extra: readonly string[]): string => selector(DEVICE_LATENCY_METRIC, [...labelFilterMatchers(filter, true), ...extra]);
  const parts = chunks && unfiltered(filter) ? rangeParts(req.from, req.to, chunkSeconds(interval), chunks.finalBefore) : undefined;
  /** Every disk's counts over the range and their schema, where the ranking was computed here from them. */
  let local:
    | {
        readonly disks: Map<string, RangeCounts>;
        readonly parts: readonly CountedPart[];
        readonly chunkS: number;
        readonly schema: BucketSchema;
      }
    | undefined;
  let top: { metric: Row; p99: number }[];
  if (chunks && parts) {
    const ask = (a: number, b: number): Promise<PartCounts> => askPerDisk(api, a, b, interval, chunks.schema);
    const summed = await rangeCounts(chunks.cache, parts, ask, chunks.schema, chunks.fifths);
    queries += summed.asked;
    local = { disks: summed.disks, parts: summed.parts, chunkS: parts.chunkS, schema: chunks.schema };
    top = [...summed.disks.values()].map((d) => ({
      metric: { instance: d.instance, dev: d.dev, disk: d.disk },
      p99: nativeQuantile(0.99, d.counts, chunks.schema),
    }));
  } else {
    top = (await instant(`topk(${limit}, histogram_quantile(0.99, ${perDisk(latency([]))}))`)).map((s) => ({
      metric: s.metric,
      p99: Number(s.value[1]),
    }));
  }
  const ranked = top
    .filter((r) => Number.isFinite(r.p99))
    .sort((a, b) => b.p99 - a.p99 || keyOf(a.metric).localeCompare(keyOf(b.metric)))
    .slice(0, limit);
  const answer = { from: req.from, to: req.to, filter };
  if (ranked.length === 0) return { ...answer, disks: [], hosts: [], prometheusQueries: queries };
  // The ranked hosts only, exactly (any names: escaped as RE2 literals).
  const hosts = matcher('instance', '=~', [...new Set(ranked.map((r) => r.metric.instance ?? ''))].sort().map(re2Literal).join('|'));
  const of = (metric: string, withClass: boolean): string => selector(metric, [...labelFilterMatchers(filter, withClass), hosts]);
  // Ranked from chunks: the sparklines are the parts' (a point per chunk span), no query.
  const sparkLocal =
    local &&
    sparkFromParts(
      local.parts,
      local.chunkS,
      ranked.map((r) => keyOf(r.metric)),
      local.schema,
      RANKING_SPARK_POINTS,
      (c) => nativeQuantile(0.99, c, local.schema),
    );
  // Otherwise one range query (sparkQuery) at this step.
  const step = sparkLocal ? undefined : sparkStep(req.from, req.to, interval);
  const sparkAxis = sparkLocal
    ? { from: sparkLocal.from, step: sparkLocal.step }
    : step !== undefined
      ? { from: req.from, step }
      : undefined;
  const points = sparkLocal ? sparkLocal.points : step === undefined ? 0 : Math.floor((req.to - req.from) / step);
  const sparkQuery = async (): Promise<Map<string, (number | null)[]>> => {
    if (sparkLocal) return sparkLocal.lines;
    const out = new Map<string, (number | null)[]>();
    if (step === undefined) return out;
    queries++;
    // Step k counts the scrapes of [from + k step, from + (k + 1) step), as the table its range.
    const first = scrapeWindow(req.from, req.from + step, interval);
    const series = await api.queryRange(
      `histogram_quantile(0.99, ${perDisk(latency([hosts]), first.window)})`,
      first.at,
      first.at + (points - 1) * step,
      step,
    );
    for (const s of series) {
      const line: (number | null)[] = new Array<number | null>(points).fill(null);
      for (const [t, v] of s.values ?? []) {
        const i = Math.round((t - first.at) / step);
        const n = Number(v);
        if (i >= 0 && i < points && Number.isFinite(n)) line[i] = n;
      }
      out.set(keyOf(s.metric), line);
    }
    return out;
  };
  /** A figure of each ranked disk computed here from its counts (as byDisk, finite values only). */
  const fromCounts = (figure: (counts: Float64Array, schema: BucketSchema) => number): Map<string, number> => {
    const out = new Map<string, number>();
    for (const r of ranked) {
      const counts = local?.disks.get(keyOf(r.metric))?.counts;
      const v = counts && local && figure(counts, local.schema);
      if (v !== undefined && Number.isFinite(v)) out.set(keyOf(r.metric), v);
    }
    return out;
  };
  const [p999, ios, errors, inflight, untimed, spark] = await Promise.all([
    local ? fromCounts((c, schema) => nativeQuantile(0.999, c, schema)) : byDisk(`histogram_quantile(0.999, ${perDisk(latency([hosts]))})`),
    local
      ? fromCounts((c) => c.reduce((a, n) => a + n, 0))
      : byDisk(`sum by (${BY}) (histogram_count(rate(${latency([hosts])}[${window}]))) * ${rangeS}`),
    byDisk(`${perDisk(of('blkheat_io_errors_total', true))} * ${rangeS}`),
    byDisk(`max by (${BY}) (max_over_time(${of('blkheat_inflight_oldest_seconds', false)}[${window}]))`),
    byDisk(`${perDisk(of('blkheat_untimed_ios_total', false))} * ${rangeS}`),
    sparkQuery(),
  ]);
  const disks: RankedDisk[] = ranked.map(({ metric, p99 }) => {
    const key = keyOf(metric);
    const instance = metric.instance ?? '';
    const dev = metric.dev ?? '';
    const id = dir.idOf(instance, dev);
    const link = dir.linkOf(instance);
    const line = spark.get(key);
    return {
      instance,
      disk: metric.disk ?? dev,
      dev,
      ...(id ? { id } : {}),
      ...(link ? { link } : {}),
      p99,
      p999: p999.get(key) ?? null,
      ios: Math.round(ios.get(key) ?? 0),
      errors: Math.round(errors.get(key) ?? 0),
      oldestInflightS: inflight.get(key) ?? null,
      untimed: Math.round(untimed.get(key) ?? 0),
      ...(sparkAxis ? { spark: line ?? new Array<number | null>(points).fill(null) } : {}),
    };
  });
  const byHost = new Map<string, { instance: string; worstP99: number; disks: number }>();
  for (const d of disks) {
    const h = byHost.get(d.instance) ?? { instance: d.instance, worstP99: d.p99, disks: 0 };
    h.disks++;
    byHost.set(d.instance, h);
  }
  return {
    ...answer,
    disks,
    hosts: [...byHost.values()],
    ...(sparkAxis ? { spark: sparkAxis } : {}),
    prometheusQueries: queries,
  };
}

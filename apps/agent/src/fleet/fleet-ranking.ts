/**
 * The fleet's worst disks over a range, ranked by p99 device latency, computed by Prometheus
 * (PromQL over the native histograms it stores), never by reading samples here: at a thousand
 * hosts the fleet server gets back a few hundred numbers, whatever the range.
 *
 * One instant query ranks every host × disk (`topk` of
 * `histogram_quantile(0.99, sum by (instance, dev, disk) (rate(…[window])))`, every op class
 * together, or the filtered one); then, for the hosts of the ranked disks only, the rest of each
 * row: p99.9, I/Os, failed I/Os, the oldest I/O in flight seen in the range (the agents'
 * newest-second gauge, its highest value), untimed I/Os, and one range query for every row's
 * p99 sparkline (RANKING_SPARK_POINTS steps at most). Seven queries, whatever the fleet's size
 * or the range; none after the first when nothing ranks. A disk whose histograms have no I/O in
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
 * Label filters (job, instance glob, disk glob, op class) become matchers through promql.ts
 * (quoted, globs escaped), never pasted text. The class filter narrows the latency and error
 * figures; in-flight and untimed I/Os have no class (per disk: the agent's /metrics).
 */
import {
  DEFAULT_RANKED,
  MAX_RANKED,
  RANKING_SPARK_POINTS,
  type FleetRanking,
  type FleetRankingFilter,
  type RankedDisk,
} from '@blkheat/shared-types';
import { DEVICE_LATENCY_METRIC } from '../server/metrics.js';
import { type FleetDirectory, hostDiskKey } from './fleet-disks.js';
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

export async function rankFleet(api: PrometheusApi, dir: FleetDirectory, req: RankingRequest): Promise<FleetRanking> {
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
  const top = await instant(`topk(${limit}, histogram_quantile(0.99, ${perDisk(latency([]))}))`);
  const ranked = top
    .map((s) => ({ metric: s.metric, p99: Number(s.value[1]) }))
    .filter((r) => Number.isFinite(r.p99))
    .sort((a, b) => b.p99 - a.p99 || keyOf(a.metric).localeCompare(keyOf(b.metric)));
  const answer = { from: req.from, to: req.to, filter };
  if (ranked.length === 0) return { ...answer, disks: [], hosts: [], prometheusQueries: queries };
  // The ranked hosts only, exactly (any names: escaped as RE2 literals).
  const hosts = matcher('instance', '=~', [...new Set(ranked.map((r) => r.metric.instance ?? ''))].sort().map(re2Literal).join('|'));
  const of = (metric: string, withClass: boolean): string => selector(metric, [...labelFilterMatchers(filter, withClass), hosts]);
  const step = sparkStep(req.from, req.to, interval);
  const points = step === undefined ? 0 : Math.floor((req.to - req.from) / step);
  const sparkQuery = async (): Promise<Map<string, (number | null)[]>> => {
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
  const [p999, ios, errors, inflight, untimed, spark] = await Promise.all([
    byDisk(`histogram_quantile(0.999, ${perDisk(latency([hosts]))})`),
    byDisk(`sum by (${BY}) (histogram_count(rate(${latency([hosts])}[${window}]))) * ${rangeS}`),
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
      ...(step !== undefined ? { spark: line ?? new Array<number | null>(points).fill(null) } : {}),
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
    ...(step !== undefined ? { spark: { from: req.from, step } } : {}),
    prometheusQueries: queries,
  };
}

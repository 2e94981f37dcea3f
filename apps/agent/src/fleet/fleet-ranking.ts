/**
 * The fleet's worst disks over a range, ranked by p99 device latency, computed by Prometheus
 * (PromQL over the native histograms it stores), never by reading samples here: at a thousand
 * hosts the fleet server gets back a few hundred numbers, whatever the range.
 *
 * One instant query at the range's end ranks every host × disk (`topk` of
 * `histogram_quantile(0.99, sum by (instance, dev, disk) (increase(…[range])))`, every op class
 * together); then, for the hosts of the ranked disks only, the rest of each row: p99.9, I/Os,
 * failed I/Os, the oldest I/O in flight seen in the range (the agents' newest-second gauge, its
 * highest value), and untimed I/Os. A disk whose histograms have no I/O in the range has no
 * p99 and is not ranked. increase() extrapolates to the window's edges, so counts are estimates
 * within a scrape interval's worth at each edge (docs/fleet.md); quantiles are exact to the
 * bucket (the agents' own schema).
 */
import { DEVICE_LATENCY_METRIC } from '../server/metrics.js';
import type { FleetDirectory } from './fleet-disks.js';
import { instanceMatcher } from './fleet-frames.js';
import type { PrometheusApi } from './prometheus-api.js';

/** Rows at most in one ranking (the table a page shows; the rest of the fleet is not read). */
export const MAX_RANKED = 200;

export interface RankedDisk {
  readonly instance: string;
  readonly disk: string;
  readonly dev: string;
  /** The fleet id of the row (host:disk), when the directory knows it. */
  readonly id?: string;
  /** Device latency quantiles over the range (s), every op class together. */
  readonly p99: number;
  readonly p999: number | null;
  /** Completed I/Os in the range (estimate: increase()). */
  readonly ios: number;
  readonly errors: number;
  /** The oldest I/O with the driver at any second close in the range (s); null: none seen. */
  readonly oldestInflightS: number | null;
  readonly untimed: number;
}

export interface FleetRanking {
  /** Unix seconds: the window [from, to) every figure covers. */
  readonly from: number;
  readonly to: number;
  /** Worst first. */
  readonly disks: readonly RankedDisk[];
  /** Hosts in the order of their worst disk. */
  readonly hosts: readonly { readonly instance: string; readonly worstP99: number; readonly disks: number }[];
}

type Row = Readonly<Record<string, string>>;
const BY = 'instance, dev, disk';

function keyOf(m: Row): string {
  return `${m.instance ?? ''}\u0000${m.dev ?? ''}`;
}

/** An instant query's vector as key -> value. */
async function byDisk(api: PrometheusApi, expr: string, at: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const s of await api.instant(expr, at)) {
    const v = Number(s.value[1]);
    if (Number.isFinite(v)) out.set(keyOf(s.metric), v);
  }
  return out;
}

export async function rankFleet(
  api: PrometheusApi,
  dir: FleetDirectory,
  range: { readonly from: number; readonly to: number; readonly limit?: number },
): Promise<FleetRanking> {
  const limit = Math.max(1, Math.min(MAX_RANKED, Math.floor(range.limit ?? 50)));
  const windowS = Math.max(1, Math.round(range.to - range.from));
  const at = range.to;
  const perDisk = (metric: string): string => `sum by (${BY}) (increase(${metric}[${windowS}s]))`;
  const top = await api.instant(`topk(${limit}, histogram_quantile(0.99, ${perDisk(DEVICE_LATENCY_METRIC)}))`, at);
  const ranked = top
    .map((s) => ({ metric: s.metric, p99: Number(s.value[1]) }))
    .filter((r) => Number.isFinite(r.p99))
    .sort((a, b) => b.p99 - a.p99 || keyOf(a.metric).localeCompare(keyOf(b.metric)));
  if (ranked.length === 0) return { from: range.from, to: range.to, disks: [], hosts: [] };
  const hosts = instanceMatcher([...new Set(ranked.map((r) => r.metric.instance ?? ''))]);
  const of = (metric: string): string => `${metric}${hosts}`;
  const [p999, ios, errors, inflight, untimed] = await Promise.all([
    byDisk(api, `histogram_quantile(0.999, ${perDisk(of(DEVICE_LATENCY_METRIC))})`, at),
    byDisk(api, `sum by (${BY}) (histogram_count(increase(${of(DEVICE_LATENCY_METRIC)}[${windowS}s])))`, at),
    byDisk(api, perDisk(of('blkheat_io_errors_total')), at),
    byDisk(api, `max by (${BY}) (max_over_time(${of('blkheat_inflight_oldest_seconds')}[${windowS}s]))`, at),
    byDisk(api, perDisk(of('blkheat_untimed_ios_total')), at),
  ]);
  const disks: RankedDisk[] = ranked.map(({ metric, p99 }) => {
    const key = keyOf(metric);
    const instance = metric.instance ?? '';
    const dev = metric.dev ?? '';
    const id = dir.idOf(instance, dev);
    return {
      instance,
      disk: metric.disk ?? dev,
      dev,
      ...(id ? { id } : {}),
      p99,
      p999: p999.get(key) ?? null,
      ios: Math.round(ios.get(key) ?? 0),
      errors: Math.round(errors.get(key) ?? 0),
      oldestInflightS: inflight.get(key) ?? null,
      untimed: Math.round(untimed.get(key) ?? 0),
    };
  });
  const byHost = new Map<string, { instance: string; worstP99: number; disks: number }>();
  for (const d of disks) {
    const h = byHost.get(d.instance) ?? { instance: d.instance, worstP99: d.p99, disks: 0 };
    h.disks++;
    byHost.set(d.instance, h);
  }
  return { from: range.from, to: range.to, disks, hosts: [...byHost.values()] };
}

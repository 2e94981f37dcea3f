/**
 * The fleet's stuck I/O now (GET /api/v1/fleet/stuck, added after 0.4.0): every host × disk whose
 * oldest I/O in flight — a request with the driver, or a bio still waiting for a request — is at
 * least `min` seconds old at its newest scrape, oldest first. What the BlkheatIOStuck and
 * BlkheatBiosWaiting alerts watch (deploy/prometheus/blkheat.alerts.yml), as a list.
 *
 * Two instant queries at most, whatever the fleet's size:
 *  1. the candidates: both age gauges over `min` across the fleet (a comparison keeps each
 *     series' name, so the kind is known); nothing over it, nothing more asked;
 *  2. for the candidates' hosts only, the raw samples of their in-flight gauges and window end
 *     over a few scrapes: each row's age, count and scrape time are then all from the host's
 *     newest scrape (one scrape stamps every sample of a host with one time), so a scrape stored
 *     between the two queries cannot pair an age with another scrape's time. A series the newest
 *     scrape no longer has (gone stale) is not listed, nor a disk whose age fell below `min` there.
 *
 * Label filters become matchers through promql.ts (quoted, globs escaped), never pasted text.
 */
import {
  DEFAULT_STUCK_ROWS,
  MAX_STUCK_ROWS,
  type FleetStuck,
  type FleetStuckQuery,
  type StuckDisk,
  type StuckKind,
} from '@blkheat/shared-types';
import { WINDOW_END_METRIC } from '../server/metrics.js';
import { type FleetDirectory, hostDiskKey } from './fleet-disks.js';
import type { PromSeries, PrometheusApi } from './prometheus-api.js';
import { labelFilterMatchers, matcher, re2Literal, selector } from './promql.js';

export type { FleetStuck, FleetStuckQuery } from '@blkheat/shared-types';

/** Each kind's gauges on an agent's /metrics (server/metrics.ts): the oldest one's age, and how many. */
const GAUGES: Readonly<Record<StuckKind, { readonly age: string; readonly count: string }>> = {
  driver: { age: 'blkheat_inflight_oldest_seconds', count: 'blkheat_inflight_ios' },
  waiting: { age: 'blkheat_inflight_waiting_oldest_seconds', count: 'blkheat_inflight_waiting_bios' },
};
const KINDS = Object.keys(GAUGES) as StuckKind[];
const KIND_OF_AGE = new Map(KINDS.map((k) => [GAUGES[k].age, k]));

/** Prometheus' lookback for an instant query (its default): the most the raw window reaches back. */
const LOOKBACK_S = 300;

export interface StuckRequest extends FleetStuckQuery {
  /** Unix seconds to ask at (now). */
  readonly at: number;
  /** Prometheus' scrape interval (s): the raw window holds a few scrapes of the slowest host. */
  readonly scrapeInterval: number;
}

/** `a|b|c` of metric names, for a `__name__=~` matcher (names are [a-z_]: no escaping needed, done anyway). */
function names(list: readonly string[]): string {
  return list.map(re2Literal).join('|');
}

function keyOf(m: { readonly instance?: string | undefined; readonly dev?: string | undefined }): string {
  return hostDiskKey(m.instance ?? '', m.dev ?? '');
}

/** The raw window (s): a few scrapes of the fleet, within Prometheus' lookback. */
export function stuckWindowS(scrapeInterval: number): number {
  return Math.min(LOOKBACK_S, Math.max(120, Math.ceil(4 * scrapeInterval)));
}

export async function stuckFleet(api: PrometheusApi, dir: FleetDirectory, req: StuckRequest): Promise<FleetStuck> {
  const filter = req.filter;
  const limit = Math.max(1, Math.min(MAX_STUCK_ROWS, Math.floor(req.limit ?? DEFAULT_STUCK_ROWS)));
  const answer = { at: req.at, min: req.min, filter };
  const ages = selector('', [matcher('__name__', '=~', names(KINDS.map((k) => GAUGES[k].age))), ...labelFilterMatchers(filter, false)]);
  const candidates = await api.instant(`${ages} >= ${req.min}`, req.at);
  const wanted = new Set(candidates.filter((s) => KIND_OF_AGE.has(s.metric.__name__ ?? '')).map((s) => keyOf(s.metric)));
  if (wanted.size === 0) return { ...answer, disks: [], more: 0, prometheusQueries: 1 };

  // The candidates' hosts, exactly (any names: escaped as RE2 literals). No disk filter: the
  // window end has no disk label, and only the candidates' disks are read below.
  const hostSet = [...new Set([...wanted].map((k) => k.split('\u0000')[0] ?? ''))].sort();
  const gauges = [...KINDS.flatMap((k) => [GAUGES[k].age, GAUGES[k].count]), WINDOW_END_METRIC];
  const raw = await api.rawSamples(
    selector('', [
      matcher('__name__', '=~', names(gauges)),
      ...(filter.job !== undefined ? [matcher('job', '=', filter.job)] : []),
      matcher('instance', '=~', hostSet.map(re2Literal).join('|')),
    ]),
    stuckWindowS(req.scrapeInterval),
    req.at,
  );
  const rows = rowsOf(raw, wanted, req.min, dir);
  rows.sort((a, b) => b.ageS - a.ageS || keyOf(a).localeCompare(keyOf(b)));
  return { ...answer, disks: rows.slice(0, limit), more: Math.max(0, rows.length - limit), prometheusQueries: 2 };
}

/** The newest sample of a series: [unix s, value]. */
function newest(s: PromSeries): readonly [number, number] | undefined {
  const v = s.values?.at(-1);
  return v === undefined ? undefined : [v[0], Number(v[1])];
}

/** The rows of the wanted disks from the raw samples of their hosts, judged at each host's newest scrape. */
function rowsOf(raw: readonly PromSeries[], wanted: ReadonlySet<string>, min: number, dir: FleetDirectory): StuckDisk[] {
  // Each host's newest scrape: its window end is on every scrape of a running agent.
  const scrapeOf = new Map<string, number>();
  for (const s of raw) {
    const t = newest(s)?.[0];
    const instance = s.metric.instance ?? '';
    if (t !== undefined && s.metric.__name__ === WINDOW_END_METRIC)
      scrapeOf.set(instance, Math.max(t, scrapeOf.get(instance) ?? -Infinity));
  }
  /** Per disk, per gauge name: its value at its host's newest scrape (absent: not in that scrape). */
  const byDisk = new Map<string, { metric: Readonly<Record<string, string>>; at: number; values: Map<string, number> }>();
  for (const s of raw) {
    const key = keyOf(s.metric);
    const sample = newest(s);
    const at = scrapeOf.get(s.metric.instance ?? '');
    if (!wanted.has(key) || sample === undefined || at === undefined || sample[0] !== at || !Number.isFinite(sample[1])) continue;
    const d = byDisk.get(key) ?? { metric: s.metric, at, values: new Map<string, number>() };
    d.values.set(s.metric.__name__ ?? '', sample[1]);
    byDisk.set(key, d);
  }
  const rows: StuckDisk[] = [];
  for (const { metric, at, values } of byDisk.values()) {
    const over = KINDS.map((kind) => ({ kind, ageS: values.get(GAUGES[kind].age), inflight: values.get(GAUGES[kind].count) ?? 0 }))
      .filter((k): k is { kind: StuckKind; ageS: number; inflight: number } => k.ageS !== undefined && k.ageS >= min)
      .sort((a, b) => b.ageS - a.ageS);
    const [worst, other] = over;
    if (!worst) continue;
    const instance = metric.instance ?? '';
    const dev = metric.dev ?? '';
    const id = dir.idOf(instance, dev);
    const link = dir.linkOf(instance);
    rows.push({
      instance,
      disk: metric.disk ?? dev,
      dev,
      ...(id ? { id } : {}),
      ...(link ? { link } : {}),
      kind: worst.kind,
      ageS: worst.ageS,
      inflight: Math.round(worst.inflight),
      scrapedAt: at,
      ...(other ? { other: { kind: other.kind, ageS: other.ageS, inflight: Math.round(other.inflight) } } : {}),
    });
  }
  return rows;
}

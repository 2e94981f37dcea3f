/**
 * The fleet page's ranked table (added after 0.4.0): its label filters as the URL carries them,
 * the route's parameters for a visible range, and the scale its p99 sparklines share. The table
 * itself is the fleet server's (GET /api/v1/fleet/ranking: Prometheus ranks, the page draws);
 * the wire types and the cell texts are @blkheat/shared-types' (one formatter per figure).
 */
import { type FleetRanking, type FleetRankingFilter, labelTextProblem, RANKING_FILTER_KEYS } from '@blkheat/shared-types';

export type RankFilter = FleetRankingFilter;
export type RankFilterKey = (typeof RANKING_FILTER_KEYS)[number];
export { RANKING_FILTER_KEYS };

/** Rows the page asks for: a screenful, worst first (the route allows up to MAX_RANKED). */
export const PAGE_RANKED = 50;

/** The URL parameter of each filter: `r` + the route's own name (the page's `disks=`, `classes=` are other things). */
export const RANK_URL_PARAM: Readonly<Record<RankFilterKey, string>> = Object.freeze({
  job: 'rjob',
  instance: 'rinstance',
  disk: 'rdisk',
  class: 'rclass',
});

/** Why a filter's text cannot be sent (the route would refuse it), or undefined. */
export function rankFilterProblem(key: RankFilterKey, text: string): string | undefined {
  const problem = labelTextProblem(text);
  if (problem !== undefined) return `${key} filter: ${problem}`;
  return undefined;
}

/** The filters of a query string; a bad one is dropped and named. */
export function decodeRankFilter(p: URLSearchParams): { filter: RankFilter; problems: string[] } {
  const filter: { -readonly [K in RankFilterKey]?: string } = {};
  const problems: string[] = [];
  for (const key of RANKING_FILTER_KEYS) {
    const v = p.get(RANK_URL_PARAM[key]);
    if (v === null) continue;
    const problem = rankFilterProblem(key, v);
    if (problem !== undefined) problems.push(`${RANK_URL_PARAM[key]}: ${problem}; ignored`);
    else filter[key] = v;
  }
  return { filter, problems };
}

export function encodeRankFilter(f: RankFilter, p: URLSearchParams): void {
  for (const key of RANKING_FILTER_KEYS) {
    const v = f[key];
    if (v !== undefined) p.set(RANK_URL_PARAM[key], v);
  }
}

/** A filter with `key` set to `text` (trimmed), or cleared when the text is empty. */
export function withRankFilter(f: RankFilter, key: RankFilterKey, text: string): RankFilter {
  const v = text.trim();
  const next: { -readonly [K in RankFilterKey]?: string } = { ...f };
  if (v === '') delete next[key];
  else next[key] = v;
  return next;
}

/** How often a ranking can change: a scrape interval, 5 s at least (s). */
export function rankingQuantum(scrapeInterval: number): number {
  return Math.max(5, Math.ceil(scrapeInterval));
}

/**
 * The range a ranking is asked for: the visible range in whole quanta (rankingQuantum). A live
 * view moves every second; Prometheus' answer only changes with a scrape, so the page asks again
 * when the range crosses a quantum, not each second.
 */
export function rankingRange(from: number, to: number, scrapeInterval: number): { from: number; to: number } | undefined {
  const q = rankingQuantum(scrapeInterval);
  const f = Math.floor(from / q) * q;
  const t = Math.floor(to / q) * q;
  return t > f ? { from: f, to: t } : undefined;
}

/** The route's parameters for a range and filter. */
export function rankingParams(range: { from: number; to: number }, f: RankFilter, limit = PAGE_RANKED): Record<string, string | number> {
  const out: Record<string, string | number> = { from: range.from, to: range.to, limit };
  for (const key of RANKING_FILTER_KEYS) {
    const v = f[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/**
 * The latency span every row's sparkline is drawn in (seconds, log scale): the smallest and
 * largest p99 of any step of any row, so rows compare by height. Undefined: no step has one.
 */
export function sparkScale(r: FleetRanking): { lo: number; hi: number } | undefined {
  let lo = Infinity;
  let hi = 0;
  for (const d of r.disks)
    for (const v of d.spark ?? [])
      if (v !== null && v > 0) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
  return hi > 0 ? { lo, hi: Math.max(hi, lo * 1.01) } : undefined;
}

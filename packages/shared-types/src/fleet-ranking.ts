/**
 * The fleet's ranked table on the wire (GET /api/v1/fleet/ranking, added after 0.4.0: a
 * fleet server only): the worst host × disk rows over a range, by p99 device latency, computed by
 * Prometheus (apps/agent/src/fleet/fleet-ranking.ts). Shared by the fleet server, which answers
 * it, and the dashboard, which draws it.
 */
import { formatCount, formatLatency } from './format.js';

/** Rows at most in one ranking (the table a page shows; the rest of the fleet is not read). */
export const MAX_RANKED = 200;
/** Rows when `limit` is not given. */
export const DEFAULT_RANKED = 50;
/** Longest label filter (job, instance pattern, disk pattern, class), characters. */
export const MAX_RANKING_FILTER_CHARS = 128;
/** Points of each row's p99 sparkline at most (one range query over the ranked hosts, or a big fleet's kept chunks). */
export const RANKING_SPARK_POINTS = 24;

/**
 * Label filters of a ranking, each optional. `instance` and `disk` are globs (`*` any run of
 * characters, `?` one; everything else literal), matched against the whole label; `job` and
 * `class` are exact.
 */
export interface FleetRankingFilter {
  readonly job?: string | undefined;
  readonly instance?: string | undefined;
  readonly disk?: string | undefined;
  readonly class?: string | undefined;
}

/** The filter's parameter names, in the order the page and the docs list them. */
export const RANKING_FILTER_KEYS = ['job', 'instance', 'disk', 'class'] as const satisfies readonly (keyof FleetRankingFilter)[];

export interface RankedDisk {
  readonly instance: string;
  /** The disk's kernel name on its host. */
  readonly disk: string;
  /** Its "MAJ:MIN" on its host. */
  readonly dev: string;
  /** The fleet id of the row (host:disk), when the fleet server knows it. */
  readonly id?: string;
  /** The host's own agent dashboard, when the fleet server knows it (docs/fleet.md, links). */
  readonly link?: string;
  /** Device latency quantiles over the range (s), every op class (or the filtered one) together. */
  readonly p99: number;
  readonly p999: number | null;
  /** Completed I/Os in the range (estimate: increase()). */
  readonly ios: number;
  readonly errors: number;
  /** The oldest I/O with the driver at any second close in the range (s); null: none seen. */
  readonly oldestInflightS: number | null;
  readonly untimed: number;
  /** p99 per spark step (FleetRanking.spark), oldest first; null where the step had no I/O. */
  readonly spark?: readonly (number | null)[];
}

export interface FleetRanking {
  /** Unix seconds: the window [from, to) every figure covers. */
  readonly from: number;
  readonly to: number;
  /** Worst first. */
  readonly disks: readonly RankedDisk[];
  /** Hosts in the order of their worst disk. */
  readonly hosts: readonly { readonly instance: string; readonly worstP99: number; readonly disks: number }[];
  /** The filters applied (as given). */
  readonly filter: FleetRankingFilter;
  /**
   * The sparklines' steps: the first ends at `from + step`, each `step` seconds long, the first
   * and last counting only what is inside the range (`from` may be before the range's: a big
   * fleet's points are its chunk spans, added after 0.4.0); absent: none drawn.
   */
  readonly spark?: { readonly from: number; readonly step: number };
  /** Requests this ranking made of Prometheus. */
  readonly prometheusQueries: number;
}

/** A UTF-16 half with no other half: text no UTF-8 label value can be. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What a ranking is asked for (the route's validated parameters). */
export interface FleetRankingQuery {
  /** Unix seconds: the window [from, to). */
  readonly from: number;
  readonly to: number;
  /** Rows at most (1..MAX_RANKED; DEFAULT_RANKED when absent). */
  readonly limit?: number | undefined;
  readonly filter: FleetRankingFilter;
}

/**
 * Why `s` cannot be a label filter, or undefined when it can: empty, longer than
 * MAX_RANKING_FILTER_CHARS, control characters, a lone surrogate or U+FFFD (Prometheus refuses
 * the last two in a query's string: a lone surrogate is no UTF-8, and its lexer reads U+FFFD as
 * "invalid UTF-8 rune"; U+FFFD is what a URL's invalid UTF-8, `%ED%A0%80`, decodes to, so it is
 * bad input, not a label value). The page checks its inputs with it, the fleet server its
 * parameters and the PromQL it builds (apps/agent/src/fleet/promql.ts).
 */
export function labelTextProblem(s: string): string | undefined {
  if (s.length === 0) return 'empty (leave the filter out to match every value)';
  if (s.length > MAX_RANKING_FILTER_CHARS) return `longer than ${MAX_RANKING_FILTER_CHARS} characters`;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(s)) return 'control characters are not allowed';
  if (LONE_SURROGATE.test(s)) return 'not well-formed text (a lone surrogate)';
  if (s.includes('\uFFFD')) return 'not well-formed text (U+FFFD: the parameter was not valid UTF-8)';
  return undefined;
}

/** A ranked row's figures as the fleet page writes them (and its tests read them). */
export function rankedCellTexts(row: RankedDisk): {
  readonly p99: string;
  readonly p999: string;
  readonly ios: string;
  readonly errors: string;
  readonly oldestInflight: string;
  readonly untimed: string;
} {
  return {
    p99: formatLatency(row.p99),
    p999: formatLatency(row.p999),
    ios: formatCount(row.ios),
    errors: formatCount(row.errors),
    oldestInflight: formatLatency(row.oldestInflightS),
    untimed: formatCount(row.untimed),
  };
}

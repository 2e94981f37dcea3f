/**
 * The view as a URL query string, so a reload or a shared link shows the same thing.
 * Only the query string: the fragment carries the access token (`#token=`), which must never
 * travel inside a link someone copies. Defaults are omitted so a plain URL stays plain;
 * anything unparseable falls back to its default rather than breaking the page.
 *
 *   ?live=300                 following live, 300 s wide (default 300)
 *   ?from=1700000000&to=...   a fixed range (unix seconds)
 *   &disks=vda,loop0          disks shown (names or MAJ:MIN); absent = automatic
 *   &classes=Read,Sync-Write  class filter; absent = all classes
 *   &cgroup=/system.slice/x   cgroup filter (a DiskFrame.cg path, "(none)", "(other)" or
 *                             "cgroup#ID"); absent = every cgroup. Not combined with classes:
 *                             when both are given the cgroup wins (cg has no class split).
 *                             An invalid one is dropped.
 *   &lat=queue                latency phase: total, submit, queue or device (absent: the default,
 *                             total when the data has it, else device; model/phase.ts). An
 *                             invalid one is the default, and named.
 *   &color=lin                colour scale (default log)
 *   &scale=shared             one colour scale for every disk (default: each disk its own)
 *   &pct=off                  percentile lines (default on)
 *   &stuck=0.5                I/O in flight longer than this many seconds is stuck (default 1;
 *                             0.01..3600)
 *   &base=1700000000-1700000300   compare (A/B): the baseline range [FROM, TO) in unix seconds
 *   &cmp=1700000300-1700000600    and the comparison range (absent: the visible range)
 *   &rjob=blkheat&rinstance=db-*&rdisk=nvme*&rclass=Read
 *                             a fleet view's ranked table filters (added after 0.4.0; model/
 *                             fleetRanking.ts): job and class exact, instance and disk globs
 *
 * `lat`, `cgroup`, `stuck`, `base`, `cmp` and the ranking filters are checked rather than quietly dropped: a bad value is
 * ignored and named in `problems`, which the page shows (a shared link that silently filtered,
 * judged or compared something else would mislead).
 */
import { CLASS_NAME_RE, type LatencyKind, MAX_FILTER_ITEMS, MAX_SPAN_SECONDS, UNIX_SECONDS_RANGE } from '@blkheat/shared-types';
import { cgroupProblem } from './cgroups.js';
import { parsePhase, PHASES } from './phase.js';
import type { ColourNorm, ColourScaleKind } from './colour.js';
import type { CompareChoice, TimeRange } from './compare.js';
import { DEFAULT_STUCK_SECONDS, parseStuckSeconds } from './stuck.js';
import { decodeRankFilter, encodeRankFilter, type RankFilter } from './fleetRanking.js';

export interface UrlState {
  readonly live: boolean;
  /** Width of the live window in seconds. */
  readonly span: number;
  /** Fixed range when not live. */
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly disks?: readonly string[] | undefined;
  readonly classes: readonly string[];
  /** Cgroup filter; undefined = every cgroup. */
  readonly cgroup?: string | undefined;
  /** The latency phase chosen; undefined: the default (total when the data has it, else device). */
  readonly kind?: LatencyKind | undefined;
  readonly colour: ColourScaleKind;
  readonly norm: ColourNorm;
  readonly percentiles: boolean;
  /** Compare (A/B) ranges; undefined = no comparison. */
  readonly compare: CompareChoice | undefined;
  /** Stuck I/O threshold, seconds. */
  readonly stuck: number;
  /** A fleet view's ranked table filters (absent or empty: the whole fleet). */
  readonly rankFilter?: RankFilter | undefined;
}

/** A decoded URL: its state, and what in it was ignored and why (for the user). */
export interface DecodedUrlState extends UrlState {
  readonly problems: readonly string[];
}

export const DEFAULT_SPAN = 300;
export const MIN_SPAN = 10;
/** The longest view: the longest range the agent answers (31 days). */
export const MAX_SPAN = MAX_SPAN_SECONDS;

export const DEFAULT_URL_STATE: UrlState = Object.freeze({
  live: true,
  span: DEFAULT_SPAN,
  classes: Object.freeze([]) as readonly string[],
  kind: undefined,
  colour: 'log',
  norm: 'disk',
  percentiles: true,
  compare: undefined,
  stuck: DEFAULT_STUCK_SECONDS,
});

const DISK_RE = /^[A-Za-z0-9_.:-]{1,64}$/;
const { min: MIN_TS, max: MAX_TS } = UNIX_SECONDS_RANGE;

function list(v: string | null, re: RegExp): string[] | undefined {
  if (v === null) return undefined;
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => re.test(s));
  return [...new Set(items)].slice(0, MAX_FILTER_ITEMS);
}

function int(v: string | null, lo: number, hi: number): number | undefined {
  if (v === null || !/^\d{1,12}$/.test(v)) return undefined;
  const n = Number(v);
  return n >= lo && n <= hi ? n : undefined;
}

const RANGE_RE = /^(\d{1,12})-(\d{1,12})$/;

/** "1700000000-1700000300" → the range, or why it is not one. */
export function parseRangeParam(v: string): TimeRange | string {
  const m = RANGE_RE.exec(v);
  if (!m) return 'expected FROM-TO in unix seconds';
  const from = Number(m[1]);
  const to = Number(m[2]);
  if (from < MIN_TS || to > MAX_TS) return 'times must lie between 2000 and 2200';
  if (to <= from) return 'TO must be after FROM';
  if (to - from > MAX_SPAN) return `a range spans at most ${MAX_SPAN / 86400} days`;
  return { from, to };
}

export function formatRangeParam(r: TimeRange): string {
  return `${Math.floor(r.from)}-${Math.ceil(r.to)}`;
}

/** The compare ranges of a query, and what was wrong with them (each problem drops that part). */
function decodeCompare(p: URLSearchParams): { compare: CompareChoice | undefined; problems: string[] } {
  const problems: string[] = [];
  const read = (name: string): TimeRange | undefined => {
    const raw = p.get(name);
    if (raw === null) return undefined;
    const r = parseRangeParam(raw);
    if (typeof r !== 'string') return r;
    problems.push(`${name}=${raw.slice(0, 40)} is not a time range (${r}); ignored`);
    return undefined;
  };
  const baseline = read('base');
  const comparison = read('cmp');
  if (!baseline) {
    if (comparison) problems.push('cmp= without a baseline (base=) compares nothing; ignored');
    return { compare: undefined, problems };
  }
  return { compare: comparison ? { baseline, comparison } : { baseline }, problems };
}

/** The cgroup filter of a query, and what was wrong with it (a bad one is dropped). */
function decodeCgroup(p: URLSearchParams): { cgroup: string | undefined; problems: string[] } {
  const g = p.get('cgroup');
  if (g === null) return { cgroup: undefined, problems: [] };
  const problem = cgroupProblem(g);
  if (problem !== undefined)
    return { cgroup: undefined, problems: [`cgroup filter ${JSON.stringify(g.slice(0, 80))} ignored: ${problem}`] };
  const problems = p.get('classes') ? [`class filter ignored: the data has no class split of cgroups, and the link names cgroup ${g}`] : [];
  return { cgroup: g, problems };
}

/** Parses a query string (with or without the leading "?"). Never throws. */
export function decodeUrlState(search: string): DecodedUrlState {
  const p = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const from = int(p.get('from'), MIN_TS, MAX_TS);
  const to = int(p.get('to'), MIN_TS, MAX_TS);
  const fixed = from !== undefined && to !== undefined && to > from && to - from <= MAX_SPAN;
  const span = int(p.get('live'), MIN_SPAN, MAX_SPAN) ?? DEFAULT_SPAN;
  const lat = p.get('lat');
  const kind = parsePhase(lat);
  const latProblems =
    lat !== null && kind === undefined ? [`lat=${lat.slice(0, 32)}: expected ${PHASES.join(', ')}; using the default`] : [];
  const color = p.get('color');
  const { compare, problems: compareProblems } = decodeCompare(p);
  const { cgroup, problems: cgroupProblems } = decodeCgroup(p);
  const stuckText = p.get('stuck');
  const stuck = stuckText === null ? undefined : parseStuckSeconds(stuckText);
  const rank = decodeRankFilter(p);
  const problems = [
    ...latProblems,
    ...cgroupProblems,
    ...(stuck && !stuck.ok ? [stuck.message] : []),
    ...compareProblems,
    ...rank.problems,
  ];
  return {
    live: !fixed,
    span: fixed ? (to as number) - (from as number) : span,
    from: fixed ? from : undefined,
    to: fixed ? to : undefined,
    disks: list(p.get('disks'), DISK_RE),
    classes: cgroup !== undefined ? [] : (list(p.get('classes'), CLASS_NAME_RE) ?? []),
    cgroup,
    kind,
    colour: color === 'lin' ? 'linear' : 'log',
    norm: p.get('scale') === 'shared' ? 'shared' : 'disk',
    percentiles: p.get('pct') !== 'off',
    compare,
    stuck: stuck?.ok ? stuck.value : DEFAULT_STUCK_SECONDS,
    // Absent when empty, as the other defaults a plain URL leaves out.
    ...(Object.keys(rank.filter).length > 0 ? { rankFilter: rank.filter } : {}),
    problems,
  };
}

/** The query string (without "?") for a state; empty for the default view. */
export function encodeUrlState(s: UrlState): string {
  const p = new URLSearchParams();
  if (s.live || s.from === undefined || s.to === undefined) {
    if (s.span !== DEFAULT_SPAN) p.set('live', String(Math.round(s.span)));
  } else {
    p.set('from', String(Math.floor(s.from)));
    p.set('to', String(Math.ceil(s.to)));
  }
  if (s.disks !== undefined) p.set('disks', s.disks.join(','));
  if (s.cgroup !== undefined) p.set('cgroup', s.cgroup);
  else if (s.classes.length > 0) p.set('classes', s.classes.join(','));
  if (s.kind !== undefined) p.set('lat', s.kind);
  if (s.colour !== 'log') p.set('color', 'lin');
  if (s.norm !== 'disk') p.set('scale', s.norm);
  if (!s.percentiles) p.set('pct', 'off');
  if (s.stuck !== DEFAULT_STUCK_SECONDS) p.set('stuck', String(+s.stuck.toFixed(3)));
  if (s.compare) {
    p.set('base', formatRangeParam(s.compare.baseline));
    if (s.compare.comparison) p.set('cmp', formatRangeParam(s.compare.comparison));
  }
  if (s.rankFilter) encodeRankFilter(s.rankFilter, p);
  // Commas, colons and slashes are safe in a query; keep them readable.
  return p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':').replace(/%2F/g, '/');
}

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
 *                             An invalid one is dropped (urlProblems says why).
 *   &lat=queue                latency kind (default device)
 *   &color=lin                colour scale (default log)
 *   &scale=shared             one colour scale for every disk (default: each disk its own)
 *   &pct=off                  percentile lines (default on)
 */
import { type LatencyKind, MAX_SPAN_SECONDS } from '@blkheat/shared-types';
import { cgroupProblem } from './cgroups.js';
import type { ColourNorm, ColourScaleKind } from './colour.js';

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
  readonly kind: LatencyKind;
  readonly colour: ColourScaleKind;
  readonly norm: ColourNorm;
  readonly percentiles: boolean;
}

export const DEFAULT_SPAN = 300;
export const MIN_SPAN = 10;
/** The longest view: the longest range the agent answers (31 days). */
export const MAX_SPAN = MAX_SPAN_SECONDS;

export const DEFAULT_URL_STATE: UrlState = Object.freeze({
  live: true,
  span: DEFAULT_SPAN,
  classes: Object.freeze([]) as readonly string[],
  kind: 'device',
  colour: 'log',
  norm: 'disk',
  percentiles: true,
});

const DISK_RE = /^[A-Za-z0-9_.:-]{1,64}$/;
const CLASS_RE = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;
const MIN_TS = 946684800;
const MAX_TS = 7258118400;

function list(v: string | null, re: RegExp): string[] | undefined {
  if (v === null) return undefined;
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => re.test(s));
  return [...new Set(items)].slice(0, 256);
}

function int(v: string | null, lo: number, hi: number): number | undefined {
  if (v === null || !/^\d{1,12}$/.test(v)) return undefined;
  const n = Number(v);
  return n >= lo && n <= hi ? n : undefined;
}

/** What the query string asked for that could not be used, in words (for a notice). */
export function urlProblems(search: string): string[] {
  const p = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const g = p.get('cgroup');
  const problem = g === null ? undefined : cgroupProblem(g);
  if (problem !== undefined) return [`cgroup filter ${JSON.stringify(g)} ignored: ${problem}`];
  if (g !== null && p.get('classes'))
    return [`class filter ignored: the data has no class split of cgroups, and the link names cgroup ${g}`];
  return [];
}

/** Parses a query string (with or without the leading "?"). Never throws. */
export function decodeUrlState(search: string): UrlState {
  const p = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const from = int(p.get('from'), MIN_TS, MAX_TS);
  const to = int(p.get('to'), MIN_TS, MAX_TS);
  const fixed = from !== undefined && to !== undefined && to > from && to - from <= MAX_SPAN;
  const span = int(p.get('live'), MIN_SPAN, MAX_SPAN) ?? DEFAULT_SPAN;
  const lat = p.get('lat');
  const color = p.get('color');
  const g = p.get('cgroup');
  const cgroup = g !== null && cgroupProblem(g) === undefined ? g : undefined;
  return {
    live: !fixed,
    span: fixed ? (to as number) - (from as number) : span,
    from: fixed ? from : undefined,
    to: fixed ? to : undefined,
    disks: list(p.get('disks'), DISK_RE),
    classes: cgroup !== undefined ? [] : (list(p.get('classes'), CLASS_RE) ?? []),
    cgroup,
    kind: lat === 'queue' ? 'queue' : 'device',
    colour: color === 'lin' ? 'linear' : 'log',
    norm: p.get('scale') === 'shared' ? 'shared' : 'disk',
    percentiles: p.get('pct') !== 'off',
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
  if (s.kind !== 'device') p.set('lat', s.kind);
  if (s.colour !== 'log') p.set('color', 'lin');
  if (s.norm !== 'disk') p.set('scale', s.norm);
  if (!s.percentiles) p.set('pct', 'off');
  // Commas, colons and slashes are safe in a query; keep them readable.
  return p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':').replace(/%2F/g, '/');
}

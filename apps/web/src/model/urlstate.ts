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
 *   &lat=queue                latency kind (default device)
 *   &color=lin                colour scale (default log)
 *   &scale=shared             one colour scale for every disk (default: each disk its own)
 *   &pct=off                  percentile lines (default on)
 *   &stuck=0.5                I/O in flight longer than this many seconds is stuck (default 1;
 *                             0.01..3600; anything else is reported in `problems`)
 */
import { type LatencyKind, MAX_SPAN_SECONDS } from '@blkheat/shared-types';
import type { ColourNorm, ColourScaleKind } from './colour.js';
import { DEFAULT_STUCK_SECONDS, parseStuckSeconds } from './stuck.js';

export interface UrlState {
  readonly live: boolean;
  /** Width of the live window in seconds. */
  readonly span: number;
  /** Fixed range when not live. */
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly disks?: readonly string[] | undefined;
  readonly classes: readonly string[];
  readonly kind: LatencyKind;
  readonly colour: ColourScaleKind;
  readonly norm: ColourNorm;
  readonly percentiles: boolean;
  /** Stuck I/O threshold, seconds. */
  readonly stuck: number;
  /** What was ignored and why (for the page to say so); only some fields report here. */
  readonly problems?: readonly string[] | undefined;
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
  stuck: DEFAULT_STUCK_SECONDS,
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

/** Parses a query string (with or without the leading "?"). Never throws. */
export function decodeUrlState(search: string): UrlState {
  const p = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const from = int(p.get('from'), MIN_TS, MAX_TS);
  const to = int(p.get('to'), MIN_TS, MAX_TS);
  const fixed = from !== undefined && to !== undefined && to > from && to - from <= MAX_SPAN;
  const span = int(p.get('live'), MIN_SPAN, MAX_SPAN) ?? DEFAULT_SPAN;
  const lat = p.get('lat');
  const color = p.get('color');
  const stuckText = p.get('stuck');
  const stuck = stuckText === null ? undefined : parseStuckSeconds(stuckText);
  return {
    live: !fixed,
    span: fixed ? (to as number) - (from as number) : span,
    from: fixed ? from : undefined,
    to: fixed ? to : undefined,
    disks: list(p.get('disks'), DISK_RE),
    classes: list(p.get('classes'), CLASS_RE) ?? [],
    kind: lat === 'queue' ? 'queue' : 'device',
    colour: color === 'lin' ? 'linear' : 'log',
    norm: p.get('scale') === 'shared' ? 'shared' : 'disk',
    percentiles: p.get('pct') !== 'off',
    stuck: stuck?.ok ? stuck.value : DEFAULT_STUCK_SECONDS,
    ...(stuck && !stuck.ok ? { problems: [stuck.message] } : {}),
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
  if (s.classes.length > 0) p.set('classes', s.classes.join(','));
  if (s.kind !== 'device') p.set('lat', s.kind);
  if (s.colour !== 'log') p.set('color', 'lin');
  if (s.norm !== 'disk') p.set('scale', s.norm);
  if (!s.percentiles) p.set('pct', 'off');
  if (s.stuck !== DEFAULT_STUCK_SECONDS) p.set('stuck', String(+s.stuck.toFixed(3)));
  // Commas and colons are safe in a query; keep them readable.
  return p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
}

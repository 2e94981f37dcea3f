/**
 * REST query strings -> the same validated requests the WebSocket takes. Parameters are
 * checked strictly: unknown or repeated-when-single parameters, non-integers, and anything
 * the protocol's zod schemas refuse give a 400 naming the parameter.
 */
import {
  CLASS_NAME_RE,
  describeZodError,
  labelTextProblem,
  listText,
  MAX_CLIENT_MESSAGE_BYTES,
  MAX_RANKED,
  MAX_SPAN_SECONDS,
  RANKING_FILTER_KEYS,
  UNIX_SECONDS_RANGE,
  DEFAULT_STUCK_MIN_S,
  MAX_STUCK_MIN_S,
  MAX_STUCK_ROWS,
  STUCK_FILTER_KEYS,
  type FleetStuckQuery,
  type FleetRankingFilter,
  type FleetRankingQuery,
  rangeRequestSchema,
  samplesRequestSchema,
  type DiskInfo,
  type RangeRequest,
  type SamplesRequest,
} from '@blkheat/shared-types';
import type { z } from 'zod';

export type QueryResult<T> = { ok: true; value: T } | { ok: false; message: string; field: string };

interface ParamSpec {
  /** list: repeatable strings; intlist: repeatable integers. */
  readonly kind: 'int' | 'string' | 'list' | 'intlist';
}

/** Longest query string we look at (the WebSocket's message limit, for symmetry). */
export const MAX_QUERY_BYTES = MAX_CLIENT_MESSAGE_BYTES;
/** The 414 answer's message, whether express or the HTTP parser found the target too long. */
export const TARGET_TOO_LONG_MESSAGE = `request target longer than ${MAX_QUERY_BYTES} bytes`;

/** How message fields are named as query parameters. */
const FIELD_TO_PARAM: Readonly<Record<string, string>> = {
  disks: 'disk',
  classes: 'class',
  cgroups: 'cgroup',
  sizeClasses: 'size',
  phases: 'phase',
};

/** The span every request covers, and the disk and class filter most take. */
const SPAN_PARAMS = { from: { kind: 'int' }, to: { kind: 'int' } } as const satisfies Record<string, ParamSpec>;
const FILTER_PARAMS = { disk: { kind: 'list' }, class: { kind: 'list' } } as const satisfies Record<string, ParamSpec>;

// Keys in this order: an unknown parameter's message lists them so.
// `phase` (added in protocol 7): the phases the frames must carry, as the WebSocket's `phases`.
const RANGE_PARAMS: Readonly<Record<string, ParamSpec>> = {
  ...SPAN_PARAMS,
  step: { kind: 'int' },
  ...FILTER_PARAMS,
  phase: { kind: 'list' },
};

const SAMPLES_PARAMS: Readonly<Record<string, ParamSpec>> = {
  ...SPAN_PARAMS,
  kind: { kind: 'string' },
  minNs: { kind: 'int' },
  maxNs: { kind: 'int' },
  ...FILTER_PARAMS,
  limit: { kind: 'int' },
  pick: { kind: 'string' },
  cgroup: { kind: 'list' },
  size: { kind: 'intlist' },
};

/** The snapshot takes a range's parameters but step (it picks the step as a range does). */
const SNAPSHOT_PARAMS: Readonly<Record<string, ParamSpec>> = { ...SPAN_PARAMS, ...FILTER_PARAMS };

/** A fleet server's ranked table (added after 0.4.0): a span, a row limit and label filters. */
const RANKING_PARAMS: Readonly<Record<string, ParamSpec>> = {
  ...SPAN_PARAMS,
  limit: { kind: 'int' },
  ...Object.fromEntries(RANKING_FILTER_KEYS.map((k) => [k, { kind: 'string' }])),
};

/** A fleet server's stuck I/O now (added after 0.4.0): a threshold, a row limit and label filters. */
const STUCK_PARAMS: Readonly<Record<string, ParamSpec>> = {
  min: { kind: 'int' },
  limit: { kind: 'int' },
  ...Object.fromEntries(STUCK_FILTER_KEYS.map((k) => [k, { kind: 'string' }])),
};

/** Parameters every endpoint tolerates (the token is checked before routing). */
const COMMON_PARAMS = new Set(['token']);

type Collected = Record<string, number | string | string[] | number[]>;

function collect(params: URLSearchParams, specs: Readonly<Record<string, ParamSpec>>, disks: readonly DiskInfo[]): QueryResult<Collected> {
  const out: Collected = Object.create(null) as Collected;
  for (const [key, value] of params) {
    if (COMMON_PARAMS.has(key)) continue;
    // Own properties only: "__proto__" or "constructor" must be unknown parameters, not Object's.
    const spec = Object.hasOwn(specs, key) ? specs[key] : undefined;
    if (!spec) {
      const known = Object.keys(specs);
      const expected = known.length === 0 ? 'this endpoint takes no parameters' : `expected ${listText(known, 'or')}`;
      return { ok: false, field: key.slice(0, 64), message: `${key.slice(0, 64)}: unknown parameter (${expected})` };
    }
    if (spec.kind === 'list') {
      const list = (out[key] as string[] | undefined) ?? [];
      list.push(key === 'disk' ? resolveDisk(value, disks) : value);
      out[key] = list;
      continue;
    }
    if (spec.kind === 'intlist' || spec.kind === 'int') {
      if (!/^-?\d{1,16}$/.test(value))
        return { ok: false, field: key, message: `${key}: expected an integer, got "${value.slice(0, 32)}"` };
    }
    if (spec.kind === 'intlist') {
      const list = (out[key] as number[] | undefined) ?? [];
      list.push(Number(value));
      out[key] = list;
      continue;
    }
    if (Object.hasOwn(out, key)) return { ok: false, field: key, message: `${key}: given more than once` };
    if (spec.kind === 'int') {
      out[key] = Number(value);
    } else {
      out[key] = value;
    }
  }
  return { ok: true, value: out };
}

/** A disk given by kernel name ("loop3") is translated to its "MAJ:MIN"; anything else is left for the schema to judge. */
function resolveDisk(value: string, disks: readonly DiskInfo[]): string {
  return disks.find((d) => d.name === value)?.dev ?? value;
}

function validate<S extends z.ZodType>(schema: S, raw: Record<string, unknown>, required: readonly string[]): QueryResult<z.output<S>> {
  for (const r of required) {
    if (!Object.hasOwn(raw, r)) return { ok: false, field: r, message: `${r}: required` };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const { message, field } = describeZodError(parsed.error);
  const top = (field ?? '').split('.')[0] ?? '';
  const param = FIELD_TO_PARAM[top] ?? (top || 'query');
  return { ok: false, field: param, message: field ? message.replace(field, param) : message };
}

export function parseRangeQuery(params: URLSearchParams, disks: readonly DiskInfo[]): QueryResult<RangeRequest> {
  const c = collect(params, RANGE_PARAMS, disks);
  if (!c.ok) return c;
  const v = c.value;
  return validate(rangeRequestSchema, { t: 'range', id: 0, ...rename(v) }, ['from', 'to']);
}

export function parseSamplesQuery(params: URLSearchParams, disks: readonly DiskInfo[]): QueryResult<SamplesRequest> {
  const c = collect(params, SAMPLES_PARAMS, disks);
  if (!c.ok) return c;
  return validate(samplesRequestSchema, { t: 'samples', id: 0, ...rename(c.value) }, ['from', 'to']);
}

/** The snapshot takes a range's parameters (without step: it picks the step like a range does). */
export function parseSnapshotQuery(params: URLSearchParams, disks: readonly DiskInfo[]): QueryResult<RangeRequest> {
  const c = collect(params, SNAPSHOT_PARAMS, disks);
  if (!c.ok) return c;
  return validate(rangeRequestSchema, { t: 'range', id: 0, ...rename(c.value) }, ['from', 'to']);
}

/** Checks a request without parameters has none (so typos are reported, not ignored). */
export function parseNoQuery(params: URLSearchParams): QueryResult<null> {
  const c = collect(params, {}, []);
  return c.ok ? { ok: true, value: null } : c;
}

function rename(v: Collected): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [k, val] of Object.entries(v)) {
    out[Object.entries(FIELD_TO_PARAM).find(([, param]) => param === k)?.[0] ?? k] = val;
  }
  return out;
}

/** GET /api/v1/fleet/ranking's parameters: every one checked, each problem a 400 naming it. */
export function parseRankingQuery(params: URLSearchParams): QueryResult<FleetRankingQuery> {
  const c = collect(params, RANKING_PARAMS, []);
  if (!c.ok) return c;
  const v = c.value;
  const bad = (field: string, message: string): QueryResult<FleetRankingQuery> => ({ ok: false, field, message: `${field}: ${message}` });
  for (const r of ['from', 'to']) if (!Object.hasOwn(v, r)) return bad(r, 'required');
  const from = v.from as number;
  const to = v.to as number;
  const { min, max } = UNIX_SECONDS_RANGE;
  for (const [k, t] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (t < min || t > max) return bad(k, `expected unix seconds between ${min} and ${max}, got ${t}`);
  }
  if (to <= from) return bad('to', 'must be after from');
  if (to - from > MAX_SPAN_SECONDS) return bad('to', `a range spans at most ${MAX_SPAN_SECONDS / 86400} days`);
  const limit = v.limit as number | undefined;
  if (limit !== undefined && (limit < 1 || limit > MAX_RANKED)) return bad('limit', `expected 1 to ${MAX_RANKED}, got ${limit}`);
  const filter = labelFilter(v, RANKING_FILTER_KEYS);
  if (!filter.ok) return filter;
  return { ok: true, value: { from, to, ...(limit !== undefined ? { limit } : {}), filter: filter.value } };
}

/**
 * The label filter of a fleet route (the ranking's, the stuck list's): each given text checked
 * (labelTextProblem; a class must be a class name), each problem a 400 naming the parameter.
 */
function labelFilter<K extends keyof FleetRankingFilter>(
  v: Readonly<Record<string, unknown>>,
  keys: readonly K[],
): QueryResult<{ [P in K]?: string }> {
  const filter: { [P in K]?: string } = {};
  for (const k of keys) {
    const text = v[k] as string | undefined;
    if (text === undefined) continue;
    const problem = labelTextProblem(text);
    const message =
      problem ??
      (k === 'class' && !CLASS_NAME_RE.test(text) ? `expected an op class name like "Sync-Write", got "${text.slice(0, 32)}"` : undefined);
    if (message !== undefined) return { ok: false, field: k, message: `${k}: ${message}` };
    filter[k] = text;
  }
  return { ok: true, value: filter };
}

/** GET /api/v1/fleet/stuck's parameters: checked as the ranking's are, each problem a 400 naming it. */
export function parseStuckQuery(params: URLSearchParams): QueryResult<FleetStuckQuery> {
  const c = collect(params, STUCK_PARAMS, []);
  if (!c.ok) return c;
  const v = c.value;
  const bad = (field: string, message: string): QueryResult<FleetStuckQuery> => ({ ok: false, field, message: `${field}: ${message}` });
  const min = (v.min as number | undefined) ?? DEFAULT_STUCK_MIN_S;
  if (min < 1 || min > MAX_STUCK_MIN_S) return bad('min', `expected whole seconds from 1 to ${MAX_STUCK_MIN_S}, got ${min}`);
  const limit = v.limit as number | undefined;
  if (limit !== undefined && (limit < 1 || limit > MAX_STUCK_ROWS)) return bad('limit', `expected 1 to ${MAX_STUCK_ROWS}, got ${limit}`);
  const filter = labelFilter(v, STUCK_FILTER_KEYS);
  if (!filter.ok) return filter;
  return { ok: true, value: { min, ...(limit !== undefined ? { limit } : {}), filter: filter.value } };
}

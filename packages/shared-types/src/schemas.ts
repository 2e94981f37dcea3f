/**
 * Runtime validation (zod) of everything that crosses a trust boundary: client WebSocket
 * messages, and snapshot files (imported by the dashboard, possibly hostile). Every limit is
 * explicit so a message or file can never make a receiver allocate without bound.
 */
import { z } from 'zod';
import { type BucketSchema, MAX_BUCKET_COUNT, overflowIndex, schemaProblem } from './buckets.js';
import { CGROUPS_LISTED, type Frame, INFLIGHT_LISTED } from './frame-model.js';
import { listText } from './format.js';
import { protoKeyError, protoKeyPath } from './proto-keys.js';
import { type SparseHist, sparseProblemUpTo } from './histogram.js';
import type { ClientMessage } from './protocol.js';
import { MAX_SAMPLES_PER_ANSWER } from './protocol.js';
import type { Snapshot } from './snapshot.js';
import { MAX_SNAPSHOT_BYTES, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, SNAPSHOT_VERSIONS_READ } from './snapshot.js';

const DAY_SECONDS = 86400;
/** Longest span one request (or snapshot) may cover (31 days), in seconds. */
export const MAX_SPAN_SECONDS = 31 * DAY_SECONDS;
/** Coarsest step a request or frame may have (one day), in seconds. */
export const MAX_STEP_SECONDS = DAY_SECONDS;
/** Most disks / classes a filter may name. */
export const MAX_FILTER_ITEMS = 256;
/** Most frames / samples / disks a snapshot may hold. */
export const SNAPSHOT_LIMITS = Object.freeze({ frames: 200_000, samples: 200_000, disks: 1024, classesPerDisk: 4096 });

export const devSchema = z.string().regex(/^\d{1,4}:\d{1,7}$/, 'expected "MAJ:MIN"');
export const classNameSchema = z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, 'expected a class name like "Sync-Write"');
/** Unix seconds: integer, after 2000-01-01 and before 2200. */
export const unixSecondsSchema = z.number().int().min(946684800).max(7258118400);
const requestIdSchema = z.union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), z.string().max(64)]);
const devListSchema = z.array(devSchema).max(MAX_FILTER_ITEMS);
const classListSchema = z.array(classNameSchema).max(MAX_FILTER_ITEMS);
const stepSchema = z.number().int().min(1).max(MAX_STEP_SECONDS);

function spanOk(v: { from: number; to: number }): boolean {
  return v.to > v.from && v.to - v.from <= MAX_SPAN_SECONDS;
}
const spanMessage = { message: `"to" must be after "from" and at most ${MAX_SPAN_SECONDS} s later`, path: ['to'] };

export const subscribeSchema = z.strictObject({
  t: z.literal('subscribe'),
  disks: devListSchema.optional(),
  classes: classListSchema.optional(),
  backfillFrom: unixSecondsSchema.optional(),
});

export const rangeRequestSchema = z
  .strictObject({
    t: z.literal('range'),
    id: requestIdSchema,
    from: unixSecondsSchema,
    to: unixSecondsSchema,
    step: stepSchema.optional(),
    disks: devListSchema.optional(),
    classes: classListSchema.optional(),
  })
  .refine(spanOk, spanMessage);

export const samplesRequestSchema = z
  .strictObject({
    t: z.literal('samples'),
    id: requestIdSchema,
    from: unixSecondsSchema,
    to: unixSecondsSchema,
    kind: z.enum(['device', 'queue']).optional(),
    minNs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    maxNs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    disks: devListSchema.optional(),
    classes: classListSchema.optional(),
    limit: z.number().int().min(1).max(MAX_SAMPLES_PER_ANSWER).optional(),
  })
  .refine(spanOk, spanMessage)
  .refine((v) => v.minNs === undefined || v.maxNs === undefined || v.maxNs >= v.minNs, {
    message: 'must not be below minNs',
    path: ['maxNs'],
  });

export type ParseResult<T> = { ok: true; value: T } | { ok: false; message: string; field?: string };

/** Turns the first zod issue into a message that names the field. */
export function describeZodError(error: z.ZodError): { message: string; field?: string } {
  const issue = error.issues[0];
  if (!issue) return { message: 'invalid value' };
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
  return field ? { message: `${field}: ${issue.message}`, field } : { message: issue.message };
}

/** Parses and validates one client WebSocket text message. Never throws. */
export function parseClientMessage(text: string): ParseResult<ClientMessage> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, message: 'message is not valid JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, message: 'message must be a JSON object' };
  }
  const proto = protoKeyPath(text, raw);
  if (proto) return protoKeyError(proto);
  const t = (raw as { t?: unknown }).t;
  const schema =
    t === 'subscribe' ? subscribeSchema : t === 'range' ? rangeRequestSchema : t === 'samples' ? samplesRequestSchema : undefined;
  if (!schema) return { ok: false, message: 't: expected "subscribe", "range" or "samples"', field: 't' };
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, ...describeZodError(parsed.error) };
  return { ok: true, value: parsed.data as ClientMessage };
}

// ---- snapshot ----

/**
 * A sparse histogram of any schema data may name (indexes below MAX_BUCKET_COUNT); a snapshot
 * then checks every index against the schema it names (see snapshotSchema).
 */
export const sparseHistSchema = z
  .array(z.number().int().min(0))
  .max(2 * MAX_BUCKET_COUNT)
  .superRefine((h, ctx) => {
    const problem = sparseProblemUpTo(h, MAX_BUCKET_COUNT - 1);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Block status names (blk_status_t without the BLK_STS_ prefix), or "STATUS<n>" for ones this build does not know. */
const statusNameSchema = z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'a block status name like IOERR');

export const classSeriesSchema = z.strictObject({
  c: classNameSchema,
  n: count,
  d: sparseHistSchema,
  q: sparseHistSchema,
  e: z.record(statusNameSchema, count).optional(),
  pt: z.literal(true).optional(),
  b: count.optional(),
  sz: z
    .array(z.strictObject({ s: z.number().int().min(0).max(32), n: count, d: sparseHistSchema }))
    .max(33)
    .optional(),
});

const inflightIoSchema = z.strictObject({
  c: classNameSchema,
  pid: count,
  comm: z.string().max(16),
  sector: count.nullable(),
  bytes: count,
  age_ns: count,
  dev_age_ns: count.nullable(),
});

export const diskFrameSchema = z.strictObject({
  dev: devSchema,
  cls: z.array(classSeriesSchema).max(SNAPSHOT_LIMITS.classesPerDisk),
  dropped: count.optional(),
  missed: count.optional(),
  requeues: count.optional(),
  untimed: z
    .strictObject({ read: count.optional(), write: count.optional(), discard: count.optional(), flush: count.optional() })
    .optional(),
  inflight: z.strictObject({ n: count, oldest_ns: count, ios: z.array(inflightIoSchema).max(INFLIGHT_LISTED) }).optional(),
  cg: z
    .array(z.strictObject({ g: z.string().min(1).max(4096), n: count, d: sparseHistSchema }))
    .max(CGROUPS_LISTED)
    .optional(),
});

export const frameSchema = z.strictObject({
  ts: unixSecondsSchema,
  step: stepSchema,
  disks: z.array(diskFrameSchema).max(SNAPSHOT_LIMITS.disks),
});

export const diskInfoSchema = z.strictObject({
  dev: devSchema,
  name: z.string().min(1).max(192), // 192: a fleet view names a disk "host/disk"
  kind: z.enum(['request', 'bio']),
  present: z.boolean(),
  sizeBytes: count.optional(),
  model: z.string().max(128).optional(),
  host: z.string().min(1).max(128).optional(),
  link: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s]+$/, 'expected an http(s) URL')
    .optional(),
});

export const ioSampleSchema = z.strictObject({
  ts_us: count,
  dev: devSchema,
  c: classNameSchema,
  sector: count.nullable(),
  bytes: count,
  q_ns: count.nullable(),
  d_ns: count,
  pid: count,
  comm: z.string().max(16),
  cgroup: count,
  cg: z.string().min(1).max(4096).optional(),
  outlier: z.boolean(),
});

/** A bucket schema named in data: one the dashboard can draw (scale 2 or 3, sane bounds; see schemaProblem). */
export const bucketSchemaSchema = z
  .strictObject({
    scale: z.number().int().min(0).max(8),
    minIndex: z.number().int().min(-1000).max(1000),
    maxIndex: z.number().int().min(-1000).max(1000),
  })
  .superRefine((s, ctx) => {
    const problem = schemaProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: `bucket schema ${JSON.stringify(s)} cannot be read: ${problem}` });
  });

/**
 * The first histogram of `frames` with a bucket index past the overflow bucket of `schema`
 * (sparse indexes increase, so only the last of each is looked at), with its path.
 */
export function frameBucketProblem(
  frames: readonly Frame[],
  schema: BucketSchema,
): { path: (string | number)[]; index: number } | undefined {
  const top = overflowIndex(schema);
  const last = (h: SparseHist): number => (h.length >= 2 ? (h[h.length - 2] as number) : -1);
  for (let f = 0; f < frames.length; f++) {
    const disks = (frames[f] as Frame).disks;
    for (let d = 0; d < disks.length; d++) {
      const disk = disks[d] as Frame['disks'][number];
      const at = (...rest: (string | number)[]): (string | number)[] => ['frames', f, 'disks', d, ...rest];
      for (let c = 0; c < disk.cls.length; c++) {
        const cls = disk.cls[c] as (typeof disk.cls)[number];
        if (last(cls.d) > top) return { path: at('cls', c, 'd'), index: last(cls.d) };
        if (last(cls.q) > top) return { path: at('cls', c, 'q'), index: last(cls.q) };
        const sz = cls.sz ?? [];
        for (let z = 0; z < sz.length; z++) {
          const h = (sz[z] as (typeof sz)[number]).d;
          if (last(h) > top) return { path: at('cls', c, 'sz', z, 'd'), index: last(h) };
        }
      }
      const cg = disk.cg ?? [];
      for (let g = 0; g < cg.length; g++) {
        const h = (cg[g] as (typeof cg)[number]).d;
        if (last(h) > top) return { path: at('cg', g, 'd'), index: last(h) };
      }
    }
  }
  return undefined;
}

/** A time range of a snapshot's `compare` (added in 0.4.0): whole seconds, to after from, ≤ 31 days. */
const compareRangeSchema = z.strictObject({ from: unixSecondsSchema, to: unixSecondsSchema }).refine(spanOk, spanMessage);

export const snapshotSchema = z
  .strictObject({
    format: z.literal(SNAPSHOT_FORMAT),
    version: z
      .number()
      .int()
      .refine((v) => SNAPSHOT_VERSIONS_READ.includes(v)),
    createdAt: z.string().max(64),
    agent: z.string().max(64),
    host: z.strictObject({ hostname: z.string().max(255), kernel: z.string().max(255), instance: z.string().max(255).optional() }),
    schema: bucketSchemaSchema,
    range: z.strictObject({ from: unixSecondsSchema, to: unixSecondsSchema, step: stepSchema }),
    disks: z.array(diskInfoSchema).max(SNAPSHOT_LIMITS.disks),
    frames: z.array(frameSchema).max(SNAPSHOT_LIMITS.frames),
    samples: z.array(ioSampleSchema).max(SNAPSHOT_LIMITS.samples),
    note: z.string().max(4096).optional(),
    compare: z.strictObject({ baseline: compareRangeSchema, comparison: compareRangeSchema.optional() }).optional(),
  })
  .superRefine((s, ctx) => {
    // Bucket indexes mean something only in the schema the file names (scale 2 or 3).
    const bad = schemaProblem(s.schema) === undefined ? frameBucketProblem(s.frames, s.schema) : undefined;
    if (bad) {
      ctx.addIssue({
        code: 'custom',
        path: bad.path,
        message: `bucket index ${bad.index} is outside 0..${overflowIndex(s.schema)} of the file's bucket schema ${JSON.stringify(s.schema)}`,
      });
    }
    if (s.range.to <= s.range.from) ctx.addIssue({ code: 'custom', path: ['range', 'to'], message: '"to" must be after "from"' });
    if (s.range.to - s.range.from > MAX_SPAN_SECONDS) {
      // The agent never exports more (a request's span is capped the same way).
      ctx.addIssue({
        code: 'custom',
        path: ['range'],
        message: `the snapshot covers ${daysText(s.range.to - s.range.from)}; a snapshot covers at most ${daysText(MAX_SPAN_SECONDS)}`,
      });
    }
    const inside = s.frames.some((f) => f.ts >= s.range.from && f.ts < s.range.to);
    if (s.frames.length > 0 && !inside) {
      // It would import as an empty snapshot, hiding that its data is somewhere else.
      const first = (s.frames[0] as { ts: number }).ts;
      const last = (s.frames[s.frames.length - 1] as { ts: number }).ts;
      ctx.addIssue({
        code: 'custom',
        path: ['frames'],
        message: `none of its ${s.frames.length} frames lies inside its range ${isoText(s.range.from)} – ${isoText(s.range.to)} (they are from ${isoText(first)} – ${isoText(last + 1)})`,
      });
    }
    let prev = -Infinity;
    for (let i = 0; i < s.frames.length; i++) {
      const f = s.frames[i] as { ts: number };
      if (f.ts <= prev) {
        ctx.addIssue({ code: 'custom', path: ['frames', i, 'ts'], message: 'frames must be in strictly increasing time order' });
        return;
      }
      prev = f.ts;
    }
  });

/** "40.5 days" (one decimal at most). */
function daysText(seconds: number): string {
  return `${+(seconds / DAY_SECONDS).toFixed(1)} days`;
}

/** "2024-01-02 03:04:05 UTC", or the raw number for a time Date cannot show. */
function isoText(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  return Number.isNaN(d.getTime()) ? String(unixSeconds) : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A JSON value for a message, never long: 'the string "3"', 'null', 'an object'. */
function valueText(v: unknown): string {
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 32 ? `${v.slice(0, 32)}…` : v)}`;
  if (v === null || typeof v === 'boolean') return String(v);
  return Array.isArray(v) ? 'an array' : 'an object';
}

/** Parses and validates a snapshot file's text. Never throws. */
export function parseSnapshot(text: string): ParseResult<Snapshot> {
  if (text.length > MAX_SNAPSHOT_BYTES) return { ok: false, message: `file is larger than ${MAX_SNAPSHOT_BYTES / 1048576} MiB` };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, message: `not a JSON file (${e instanceof Error ? e.message : String(e)})` };
  }
  if (typeof raw !== 'object' || raw === null || (raw as { format?: unknown }).format !== SNAPSHOT_FORMAT) {
    return { ok: false, message: `not a blkheat snapshot (expected "format": "${SNAPSHOT_FORMAT}")`, field: 'format' };
  }
  const proto = protoKeyPath(text, raw);
  if (proto) return protoKeyError(proto);
  const version = (raw as { version?: unknown }).version;
  const readable = `this build reads versions ${listText(SNAPSHOT_VERSIONS_READ)}`;
  if (typeof version !== 'number') {
    const problem =
      version === undefined ? 'has no "version"' : `"version" must be a number like ${SNAPSHOT_VERSION}, not ${valueText(version)}`;
    return { ok: false, message: `snapshot ${problem} (${readable})`, field: 'version' };
  }
  if (!SNAPSHOT_VERSIONS_READ.includes(version)) {
    return { ok: false, message: `snapshot version ${version} is not supported (${readable})`, field: 'version' };
  }
  const parsed = snapshotSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, ...describeZodError(parsed.error) };
  return { ok: true, value: parsed.data as Snapshot };
}

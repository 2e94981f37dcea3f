/**
 * Runtime validation (zod) of everything that crosses a trust boundary: client WebSocket
 * messages (here), and snapshot files (snapshot-schema.ts: imported by the dashboard, possibly
 * hostile) with the frames, disks and samples they carry (here). Every limit is explicit
 * (limits.ts) so a message or file can never make a receiver allocate without bound.
 * schema-match.ts proves at compile time that each schema accepts exactly its interface.
 */
import { z } from 'zod';
import { MAX_BUCKET_COUNT, schemaProblem } from './buckets.js';
import { CGROUP_PSI_LISTED, CGROUPS_LISTED, INFLIGHT_LISTED, QUEUE_SETTINGS } from './frame-model.js';
import { sparseProblemUpTo } from './histogram.js';
import {
  CLASS_NAME_RE,
  DEV_RE,
  DISK_INFO_LIMITS,
  MAX_CGROUP_PATH_LENGTH,
  MAX_FILTER_ITEMS,
  MAX_REQUEST_ID_LENGTH,
  MAX_SPAN_SECONDS,
  MAX_STEP_SECONDS,
  maxStallMicros,
  SNAPSHOT_LIMITS,
  UNIX_SECONDS_RANGE,
} from './limits.js';
import { protoKeyError, protoKeyPath } from './proto-keys.js';
import { type ClientMessage, MAX_SAMPLES_PER_ANSWER } from './protocol.js';
import { MAX_SIZE_CLASS } from './size-class.js';

export type ParseResult<T> = { ok: true; value: T } | { ok: false; message: string; field?: string };

/** Turns the first zod issue into a message that names the field. */
export function describeZodError(error: z.ZodError): { message: string; field?: string } {
  const issue = error.issues[0];
  if (!issue) return { message: 'invalid value' };
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
  return field ? { message: `${field}: ${issue.message}`, field } : { message: issue.message };
}

export const devSchema = z.string().regex(DEV_RE, 'expected "MAJ:MIN"');
export const classNameSchema = z.string().regex(CLASS_NAME_RE, 'expected a class name like "Sync-Write"');
/** Unix seconds: integer, after 2000-01-01 and before 2200. */
export const unixSecondsSchema = z.number().int().min(UNIX_SECONDS_RANGE.min).max(UNIX_SECONDS_RANGE.max);
export const stepSchema = z.number().int().min(1).max(MAX_STEP_SECONDS);

/** The refinement of a [from, to) range: `to` after `from`, at most MAX_SPAN_SECONDS later. */
export function spanOk(v: { from: number; to: number }): boolean {
  return v.to > v.from && v.to - v.from <= MAX_SPAN_SECONDS;
}
export const spanMessage = { message: `"to" must be after "from" and at most ${MAX_SPAN_SECONDS} s later`, path: ['to'] };

const requestIdSchema = z.union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), z.string().max(MAX_REQUEST_ID_LENGTH)]);
const devListSchema = z.array(devSchema).max(MAX_FILTER_ITEMS);
const classListSchema = z.array(classNameSchema).max(MAX_FILTER_ITEMS);
/** A latency phase (frame-model.ts LATENCY_KINDS; schema-match.ts holds the two alike). */
const latencyKindSchema = z.enum(['total', 'submit', 'queue', 'device']);

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
    /** Added in protocol 7: the phases the answer's frames must carry (each at most once). */
    phases: z
      .array(latencyKindSchema)
      .min(1)
      .max(4)
      .refine((list) => new Set(list).size === list.length, 'each phase at most once')
      .optional(),
  })
  .refine(spanOk, spanMessage);

export const samplesRequestSchema = z
  .strictObject({
    t: z.literal('samples'),
    id: requestIdSchema,
    from: unixSecondsSchema,
    to: unixSecondsSchema,
    /** 'total' and 'submit' added in protocol 4 (samplePhaseNs in sample-phase.ts says what each is of a sample). */
    kind: latencyKindSchema.optional(),
    minNs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    maxNs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    disks: devListSchema.optional(),
    classes: classListSchema.optional(),
    limit: z.number().int().min(1).max(MAX_SAMPLES_PER_ANSWER).optional(),
    /** Added in protocol 4 (sample-spread.ts): the oldest matches, or the slowest and the rest spread over the range. */
    pick: z.enum(['first', 'spread']).optional(),
    /** Added in protocol 5: cgroup paths, and I/O size classes (size-class.ts). */
    cgroups: z.array(z.string().min(1).max(MAX_CGROUP_PATH_LENGTH)).max(MAX_FILTER_ITEMS).optional(),
    sizeClasses: z
      .array(z.number().int().min(0).max(MAX_SIZE_CLASS))
      .max(MAX_SIZE_CLASS + 1)
      .optional(),
  })
  .refine(spanOk, spanMessage)
  .refine((v) => v.minNs === undefined || v.maxNs === undefined || v.maxNs >= v.minNs, {
    message: 'must not be below minNs',
    path: ['maxNs'],
  });

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
  return { ok: true, value: parsed.data };
}

// ---- the data of frames, disks and samples ----

/**
 * A sparse histogram of any schema data may name (indexes below MAX_BUCKET_COUNT); a snapshot
 * then checks every index against the schema it names (see snapshotSchema).
 */
const sparseNumbersSchema = z.array(z.number().int().min(0)).max(2 * MAX_BUCKET_COUNT);

/** Why `h` is not a sparse histogram of indexes below MAX_BUCKET_COUNT, or undefined: one loop over it. */
function sparseHistProblem(h: readonly unknown[]): string | undefined {
  return h.length > 2 * MAX_BUCKET_COUNT ? 'too long' : sparseProblemUpTo(h as number[], MAX_BUCKET_COUNT - 1);
}

/** Adds the issues of a schema run on a part of the value (at `prefix` under it) as the refinement's own. */
function addIssuesAt(ctx: z.RefinementCtx, issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): void {
  for (const issue of issues) ctx.addIssue({ ...issue, code: 'custom', path: [...prefix, ...issue.path], message: issue.message });
}

export const sparseHistSchema = z
  // One loop over the array (sparseProblemUpTo checks every element) rather than zod's schema per
  // number: a snapshot at its class limit holds a quarter of a million histograms, and zod's run
  // per number was most of the 1.6–2 s its worker took to validate one, beside the page importing
  // it (0.7–0.9 s with this, JSON.parse's 0.2–0.3 s included). Only a histogram found wrong is run
  // through zod's per-number schema, which names the element that is not a whole number ≥ 0.
  .custom<number[]>(Array.isArray, 'Invalid input: expected array')
  .superRefine((h, ctx) => {
    const problem = sparseHistProblem(h);
    if (!problem) return;
    const numbers = sparseNumbersSchema.safeParse(h);
    if (!numbers.success) addIssuesAt(ctx, numbers.error.issues);
    else ctx.addIssue({ code: 'custom', message: problem });
  });

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** A process name: the kernel's TASK_COMM_LEN is 16 bytes. */
const commSchema = z.string().max(16);
const cgroupPathSchema = z.string().min(1).max(MAX_CGROUP_PATH_LENGTH);

/** Block status names (blk_status_t without the BLK_STS_ prefix), or "STATUS<n>" for ones this build does not know. */
const statusNameSchema = z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'a block status name like IOERR');

/**
 * The phases of a size class or cgroup series (PhaseSeries): device latency `d`, and from
 * protocol 4 queue, submit-wait and total latency and `wu` (I/Os of `n` in neither `w` nor `t`).
 */
const phaseFields = {
  d: sparseHistSchema,
  q: sparseHistSchema.optional(),
  w: sparseHistSchema.optional(),
  t: sparseHistSchema.optional(),
  wu: count.optional(),
};
/** `wu` counts I/Os of `n`: never more (a class's, a size's or a cgroup's). */
const wuWithinN = (c: { n: number; wu?: number | undefined }): boolean => c.wu === undefined || c.wu <= c.n;
const wuWithinNIssue = { message: 'must not be above n', path: ['wu'] };

export const classSeriesSchema = z
  .strictObject({
    c: classNameSchema,
    n: count,
    d: sparseHistSchema,
    q: sparseHistSchema,
    e: z.record(statusNameSchema, count).optional(),
    pt: z.literal(true).optional(),
    b: count.optional(),
    sz: z
      .array(z.strictObject({ s: z.number().int().min(0).max(32), n: count, ...phaseFields }).refine(wuWithinN, wuWithinNIssue))
      .max(33)
      .optional(),
    /** Added in protocol 4: submit wait, total, and the I/Os of `n` whose submission was not seen (at most `n`). */
    w: sparseHistSchema.optional(),
    t: sparseHistSchema.optional(),
    wu: count.optional(),
  })
  .refine(wuWithinN, wuWithinNIssue);

/** The keys a class series may have for plainClassSeries; one with any other key is checked by classSeriesSchema. */
const PLAIN_CLASS_KEYS: ReadonlySet<string> = new Set(['c', 'n', 'd', 'q', 'w', 't', 'wu', 'b']);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isSparse = (v: unknown): boolean => Array.isArray(v) && sparseHistProblem(v) === undefined;
/** Only its length: what a disk's class list is refused for before its classes are looked at. */
const classCountSchema = z.array(z.unknown()).max(SNAPSHOT_LIMITS.classesPerDisk);

/**
 * The class series that classSeriesSchema accepts, of the plain shape most have (a name, a count,
 * histograms and counters: no errors, sizes or mark), checked in one pass: a fast path that may
 * refuse what the schema accepts, never the other way round (schema-fast-path.test.ts). A snapshot
 * at its class limit holds 123 k of them; zod's run over each was half the worker's validation.
 */
export function plainClassSeries(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!PLAIN_CLASS_KEYS.has(key)) return false;
  return (
    typeof o.c === 'string' &&
    CLASS_NAME_RE.test(o.c) &&
    isCount(o.n) &&
    isSparse(o.d) &&
    isSparse(o.q) &&
    (o.w === undefined || isSparse(o.w)) &&
    (o.t === undefined || isSparse(o.t)) &&
    (o.wu === undefined || (isCount(o.wu) && o.wu <= o.n)) &&
    (o.b === undefined || isCount(o.b))
  );
}

/**
 * A disk's classes: each plain one (plainClassSeries) taken as it is, any other run through
 * classSeriesSchema, whose issues name the class and field as zod's array would.
 */
const classListOfDiskSchema = z
  .custom<z.output<typeof classSeriesSchema>[]>(Array.isArray, 'Invalid input: expected array')
  .superRefine((classes, ctx) => {
    if (classes.length > SNAPSHOT_LIMITS.classesPerDisk) {
      addIssuesAt(ctx, classCountSchema.safeParse(classes).error?.issues ?? []);
      return;
    }
    for (const [i, c] of classes.entries()) {
      if (plainClassSeries(c)) continue;
      const checked = classSeriesSchema.safeParse(c);
      if (!checked.success) addIssuesAt(ctx, checked.error.issues, [i]);
    }
  });

const inflightIoSchema = z.strictObject({
  c: classNameSchema,
  pid: count,
  comm: commSchema,
  sector: count.nullable(),
  bytes: count,
  age_ns: count,
  dev_age_ns: count.nullable(),
});

const inflightStateSchema = z
  .strictObject({
    n: count,
    oldest_ns: count,
    ios: z.array(inflightIoSchema).max(INFLIGHT_LISTED),
    /** Added in protocol 4: bios waiting for a request, the oldest one's age (only with `waiting`), the queue frozen. */
    waiting: count.optional(),
    oldest_wait_ns: count.optional(),
    frozen: z.literal(true).optional(),
  })
  .refine((s) => s.oldest_wait_ns === undefined || s.waiting !== undefined, {
    message: 'only with "waiting"',
    path: ['oldest_wait_ns'],
  });

export const diskFrameSchema = z.strictObject({
  dev: devSchema,
  cls: classListOfDiskSchema,
  dropped: count.optional(),
  missed: count.optional(),
  requeues: count.optional(),
  untimed: z
    .strictObject({ read: count.optional(), write: count.optional(), discard: count.optional(), flush: count.optional() })
    .optional(),
  inflight: inflightStateSchema.optional(),
  cg: z
    .array(z.strictObject({ g: cgroupPathSchema, n: count, ...phaseFields }).refine(wuWithinN, wuWithinNIssue))
    .max(CGROUPS_LISTED)
    .optional(),
  /** Added in protocol 4: one key per SubmitCause (schema-match.ts fails when a cause is added to one side only). */
  causes: z.strictObject({ frozen: count.optional(), refused: count.optional() }).optional(),
  /** Added in protocol 4. */
  wbt: count.optional(),
  /** Added in protocol 5 (snapshot 5). */
  tags_full: count.optional(),
  /** Added in protocol 4: each QueueSetting at most once. */
  queue_changed: z
    .array(z.enum(QUEUE_SETTINGS))
    .max(QUEUE_SETTINGS.length)
    .refine((a) => new Set(a).size === a.length, 'each setting at most once')
    .optional(),
});

export const frameSchema = z
  .strictObject({
    ts: unixSecondsSchema,
    step: stepSchema,
    disks: z.array(diskFrameSchema).max(SNAPSHOT_LIMITS.disks),
    /** Added in protocol 4: the host's I/O pressure, each at most the step (maxStallMicros). */
    psi: z.strictObject({ some_us: count, full_us: count }).optional(),
    /** Added in protocol 4: cgroups' I/O pressure, each path once, each at most the step. */
    cg_psi: z
      .array(z.strictObject({ g: cgroupPathSchema, some_us: count, full_us: count }))
      .max(CGROUP_PSI_LISTED)
      .optional(),
  })
  .superRefine((f, ctx) => {
    const most = maxStallMicros(f.step);
    for (const key of ['some_us', 'full_us'] as const) {
      if (f.psi && f.psi[key] > most)
        ctx.addIssue({ code: 'custom', message: `must not be above the step (${most} µs)`, path: ['psi', key] });
      for (const [i, p] of (f.cg_psi ?? []).entries())
        if (p[key] > most) ctx.addIssue({ code: 'custom', message: `must not be above the step (${most} µs)`, path: ['cg_psi', i, key] });
    }
    const paths = new Set<string>();
    for (const [i, p] of (f.cg_psi ?? []).entries()) {
      if (paths.has(p.g)) ctx.addIssue({ code: 'custom', message: `"${p.g}" is listed twice`, path: ['cg_psi', i, 'g'] });
      paths.add(p.g);
    }
  });

export const diskInfoSchema = z.strictObject({
  dev: devSchema,
  name: z.string().min(1).max(DISK_INFO_LIMITS.name),
  kind: z.enum(['request', 'bio']),
  present: z.boolean(),
  sizeBytes: count.optional(),
  model: z.string().max(DISK_INFO_LIMITS.model).optional(),
  host: z.string().min(1).max(DISK_INFO_LIMITS.host).optional(),
  link: z
    .string()
    .max(DISK_INFO_LIMITS.link)
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
  /** Added in protocol 4: null when the bio's submission was not seen. */
  w_ns: count.nullable().optional(),
  pid: count,
  comm: commSchema,
  cgroup: count,
  cg: cgroupPathSchema.optional(),
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

/**
 * Runtime validation (zod) of snapshot files: the dashboard imports them, so they may be
 * hostile. schema-match.ts proves snapshotSchema accepts exactly Snapshot.
 */
import { z } from 'zod';
import { type BucketSchema, overflowIndex, schemaProblem } from './buckets.js';
import type { Frame, PhaseSeries } from './frame-model.js';
import { listText } from './format.js';
import { DAY_SECONDS, MAX_HOST_FIELD_LENGTH, MAX_NOTE_LENGTH, MAX_SPAN_SECONDS, SNAPSHOT_LIMITS } from './limits.js';
import { protoKeyError, protoKeyPath } from './proto-keys.js';
import {
  bucketSchemaSchema,
  describeZodError,
  diskInfoSchema,
  frameSchema,
  ioSampleSchema,
  type ParseResult,
  spanMessage,
  spanOk,
  stepSchema,
  unixSecondsSchema,
} from './schemas.js';
import { MAX_SNAPSHOT_BYTES, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, SNAPSHOT_VERSIONS_READ, type Snapshot } from './snapshot.js';

/** The first phase histogram of a series (PhaseSeries) with a bucket index past `top`, with its path under `prefix`. */
function phaseBucketProblem(
  series: PhaseSeries,
  top: number,
  ...prefix: (string | number)[]
): { path: (string | number)[]; index: number } | undefined {
  for (const key of ['d', 'q', 'w', 't'] as const) {
    const index = series[key]?.at(-2) ?? -1;
    if (index > top) return { path: [...prefix, key], index };
  }
  return undefined;
}

/**
 * The first histogram of `frames` with a bucket index past the overflow bucket of `schema`
 * (sparse indexes increase, so only the last of each is looked at), with its path.
 */
export function frameBucketProblem(
  frames: readonly Frame[],
  schema: BucketSchema,
): { path: (string | number)[]; index: number } | undefined {
  const top = overflowIndex(schema);
  for (const [f, frame] of frames.entries()) {
    for (const [d, disk] of frame.disks.entries()) {
      const at = (...rest: (string | number)[]): (string | number)[] => ['frames', f, 'disks', d, ...rest];
      for (const [c, cls] of disk.cls.entries()) {
        const bad = phaseBucketProblem(cls, top) ?? (cls.sz ?? []).map((size, s) => phaseBucketProblem(size, top, 'sz', s)).find(Boolean);
        if (bad) return { path: at('cls', c, ...bad.path), index: bad.index };
      }
      for (const [g, cg] of (disk.cg ?? []).entries()) {
        const bad = phaseBucketProblem(cg, top, 'cg', g);
        if (bad) return { path: at(...bad.path), index: bad.index };
      }
    }
  }
  return undefined;
}

/** A time range of a snapshot's `compare` (added in 0.4.0): whole seconds, to after from, ≤ 31 days. */
const compareRangeSchema = z.strictObject({ from: unixSecondsSchema, to: unixSecondsSchema }).refine(spanOk, spanMessage);
const hostFieldSchema = z.string().max(MAX_HOST_FIELD_LENGTH);

export const snapshotSchema = z
  .strictObject({
    format: z.literal(SNAPSHOT_FORMAT),
    version: z
      .number()
      .int()
      .refine((v) => SNAPSHOT_VERSIONS_READ.includes(v)),
    createdAt: z.string().max(64),
    agent: z.string().max(64),
    host: z.strictObject({ hostname: hostFieldSchema, kernel: hostFieldSchema, instance: hostFieldSchema.optional() }),
    schema: bucketSchemaSchema,
    range: z.strictObject({ from: unixSecondsSchema, to: unixSecondsSchema, step: stepSchema }),
    disks: z.array(diskInfoSchema).max(SNAPSHOT_LIMITS.disks),
    frames: z.array(frameSchema).max(SNAPSHOT_LIMITS.frames),
    samples: z.array(ioSampleSchema).max(SNAPSHOT_LIMITS.samples),
    note: z.string().max(MAX_NOTE_LENGTH).optional(),
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
    const first = s.frames[0];
    const lastFrame = s.frames.at(-1);
    if (first && lastFrame && !s.frames.some((f) => f.ts >= s.range.from && f.ts < s.range.to)) {
      // It would import as an empty snapshot, hiding that its data is somewhere else.
      ctx.addIssue({
        code: 'custom',
        path: ['frames'],
        message: `none of its ${s.frames.length} frames lies inside its range ${isoText(s.range.from)} – ${isoText(s.range.to)} (they are from ${isoText(first.ts)} – ${isoText(lastFrame.ts + 1)})`,
      });
    }
    let prev = -Infinity;
    for (const [i, f] of s.frames.entries()) {
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
  return { ok: true, value: parsed.data };
}

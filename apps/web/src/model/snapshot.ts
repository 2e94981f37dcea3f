/**
 * Snapshot export and import on the dashboard side. The format and its validation belong to
 * shared-types (the agent writes the same file at /api/v1/snapshot); here: reading a file the
 * user dropped (which may be hostile), cutting a snapshot down to a range, building one from
 * frames in memory, and naming the download.
 */
import {
  type BucketSchema,
  type DiskInfo,
  formatBytes,
  type Frame,
  type HostInfo,
  type IoSample,
  MAX_SNAPSHOT_BYTES,
  parseSnapshot,
  type ParseResult,
  type Snapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
} from '@blkheat/shared-types';
import type { CompareChoice, TimeRange } from './compare.js';

/** Refuses oversized files before reading them into memory. */
export function checkSnapshotSize(bytes: number): string | undefined {
  if (bytes > MAX_SNAPSHOT_BYTES) {
    return `file is ${formatBytes(bytes)}; snapshots larger than ${formatBytes(MAX_SNAPSHOT_BYTES)} are refused`;
  }
  if (bytes === 0) return 'file is empty';
  return undefined;
}

/** Parses and validates a snapshot file's text. Never throws; the message is for people. */
export function importSnapshotText(text: string): ParseResult<Snapshot> {
  try {
    return parseSnapshot(text);
  } catch (e) {
    // parseSnapshot does not throw by contract; a bug there must still not take the page down.
    return { ok: false, message: `could not read the snapshot (${e instanceof Error ? e.message : String(e)})` };
  }
}

/** The file text of a snapshot (compact JSON, as the agent writes it). */
export function exportSnapshotText(s: Snapshot): string {
  return JSON.stringify(s);
}

/**
 * The part of a snapshot inside [from, to), widened to whole steps. A range covering the whole
 * snapshot returns it unchanged, so re-exporting an imported file reproduces it exactly.
 */
export function sliceSnapshot(s: Snapshot, from: number, to: number): Snapshot {
  const step = s.range.step;
  const a = Math.max(s.range.from, Math.floor(from / step) * step);
  const b = Math.min(s.range.to, Math.ceil(to / step) * step);
  if (a <= s.range.from && b >= s.range.to) return s;
  if (b <= a) throw new RangeError(`range [${from}, ${to}) does not overlap the snapshot`);
  return {
    ...s,
    createdAt: new Date().toISOString(),
    range: { from: a, to: b, step },
    frames: s.frames.filter((f) => f.ts >= a && f.ts < b),
    samples: s.samples.filter((x) => x.ts_us >= a * 1e6 && x.ts_us < b * 1e6),
  };
}

export interface SnapshotMeta {
  readonly agent: string;
  readonly host: HostInfo;
  readonly schema: BucketSchema;
  readonly disks: readonly DiskInfo[];
}

/**
 * A snapshot built from frames the dashboard holds, for when the agent cannot make one (it went
 * away mid-incident). Frames must be time-ordered and share one step.
 */
export function snapshotFromFrames(
  meta: SnapshotMeta,
  frames: readonly Frame[],
  samples: readonly IoSample[],
  range: { from: number; to: number; step: number },
  note?: string,
): Snapshot {
  const snap: Snapshot = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    createdAt: new Date().toISOString(),
    agent: meta.agent,
    host: meta.host,
    schema: meta.schema,
    range,
    disks: meta.disks,
    frames: frames.filter((f) => f.ts >= range.from && f.ts < range.to && f.disks.length > 0),
    samples: samples.filter((x) => x.ts_us >= range.from * 1e6 && x.ts_us < range.to * 1e6),
  };
  return note === undefined ? snap : { ...snap, note };
}

/** "blkheat-myhost-20240102T030405Z.json" for the range start. */
export function snapshotFileName(host: string, from: number, ext = 'json'): string {
  const safeHost = host.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'host';
  const iso = new Date(from * 1000)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `blkheat-${safeHost}-${iso}.${ext}`;
}

/** The snapshot field for a compare choice (docs/snapshot.md: `compare`, added in 0.4.0). */
function compareField(c: CompareChoice): NonNullable<Snapshot['compare']> {
  const r = (x: TimeRange): { from: number; to: number } => ({ from: Math.floor(x.from), to: Math.ceil(x.to) });
  return c.comparison ? { baseline: r(c.baseline), comparison: r(c.comparison) } : { baseline: r(c.baseline) };
}

/** The snapshot with the compare view that is open (none: without the field). */
export function snapshotWithCompare(s: Snapshot, compare: CompareChoice | undefined): Snapshot {
  const { compare: _old, ...rest } = s;
  return compare ? { ...rest, compare: compareField(compare) } : rest;
}

/**
 * The agent's snapshot file text with the page's compare view added as the last field. The
 * text is spliced, not re-serialised: the file may be tens of MB, and what the agent wrote
 * stays byte for byte. Throws on text that is not one JSON object (the agent's answer is).
 */
export function snapshotTextWithCompare(text: string, compare: CompareChoice): string {
  const end = text.trimEnd();
  if (!text.trimStart().startsWith('{') || !end.endsWith('}')) throw new Error('the agent did not answer with a snapshot object');
  if (/^\s*\{\s*\}$/.test(end)) throw new Error('the agent answered with an empty object');
  return `${end.slice(0, -1)},"compare":${JSON.stringify(compareField(compare))}}`;
}

/**
 * The compare view a snapshot carries: undefined without one, or why it cannot be shown (a
 * range outside the file's own range has no frames here).
 */
export function compareInSnapshot(s: Snapshot): CompareChoice | undefined | string {
  const c = s.compare;
  if (!c) return undefined;
  const outside = (name: string, r: TimeRange): string | undefined =>
    r.to <= s.range.from || r.from >= s.range.to
      ? `its compare ${name} range lies outside its range; the comparison is not shown`
      : undefined;
  const problem = outside('baseline', c.baseline) ?? (c.comparison ? outside('comparison', c.comparison) : undefined);
  if (problem) return problem;
  return c.comparison ? { baseline: c.baseline, comparison: c.comparison } : { baseline: c.baseline };
}

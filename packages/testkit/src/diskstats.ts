/**
 * /proc/diskstats: the kernel's per-device I/O counters, the ground truth for counting tests.
 * Format (Documentation/admin-guide/iostats.rst): major minor name, then 11 fields, 15 since
 * 4.18 (discards), 17 since 5.5 (flushes). Missing fields read as 0.
 */
import { readFileSync } from 'node:fs';

export interface DiskStats {
  readonly major: number;
  readonly minor: number;
  readonly name: string;
  /** "MAJ:MIN" */
  readonly dev: string;
  /** Reads completed successfully. */
  readonly reads: number;
  readonly readsMerged: number;
  readonly sectorsRead: number;
  readonly readTimeMs: number;
  /** Writes completed successfully. */
  readonly writes: number;
  readonly writesMerged: number;
  readonly sectorsWritten: number;
  readonly writeTimeMs: number;
  /** I/Os currently in progress (a gauge, not a counter). */
  readonly inFlight: number;
  readonly ioTimeMs: number;
  readonly weightedIoTimeMs: number;
  /** Discards completed successfully (4.18+). */
  readonly discards: number;
  readonly discardsMerged: number;
  readonly sectorsDiscarded: number;
  readonly discardTimeMs: number;
  /** Flush requests completed successfully (5.5+). */
  readonly flushes: number;
  readonly flushTimeMs: number;
}

/** Counter fields, in /proc/diskstats order after major, minor and name. */
const FIELDS = [
  'reads',
  'readsMerged',
  'sectorsRead',
  'readTimeMs',
  'writes',
  'writesMerged',
  'sectorsWritten',
  'writeTimeMs',
  'inFlight',
  'ioTimeMs',
  'weightedIoTimeMs',
  'discards',
  'discardsMerged',
  'sectorsDiscarded',
  'discardTimeMs',
  'flushes',
  'flushTimeMs',
] as const;

type Field = (typeof FIELDS)[number];

export type DiskStatsDelta = { readonly name: string; readonly dev: string } & { readonly [K in Exclude<Field, 'inFlight'>]: number };

export function parseDiskstats(text: string): Map<string, DiskStats> {
  const out = new Map<string, DiskStats>();
  for (const line of text.split('\n')) {
    const parts = line.trim().split(/\s+/);
    if (parts.length < 14) continue;
    const [majorText, minorText, name] = parts;
    const major = Number(majorText);
    const minor = Number(minorText);
    if (name === undefined || !Number.isInteger(major) || !Number.isInteger(minor)) continue;
    const values = {} as Record<Field, number>;
    FIELDS.forEach((field, i) => {
      const raw = parts[3 + i];
      values[field] = raw === undefined ? 0 : Number(raw);
    });
    out.set(name, { major, minor, name, dev: `${major}:${minor}`, ...values });
  }
  return out;
}

export function readDiskstats(path = '/proc/diskstats'): Map<string, DiskStats> {
  return parseDiskstats(readFileSync(path, 'utf8'));
}

/**
 * Per-device counter deltas after - before. Devices that appeared in between count from zero;
 * devices that disappeared are left out. inFlight (a gauge) is not part of a delta.
 */
export function diskstatsDelta(before: Map<string, DiskStats>, after: Map<string, DiskStats>): Map<string, DiskStatsDelta> {
  const out = new Map<string, DiskStatsDelta>();
  for (const [name, now] of after) {
    const then = before.get(name);
    const delta = {} as Record<Exclude<Field, 'inFlight'>, number>;
    for (const field of FIELDS) {
      if (field === 'inFlight') continue;
      delta[field] = now[field] - (then?.[field] ?? 0);
    }
    out.set(name, { name, dev: now.dev, ...delta });
  }
  return out;
}

/** Requests completed of every kind: reads + writes + discards + flushes. */
export function completedRequests(stats: Pick<DiskStats, 'reads' | 'writes' | 'discards' | 'flushes'>): number {
  return stats.reads + stats.writes + stats.discards + stats.flushes;
}

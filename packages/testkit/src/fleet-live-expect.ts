/**
 * What a fleet view's column should hold, from what a simulated host served (its seconds) and
 * the scrapes of it Prometheus stored (their times and the host's window ends): the fleet server
 * dates each difference between two stored scrapes by the window ends, [end before, end after),
 * and gives it whole to the column that span starts in (docs/fleet.md, "What a cell counts").
 */
import { bucketCount, type BucketSchema, type ClassSeries, type Frame, mergeFrames } from '@blkheat/shared-types';

/** One scrape Prometheus stored: its time (s) and the host's window end in it. */
export interface StoredScrape {
  readonly at: number;
  readonly end: number;
}

/** A host's stored scrapes over the `lookbackS` before `at`, oldest first (its window end gauge, raw). */
export async function scrapesOf(promUrl: string, instance: string, at: number, lookbackS = 900): Promise<StoredScrape[]> {
  const q = `blkheat_histogram_window_end_seconds{instance="${instance}"}[${lookbackS}s]`;
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}&time=${at}`);
  const body = (await res.json()) as { data: { result: { values: [number, string][] }[] } };
  return (body.data.result[0]?.values ?? []).map(([t, v]) => ({ at: t, end: Number(v) }));
}

export interface ExpectedColumn {
  /** The host's seconds of the column merged (every field the host served). */
  readonly frame: Frame;
  /** I/Os in it. */
  readonly ios: number;
  /** The scrape differences it holds, as [from, to) of the host's seconds. */
  readonly spans: readonly (readonly [number, number])[];
}

/** The host's share of column [ts, ts + step): the differences of its stored scrapes that start in it. */
export function expectedColumn(
  served: readonly Frame[],
  scrapes: readonly StoredScrape[],
  ts: number,
  step: number,
  schema: BucketSchema,
): ExpectedColumn {
  const spans: [number, number][] = [];
  let prev: number | undefined;
  for (const s of scrapes) {
    // As the fleet server: a scrape whose window end did not move is no difference.
    if (prev !== undefined && s.end > prev && prev >= ts && prev < ts + step) spans.push([prev, s.end]);
    if (prev === undefined || s.end > prev) prev = s.end;
  }
  const seconds = served.filter((f) => spans.some(([a, b]) => f.ts >= a && f.ts < b));
  const frame = mergeFrames(seconds, ts, step, schema);
  const ios = frame.disks.reduce((n, d) => n + d.cls.reduce((m, c) => m + c.n, 0), 0);
  return { frame, ios, spans };
}

/** The device latency of every class of a disk, dense (as a heat map column counts it). */
export function denseDevice(cls: readonly ClassSeries[], schema: BucketSchema): number[] {
  return densePhase(cls, schema, 'd');
}

/** Per dense bucket, summed over the classes: device latency (`d`) or queue latency (`q`), as a heat map column holds it. */
export function densePhase(cls: readonly ClassSeries[], schema: BucketSchema, phase: 'd' | 'q'): number[] {
  const out = new Array<number>(bucketCount(schema)).fill(0);
  for (const c of cls) {
    const h = c[phase];
    for (let i = 0; i < h.length; i += 2) out[h[i] as number] = (out[h[i] as number] as number) + (h[i + 1] as number);
  }
  return out;
}

/** Figures as "min / median / max (n)", for diagnostics. */
export function sortedFigures(values: readonly number[], digits = 2): string {
  if (values.length === 0) return 'none';
  const s = [...values].sort((a, b) => a - b);
  const median = s[Math.floor(s.length / 2)] as number;
  return `${(s[0] as number).toFixed(digits)} / ${median.toFixed(digits)} / ${(s[s.length - 1] as number).toFixed(digits)} (min / median / max of ${s.length})`;
}

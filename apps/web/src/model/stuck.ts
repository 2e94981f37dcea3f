/**
 * Stuck I/O: an I/O still in flight longer than a threshold. Two questions, both answered from
 * `DiskFrame.inflight` (protocol 2):
 *
 *   - Is a disk stuck now? Judged on the newest live frame only (`stuckNow`): what was in flight
 *     when that second closed. An I/O that completed is not in it any more, so the verdict ends
 *     with the I/O.
 *   - Where did each stuck I/O start and how long did it hang? (`stuckSpans`, for the heat map's
 *     marks) From every frame that listed it: start = frame ts + step − age (the age is measured
 *     when the step closed), end = the end of the newest frame that still had it in flight. For a
 *     merged (coarse) frame the in-flight state is that of its worst second, so its start is only
 *     known to within the frame's step (it is put at the latest possible second).
 *
 * Bios waiting for a request (protocol 4: `inflight.waiting`, `oldest_wait_ns`) count too: a
 * queue frozen for 10 s holds its bios before any request exists, so nothing is "in flight" with
 * the driver, yet the application has waited 10 s. The oldest waiting bio over the threshold makes
 * the disk stuck, and its span is marked like a stuck request's (`waiting: true`).
 */
import type { DiskFrame, Frame, InflightIo } from '@blkheat/shared-types';

/** Default threshold: in flight for more than a second. */
export const DEFAULT_STUCK_SECONDS = 1;
/** Accepted thresholds (URL `stuck=`, toolbar): 10 ms .. 1 h. */
export const MIN_STUCK_SECONDS = 0.01;
export const MAX_STUCK_SECONDS = 3600;
/** What the toolbar offers (a threshold from a URL outside these is offered as well). */
export const STUCK_PRESETS: readonly number[] = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

/** A threshold as the URL writes it: seconds, at most 3 decimals. */
const STUCK_RE = /^\d{1,4}(\.\d{1,3})?$/;

/** Parses a threshold in seconds ("0.5", "2"); a message saying what is accepted when it is not one. */
export function parseStuckSeconds(text: string): { ok: true; value: number } | { ok: false; message: string } {
  const v = Number(text);
  if (!STUCK_RE.test(text) || !(v >= MIN_STUCK_SECONDS && v <= MAX_STUCK_SECONDS)) {
    return {
      ok: false,
      message: `stuck=${text.slice(0, 32)}: expected a number of seconds from ${MIN_STUCK_SECONDS} to ${MAX_STUCK_SECONDS} (e.g. stuck=0.5); using ${DEFAULT_STUCK_SECONDS} s`,
    };
  }
  return { ok: true, value: v };
}

/** A stuck I/O as the row head lists it (one of `inflight.ios`), age in seconds. */
export interface StuckIo {
  readonly c: string;
  readonly pid: number;
  readonly comm: string;
  readonly sector: number | null;
  readonly bytes: number;
  readonly ageS: number;
}

/** Bios waiting for a request (protocol 4), when the oldest has waited longer than the threshold. */
export interface StuckWaiting {
  /** Bios waiting (all of them: the agent counts them, it does not list them). */
  readonly count: number;
  /** Age of the oldest, seconds. */
  readonly oldestS: number;
}

export interface StuckState {
  /**
   * Stuck requests counted (those listed older than the threshold; 1 when none is listed but the
   * oldest is); 0 when only waiting bios are stuck.
   */
  readonly count: number;
  /** More may be stuck than counted: every listed I/O is stuck and more were in flight than listed. */
  readonly atLeast: boolean;
  /** Age of the oldest request in flight, seconds (0 when none is stuck). */
  readonly oldestS: number;
  /** The stuck I/Os listed, oldest first. */
  readonly ios: readonly StuckIo[];
  /** Bios waiting for a request longer than the threshold (protocol 4); undefined when none. */
  readonly waiting?: StuckWaiting | undefined;
  /** The disk's queue was frozen when the agent looked (protocol 4). */
  readonly frozen: boolean;
}

function stuckIo(io: InflightIo): StuckIo {
  return { c: io.c, pid: io.pid, comm: io.comm, sector: io.sector, bytes: io.bytes, ageS: io.age_ns / 1e9 };
}

/**
 * What of `disk` (its entry in the newest live frame; undefined: absent, so nothing in flight)
 * has been in flight, or waiting for a request, longer than `thresholdS`; undefined when nothing
 * has (or no `inflight`).
 */
export function stuckNow(disk: DiskFrame | undefined, thresholdS: number): StuckState | undefined {
  const inf = disk?.inflight;
  if (!inf) return undefined;
  const requestsStuck = inf.n > 0 && inf.oldest_ns / 1e9 > thresholdS;
  const waitS = (inf.oldest_wait_ns ?? 0) / 1e9;
  const waiting = (inf.waiting ?? 0) > 0 && waitS > thresholdS ? { count: inf.waiting ?? 0, oldestS: waitS } : undefined;
  if (!requestsStuck && !waiting) return undefined;
  const frozen = inf.frozen === true;
  if (!requestsStuck) return { count: 0, atLeast: false, oldestS: 0, ios: [], waiting, frozen };
  const ios = inf.ios
    .filter((io) => io.age_ns / 1e9 > thresholdS)
    .map(stuckIo)
    .sort((a, b) => b.ageS - a.ageS);
  // The agent lists the oldest few per disk: if all of those are stuck, others may be too.
  const allListedStuck = ios.length === inf.ios.length;
  const count = Math.max(1, ios.length);
  return { count, atLeast: allListedStuck && inf.n > count, oldestS: inf.oldest_ns / 1e9, ios, waiting, frozen };
}

/** How long the application has waited on a stuck disk: its oldest stuck request or waiting bio, seconds. */
export function stuckAgeS(s: StuckState): number {
  return Math.max(s.oldestS, s.waiting?.oldestS ?? 0);
}

/**
 * "stuck: 2 I/Os, oldest 12.3 s"; with waiting bios "stuck: 28 bios waiting for a request, oldest
 * 10.0 s (queue frozen)" (the ages formatted by `formatAge`: the page's latency format).
 */
export function stuckText(s: StuckState, formatAge: (seconds: number) => string): string {
  const parts: string[] = [];
  if (s.count > 0) {
    const n = `${s.atLeast ? '≥ ' : ''}${s.count} I/O${s.count === 1 && !s.atLeast ? '' : 's'}`;
    parts.push(`${n}, oldest ${formatAge(s.oldestS)}`);
  }
  if (s.waiting) {
    const w = s.waiting;
    parts.push(`${w.count} bio${w.count === 1 ? '' : 's'} waiting for a request, oldest ${formatAge(w.oldestS)}`);
  }
  return `stuck: ${parts.join('; ')}${s.frozen ? ' (queue frozen)' : ''}`;
}

/** One stuck I/O over time, as the heat map marks it. */
export interface StuckSpan {
  /** When it was made (unix seconds, fractional): frame ts + step − age. */
  readonly start: number;
  /** The start is known to within this many seconds (the finest step it was seen at). */
  readonly resolution: number;
  /** End of the newest frame that still had it in flight. */
  readonly end: number;
  /** Its age then, seconds. */
  readonly ageS: number;
  readonly pid: number;
  readonly comm: string;
  readonly c: string;
  readonly sector: number | null;
  /** The oldest bio waiting for a request (protocol 4), not a request in flight. */
  readonly waiting?: true | undefined;
}

/** Same I/O seen in two frames: same identity and starts that agree within the frames' resolution (plus clock jitter). */
function sameIo(s: StuckSpan, io: InflightIo, start: number, step: number, waiting: boolean): boolean {
  const tolerance = Math.max(s.resolution, step) + 0.5;
  return (
    (s.waiting === true) === waiting &&
    s.pid === io.pid &&
    s.comm === io.comm &&
    s.c === io.c &&
    s.sector === io.sector &&
    Math.abs(s.start - start) <= tolerance
  );
}

/** An I/O of no listing: known by its age alone (pid 0). */
function unlisted(ageNs: number): InflightIo {
  return { c: '', pid: 0, comm: '', sector: null, bytes: 0, age_ns: ageNs, dev_age_ns: null };
}

/**
 * The oldest age (ns) of anything of the disk in flight or waiting for a request in the frame:
 * no I/O stuckSpans sights in it is older (model/incidentFrames.ts skips frames by it). 0 when nothing was.
 */
export function oldestAgeNs(d: DiskFrame): number {
  const inf = d.inflight;
  if (!inf) return 0;
  let age = Math.max(inf.oldest_ns, (inf.waiting ?? 0) > 0 ? (inf.oldest_wait_ns ?? 0) : 0);
  for (const io of inf.ios) age = Math.max(age, io.age_ns);
  return age;
}

/**
 * The stuck I/Os of `dev` in `frames` (any order; any step), each once with its start and the
 * end of its newest sighting, oldest start first. I/Os of no listing (the agent lists the oldest
 * few) are represented by the frame's `oldest_ns` alone, as pid 0; bios waiting for a request by
 * the oldest one's age (`oldest_wait_ns`), as a span with `waiting`.
 */
export function stuckSpans(frames: readonly Frame[], dev: string, thresholdS: number): StuckSpan[] {
  const out: StuckSpan[] = [];
  const sorted = [...frames].sort((a, b) => a.ts - b.ts);
  const sight = (io: InflightIo, f: Frame, waiting: boolean): void => {
    const end = f.ts + f.step;
    const ageS = io.age_ns / 1e9;
    const start = end - ageS;
    const i = out.findIndex((s) => sameIo(s, io, start, f.step, waiting));
    const span: StuckSpan = {
      start,
      resolution: f.step,
      end,
      ageS,
      pid: io.pid,
      comm: io.comm,
      c: io.c,
      sector: io.sector,
      ...(waiting ? { waiting: true as const } : {}),
    };
    const prev = out[i];
    if (!prev) out.push(span);
    else {
      // The finest sighting says when it started (a coarse frame's start is its latest possible one); the newest, how old it got.
      const fine = f.step < prev.resolution || (f.step === prev.resolution && start < prev.start) ? span : prev;
      const newest = end >= prev.end ? span : prev;
      out[i] = { ...newest, start: fine.start, resolution: fine.resolution };
    }
  };
  for (const f of sorted) {
    const inf = f.disks.find((d) => d.dev === dev)?.inflight;
    if (!inf) continue;
    if (inf.n > 0) {
      const ios: InflightIo[] = inf.ios.filter((io) => io.age_ns / 1e9 > thresholdS);
      if (ios.length === 0 && inf.oldest_ns / 1e9 > thresholdS) ios.push(unlisted(inf.oldest_ns));
      for (const io of ios) sight(io, f, false);
    }
    const waitNs = inf.oldest_wait_ns ?? 0;
    if ((inf.waiting ?? 0) > 0 && waitNs / 1e9 > thresholdS) sight(unlisted(waitNs), f, true);
  }
  return out.sort((a, b) => a.start - b.start);
}

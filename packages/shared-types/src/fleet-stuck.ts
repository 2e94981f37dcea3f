/**
 * The fleet's stuck I/O on the wire (GET /api/v1/fleet/stuck, added after 0.4.0: a fleet server
 * only): every host × disk whose oldest I/O in flight is at least `min` seconds old at its newest
 * scrape, from the agents' in-flight gauges as Prometheus stored them
 * (apps/agent/src/fleet/fleet-stuck.ts). Shared by the fleet server, which answers it, and the
 * dashboard, which lists it ("Stuck now").
 */
import { formatCount, formatLatency } from './format.js';

/** Seconds in flight from which an I/O is listed when `min` is not given (the BlkheatIOStuck alert's). */
export const DEFAULT_STUCK_MIN_S = 5;
/** Largest `min` accepted (s): a day. */
export const MAX_STUCK_MIN_S = 86_400;
/** Rows when `limit` is not given, and at most. */
export const DEFAULT_STUCK_ROWS = 50;
export const MAX_STUCK_ROWS = 200;

/** The filter parameters (no op class: what is in flight has none on /metrics). */
export const STUCK_FILTER_KEYS = ['job', 'instance', 'disk'] as const;

/**
 * Which I/O a row's age is of: `driver`, a request with the driver (blkheat_inflight_oldest_seconds);
 * `waiting`, a bio submitted and still waiting for a request (blkheat_inflight_waiting_oldest_seconds:
 * a frozen queue, QoS throttling, every tag in use).
 */
export type StuckKind = 'driver' | 'waiting';

export interface StuckDisk {
  readonly instance: string;
  /** The disk's kernel name on its host (its "MAJ:MIN" when the series carries no name). */
  readonly disk: string;
  /** Its "MAJ:MIN" on its host. */
  readonly dev: string;
  /** The fleet id of the row (host:disk), when the fleet server knows it. */
  readonly id?: string;
  /** The host's own agent dashboard, when the fleet server knows it (docs/fleet.md, links). */
  readonly link?: string;
  /** The older of the disk's two kinds at its newest scrape (both listed in `ages` when both are over `min`). */
  readonly kind: StuckKind;
  /**
   * The oldest I/O's age (s) when the agent's newest second closed before the scrape `scrapedAt`
   * (at most about a second before it): its age now is ageS + (now − scrapedAt), a little more.
   */
  readonly ageS: number;
  /** I/Os with the driver (driver) or bios waiting (waiting) at that second. */
  readonly inflight: number;
  /** Unix seconds (ms precision) of the scrape these figures are from: Prometheus' sample time. */
  readonly scrapedAt: number;
  /** The other kind's figures when it too is over `min`. */
  readonly other?: { readonly kind: StuckKind; readonly ageS: number; readonly inflight: number };
}

export interface StuckFilter {
  readonly job?: string | undefined;
  readonly instance?: string | undefined;
  readonly disk?: string | undefined;
}

/** What the route is asked (its validated parameters). */
export interface FleetStuckQuery {
  readonly min: number;
  readonly limit?: number | undefined;
  readonly filter: StuckFilter;
}

export interface FleetStuck {
  /** Unix seconds (ms precision) the fleet server asked Prometheus at: "now" of the answer. */
  readonly at: number;
  /** The threshold applied (s). */
  readonly min: number;
  readonly filter: StuckFilter;
  /** Oldest first, at most `limit`. */
  readonly disks: readonly StuckDisk[];
  /** Host × disk rows over `min` that `limit` left out. */
  readonly more: number;
  /** Requests this answer made of Prometheus (1 when nothing is stuck, else 2). */
  readonly prometheusQueries: number;
}

/** What each kind is called on the page and in messages. */
export const STUCK_KIND_TEXT: Readonly<Record<StuckKind, string>> = Object.freeze({
  driver: 'with the driver',
  waiting: 'waiting for a request',
});

/** A stuck row's figures as the fleet page writes them (and its tests read them), at an age. */
export function stuckCellTexts(row: StuckDisk, ageS: number): { readonly age: string; readonly kind: string; readonly inflight: string } {
  return { age: formatLatency(ageS), kind: STUCK_KIND_TEXT[row.kind], inflight: formatCount(row.inflight) };
}

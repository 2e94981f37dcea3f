/**
 * The fleet page's "Stuck now" list (added after 0.4.0): how often it is asked, what it asks,
 * and a row's age as it grows between two answers. The list itself is the fleet server's
 * (GET /api/v1/fleet/stuck: the agents' in-flight gauges as Prometheus has them); the wire types
 * and the cell texts are @blkheat/shared-types'.
 */
import { DEFAULT_STUCK_MIN_S, type FleetStuck, type StuckDisk } from '@blkheat/shared-types';

/** Rows the page asks for: a screenful, oldest first. */
export const PAGE_STUCK_ROWS = 20;

/** How often the list is asked again (s): a scrape interval (what can change it), 2 s at least. */
export function stuckPollSeconds(scrapeInterval: number): number {
  return Math.max(2, Math.ceil(scrapeInterval));
}

/** Seconds after a scrape's time by which Prometheus has stored it, with room to spare. */
const STORED_AFTER_S = 1;

/**
 * When to ask again (s from the answer's arrival): every poll interval; sooner when a listed
 * row's host is due for its next scrape (its scrape time + the interval, stored), so that a row
 * whose I/O completed leaves the list, and an age is corrected, about a second after the scrape
 * that says so rather than up to an interval later. A host already overdue (its scrapes failing)
 * does not make the page ask every second.
 */
export function stuckNextAskSeconds(answer: FleetStuck | undefined, scrapeInterval: number): number {
  const poll = stuckPollSeconds(scrapeInterval);
  if (!answer || answer.disks.length === 0) return poll;
  const due = Math.min(...answer.disks.map((d) => d.scrapedAt)) + scrapeInterval + STORED_AFTER_S - answer.at;
  return due >= 1 ? Math.min(poll, due) : poll;
}

/** The route's parameters: the whole fleet, the alerts' threshold. */
export function stuckParams(min = DEFAULT_STUCK_MIN_S, limit = PAGE_STUCK_ROWS): Record<string, number> {
  return { min, limit };
}

/**
 * A row's age now (s): its age at its scrape, plus the time from that scrape to the answer (both
 * the fleet server's and Prometheus' clocks), plus the time since the answer arrived (this page's
 * clock: the page's and the server's clocks need not agree).
 */
export function stuckAgeNow(row: StuckDisk, answer: FleetStuck, receivedAtMs: number, nowMs: number): number {
  return row.ageS + Math.max(0, answer.at - row.scrapedAt) + Math.max(0, (nowMs - receivedAtMs) / 1000);
}

/** What the list says when no row is over the threshold. */
export function stuckEmptyText(min: number): string {
  return `no I/O in flight over ${min} s on any host`;
}

// A fleet view's "Stuck now" list on the page side: a row's age as it grows between answers
// (the server's time from scrape to answer, then this page's clock), and when the list is asked
// again (every scrape interval; about a second after a listed host's next scrape is due).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FleetStuck, StuckDisk } from '@blkheat/shared-types';
import { stuckAgeNow, stuckEmptyText, stuckNextAskSeconds, stuckPollSeconds } from '../src/model/fleetStuck.ts';

const row = (scrapedAt: number, ageS: number): StuckDisk => ({
  instance: 'db-1',
  disk: 'nvme0n1',
  dev: '259:0',
  kind: 'driver',
  ageS,
  inflight: 1,
  scrapedAt,
});
const answer = (at: number, disks: StuckDisk[]): FleetStuck => ({ at, min: 5, filter: {}, disks, more: 0, prometheusQueries: 2 });

test('stuck list: the age grows from the scrape, by the server clock then the page clock', () => {
  const a = answer(1000, [row(990, 7)]);
  // At arrival: 7 s at the scrape + 10 s to the answer; the page's clock may be far off the server's.
  assert.equal(stuckAgeNow(a.disks[0] as StuckDisk, a, 5_000_000, 5_000_000), 17);
  assert.equal(stuckAgeNow(a.disks[0] as StuckDisk, a, 5_000_000, 5_002_500), 19.5);
  // A clock running backwards never makes it younger than at the scrape.
  assert.equal(stuckAgeNow(row(1010, 7), a, 5_000_000, 4_999_000), 7);
  assert.equal(stuckEmptyText(5), 'no I/O in flight over 5 s on any host');
});

test('stuck list: asked every scrape interval, sooner when a listed host is due for its next scrape', () => {
  assert.equal(stuckPollSeconds(15), 15);
  assert.equal(stuckPollSeconds(1), 2);
  assert.equal(stuckNextAskSeconds(undefined, 15), 15);
  assert.equal(stuckNextAskSeconds(answer(1000, []), 15), 15);
  // Scraped 4 s before the answer: its next scrape is due in 11 s, stored a second later.
  assert.equal(stuckNextAskSeconds(answer(1000, [row(996, 9)]), 15), 12);
  // The earliest due of several hosts.
  assert.equal(stuckNextAskSeconds(answer(1000, [row(996, 9), row(990, 30)]), 15), 6);
  // Overdue (its scrapes failing): the usual interval, not every second.
  assert.equal(stuckNextAskSeconds(answer(1000, [row(970, 9)]), 15), 15);
});

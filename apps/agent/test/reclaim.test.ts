// The memory reclaimer's rules (server/reclaim.ts), on a simulated process: when it collects,
// when it waits, and how it learns what memory is in use. The real effect on the real agent is
// held by serve-hostile-load.test.ts (RSS back within 50 MiB after each attack).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryReclaimer, RECLAIM_CHECK_MS, RECLAIM_GROWTH_BYTES, RECLAIM_MIN_GAP_MS, RECLAIM_WORTH_BYTES } from '../src/server/reclaim.js';

const MiB = 1024 * 1024;

/** A process whose RSS the test sets, and whose collections (with the trim) free `garbage`. */
function simulated(t: { mock: { timers: { enable(o: { apis: ('setInterval' | 'Date')[] }): void; tick(ms: number): void } } }) {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'] });
  const p = { rss: 100 * MiB, garbage: 0, busy: false, collections: 0, trims: 0, logs: [] as string[] };
  const reclaimer = new MemoryReclaimer({
    busy: () => p.busy,
    log: (line) => p.logs.push(line),
    rss: () => p.rss,
    collect: () => p.collections++,
    releaseFreeHeap: () => {
      p.trims++;
      p.rss -= p.garbage;
      p.garbage = 0;
      return true;
    },
  });
  const grow = (bytes: number, garbage: number): void => {
    p.rss += bytes;
    p.garbage += garbage;
  };
  const checks = (n: number): void => {
    for (let i = 0; i < n; i++) t.mock.timers.tick(RECLAIM_CHECK_MS);
  };
  return { p, reclaimer, grow, checks };
}

test('after a burst of garbage, once the reads are idle: two collections and a trim, a check apart, and the memory is back', (t) => {
  const { p, reclaimer, grow, checks } = simulated(t);
  t.after(() => reclaimer.close());
  grow(RECLAIM_GROWTH_BYTES - 1, RECLAIM_GROWTH_BYTES - 1);
  checks(3);
  assert.equal(p.collections, 0, 'growth under the threshold is left alone');
  grow(64 * MiB, 64 * MiB);
  p.busy = true;
  checks(3);
  assert.equal(p.collections, 0, 'nothing is collected while history reads are under way');
  p.busy = false;
  checks(1);
  assert.equal(p.collections, 1, 'the first idle check collects');
  checks(1);
  assert.deepEqual([p.collections, p.trims], [2, 0], 'the next compacts, once V8 has swept');
  checks(1);
  assert.deepEqual([p.collections, p.trims], [2, 1], 'and the third trims, once V8 has freed the Buffers');
  assert.equal(p.rss, 100 * MiB, 'the process is back where it started');
  assert.deepEqual(reclaimer.stats(), { reclaims: 1, releasedBytes: RECLAIM_GROWTH_BYTES - 1 + 64 * MiB });
  checks(20);
  assert.equal(p.collections, 2, 'and nothing more is done while it stays there');
});

test('memory in use is learnt: a reclaim that gives little back raises the mark, and is not repeated', (t) => {
  const { p, reclaimer, grow, checks } = simulated(t);
  t.after(() => reclaimer.close());
  grow(40 * MiB, RECLAIM_WORTH_BYTES / 2); // history caches filling: almost all of it in use
  checks(3);
  assert.equal(reclaimer.stats().reclaims, 1);
  checks(RECLAIM_MIN_GAP_MS / RECLAIM_CHECK_MS + 10);
  assert.equal(reclaimer.stats().reclaims, 1, 'the new level is the mark: no collection every 10 s');
  grow(RECLAIM_GROWTH_BYTES, RECLAIM_GROWTH_BYTES);
  checks(3);
  assert.equal(reclaimer.stats().reclaims, 2, 'growth past the new mark is reclaimed again');
  assert.equal(p.rss, 100 * MiB + 40 * MiB - RECLAIM_WORTH_BYTES / 2);
});

test('a reclaim in the middle of a burst keeps the mark, so the end of the burst gets its own; at most one per RECLAIM_MIN_GAP_MS', (t) => {
  const { p, reclaimer, grow, checks } = simulated(t);
  t.after(() => reclaimer.close());
  grow(64 * MiB, 32 * MiB); // half of it still held by clients that have not gone yet
  checks(3);
  assert.equal(reclaimer.stats().reclaims, 1);
  assert.equal(p.rss, 132 * MiB);
  p.garbage += 32 * MiB; // the clients go: what they held is garbage now
  checks(1);
  assert.equal(p.collections, 2, 'not before the gap has passed');
  checks(RECLAIM_MIN_GAP_MS / RECLAIM_CHECK_MS);
  assert.equal(reclaimer.stats().reclaims, 2, 'the end of the burst is reclaimed: the mark stayed at the start');
  assert.equal(p.rss, 100 * MiB);
});

test('a trim that throws (the addon not built) is said once; collections go on', (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'] });
  let rss = 100 * MiB;
  let collections = 0;
  const logs: string[] = [];
  const reclaimer = new MemoryReclaimer({
    busy: () => false,
    log: (line) => logs.push(line),
    rss: () => rss,
    collect: () => collections++,
    releaseFreeHeap: () => {
      throw new Error('cannot load the native addon');
    },
  });
  t.after(() => reclaimer.close());
  for (let burst = 0; burst < 3; burst++) {
    rss += 64 * MiB;
    for (let i = 0; i < RECLAIM_MIN_GAP_MS / RECLAIM_CHECK_MS + 1; i++) t.mock.timers.tick(RECLAIM_CHECK_MS);
  }
  assert.equal(collections, 6, 'two collections for each of three bursts');
  assert.equal(logs.length, 1, logs.join('\n'));
  assert.match(logs[0] ?? '', /cannot give freed memory back to the system: cannot load the native addon/);
});

// The samples query's `pick: 'spread'` (protocol 4) on the agent's ring: the same choice the
// shared rule (sample-spread.ts) makes of the matching samples, under every filter, bounded by the
// limit however many match; the REST parameter and the answer's fields. Pure: no kernel, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type IoSample, pickSpread, samplePhaseNs, spreadHash } from '@blkheat/shared-types';
import { SampleStore, type SampleQuery } from '../src/history/samples.js';
import { parseSamplesQuery } from '../src/server/http-query.js';
import { samplesAnswerFields } from '../src/server/session-messages.js';
import { randomSample, rng } from './history-fixtures.js';

const NOW = 1_750_000_000;

function matches(s: IoSample, q: SampleQuery): number | null {
  if (s.ts_us < q.from * 1e6 || s.ts_us >= q.to * 1e6) return null;
  if (q.disks && !q.disks.includes(s.dev)) return null;
  if (q.classes && !q.classes.includes(s.c)) return null;
  const v = samplePhaseNs(s, q.kind ?? 'device');
  return v === null || v < (q.minNs ?? 0) || v > (q.maxNs ?? Number.MAX_SAFE_INTEGER) ? null : v;
}

/** The shared rule applied to the matching samples in arrival order. */
function expected(all: readonly IoSample[], q: SampleQuery): { samples: IoSample[]; matched: number; truncated: boolean } {
  const hits = all.filter((s) => matches(s, q) !== null);
  const r = pickSpread(hits, q.from * 1e6, q.to * 1e6, q.limit, {
    tsUs: (s) => s.ts_us,
    latencyNs: (s) => matches(s, q) as number,
    hash: (s) => spreadHash(s.ts_us, s.sector, s.d_ns),
  });
  return { samples: r.items, matched: r.matched, truncated: r.truncated };
}

test('a spread query answers what the shared rule picks of the matching samples, under every filter', () => {
  const r = rng(31);
  const store = new SampleStore({ capacity: 100_000, windowSeconds: 3600, now: () => NOW });
  // 60 s at ~1,000 samples a second, a few arriving a little out of time order.
  const all = Array.from({ length: 60_000 }, (_, i) => randomSample(r, (NOW - 60) * 1e6 + i * 1000 + Math.floor(r() * 3000)));
  store.add(all);
  const queries: SampleQuery[] = [
    { from: NOW - 60, to: NOW, limit: 2000, pick: 'spread' },
    { from: NOW - 50, to: NOW - 10, limit: 500, pick: 'spread', kind: 'total', disks: ['7:0'] },
    { from: NOW - 60, to: NOW, limit: 5000, pick: 'spread', kind: 'queue', minNs: 100_000, maxNs: 900_000, classes: ['Read', 'Write'] },
    { from: NOW - 60, to: NOW, limit: 5000, pick: 'spread', disks: ['9:9'] },
    { from: NOW - 3, to: NOW - 2, limit: 5000, pick: 'spread' },
  ];
  for (const q of queries) {
    const got = store.query(q);
    const want = expected(all, q);
    assert.equal(got.matched, want.matched, JSON.stringify(q));
    assert.equal(got.truncated, want.truncated, JSON.stringify(q));
    assert.ok(got.samples.length <= q.limit);
    assert.deepEqual(got.samples, want.samples, JSON.stringify(q));
  }
  const busy = store.query({ from: NOW - 60, to: NOW, limit: 2000, pick: 'spread' });
  assert.equal(busy.samples.length, 2000);
  assert.equal(busy.truncated, true);
  // Both ends of the range are drawn (the oldest-first answer stops a few seconds in).
  const tenth = (s: IoSample): number => Math.floor((s.ts_us / 1e6 - (NOW - 60)) / 6);
  assert.ok(busy.samples.some((s) => tenth(s) === 0) && busy.samples.some((s) => tenth(s) === 9));
  const oldest = store.query({ from: NOW - 60, to: NOW, limit: 2000 });
  assert.equal(oldest.matched, undefined);
  assert.ok(
    oldest.samples.every((s) => tenth(s) === 0),
    'without pick, the oldest, as before',
  );
  // The slowest sample of the range is in the answer.
  const slowest = all.filter((s) => s.ts_us >= (NOW - 60) * 1e6 && s.ts_us < NOW * 1e6).reduce((a, b) => (b.d_ns > a.d_ns ? b : a));
  assert.ok(busy.samples.some((s) => s.ts_us === slowest.ts_us && s.d_ns === slowest.d_ns));
});

test('pick over REST: spread and first are taken, anything else is a 400 naming pick; the answer says the pick back', () => {
  const params = (q: string): URLSearchParams => new URLSearchParams(q);
  const ok = parseSamplesQuery(params(`from=${NOW - 60}&to=${NOW}&pick=spread&limit=2000`), []);
  assert.ok(ok.ok);
  assert.equal(ok.value.pick, 'spread');
  assert.ok(parseSamplesQuery(params(`from=${NOW - 60}&to=${NOW}&pick=first`), []).ok);
  const bad = parseSamplesQuery(params(`from=${NOW - 60}&to=${NOW}&pick=newest`), []);
  assert.equal(bad.ok, false);
  assert.equal(!bad.ok && bad.field, 'pick');
  assert.match(!bad.ok ? bad.message : '', /^pick: /);
  const twice = parseSamplesQuery(params(`from=${NOW - 60}&to=${NOW}&pick=spread&pick=first`), []);
  assert.equal(!twice.ok && twice.message, 'pick: given more than once');

  // Cgroups and size classes (added in 5): repeatable, checked like the rest.
  const filtered = parseSamplesQuery(params(`from=${NOW - 60}&to=${NOW}&cgroup=/a.slice&cgroup=/b&size=12&size=20`), []);
  assert.ok(filtered.ok);
  assert.deepEqual(filtered.ok && [filtered.value.cgroups, filtered.value.sizeClasses], [
    ['/a.slice', '/b'],
    [12, 20],
  ]);
  const badSize = parseSamplesQuery(params(`from=${NOW - 60}&to=${NOW}&size=4k`), []);
  assert.equal(!badSize.ok && badSize.message, 'size: expected an integer, got "4k"');
  const hugeSize = parseSamplesQuery(params(`from=${NOW - 60}&to=${NOW}&size=64`), []);
  assert.equal(!hugeSize.ok && hugeSize.field, 'size');
  assert.match(!hugeSize.ok ? hugeSize.message : '', /^size/);
  const emptyCgroup = parseSamplesQuery(params(`from=${NOW - 60}&to=${NOW}&cgroup=`), []);
  assert.equal(!emptyCgroup.ok && emptyCgroup.field, 'cgroup');

  const kept = { step: 10, since: NOW - 7200, budget: 2000 };
  const answer = { samples: [], truncated: true, next: 7, matched: 12, kept };
  assert.deepEqual(samplesAnswerFields({ pick: 'spread' }, answer), { samples: [], truncated: true, pick: 'spread', matched: 12, kept });
  assert.deepEqual(samplesAnswerFields({}, { samples: [], truncated: false, next: 0, kept }), { samples: [], truncated: false, kept });
});

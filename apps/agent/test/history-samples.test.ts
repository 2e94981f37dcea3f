import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IoSample } from '@blkheat/shared-types';
import { SampleStore, type SampleQuery } from '../src/history/samples.js';
import { randomSample, rng } from './history-fixtures.js';

const NOW = 1_750_000_000;

/** The answer a brute-force scan over what the store should still hold gives. */
function brute(held: readonly IoSample[], q: SampleQuery): IoSample[] {
  return held.filter((s) => {
    if (s.ts_us < q.from * 1e6 || s.ts_us >= q.to * 1e6) return false;
    const v = q.kind === 'queue' ? s.q_ns : s.d_ns;
    if (v === null) return false;
    if (v < (q.minNs ?? 0) || v > (q.maxNs ?? Number.MAX_SAFE_INTEGER)) return false;
    if (q.disks && !q.disks.includes(s.dev)) return false;
    if (q.classes && !q.classes.includes(s.c)) return false;
    return true;
  });
}

test('queries return exactly the samples in the cell (time x latency x disk x class)', () => {
  const r = rng(21);
  const store = new SampleStore({ capacity: 10_000, windowSeconds: 3600, now: () => NOW });
  const all = Array.from({ length: 5000 }, (_, i) => randomSample(r, (NOW - 100) * 1e6 + i * 20_000));
  store.add(all);
  const queries: SampleQuery[] = [
    { from: NOW - 100, to: NOW, limit: 5000 },
    { from: NOW - 90, to: NOW - 80, kind: 'device', minNs: 1_000_000, maxNs: 4_000_000, limit: 5000 },
    { from: NOW - 100, to: NOW, kind: 'queue', minNs: 0, maxNs: 500_000, disks: ['7:0'], limit: 5000 },
    { from: NOW - 100, to: NOW, classes: ['Flush', 'Sync-Write'], disks: ['8:0', '253:0'], limit: 5000 },
    { from: NOW - 100, to: NOW, disks: ['9:9'], limit: 5000 },
  ];
  for (const q of queries) {
    const got = store.query(q);
    assert.deepEqual(got.samples, brute(all, q), JSON.stringify(q));
    assert.equal(got.truncated, false);
  }
  const limited = store.query({ from: NOW - 100, to: NOW, limit: 10 });
  assert.equal(limited.samples.length, 10);
  assert.equal(limited.truncated, true);
  assert.deepEqual(limited.samples, all.slice(0, 10));
});

test('the ring keeps at most `capacity` samples, newest first to stay', () => {
  const r = rng(22);
  const store = new SampleStore({ capacity: 1000, windowSeconds: 3600, now: () => NOW });
  const all = Array.from({ length: 2500 }, (_, i) => randomSample(r, (NOW - 50) * 1e6 + i * 1000));
  for (let i = 0; i < all.length; i += 100) store.add(all.slice(i, i + 100));
  assert.equal(store.count, 1000);
  assert.deepEqual(store.query({ from: NOW - 60, to: NOW, limit: 5000 }).samples, all.slice(1500));
  assert.equal(store.counters.added, 2500);
});

test('samples older than the window are dropped', () => {
  let now = NOW;
  const r = rng(23);
  const store = new SampleStore({ capacity: 1000, windowSeconds: 60, now: () => now });
  store.add(Array.from({ length: 100 }, (_, i) => randomSample(r, (NOW - 100 + i) * 1e6)));
  now = NOW + 1;
  assert.equal(store.query({ from: NOW - 200, to: NOW + 10, limit: 1000 }).samples.length, 59);
});

test('fields round-trip, including null queue latency and sector, and a long multi-byte comm cut safely', () => {
  const store = new SampleStore({ capacity: 4, windowSeconds: 3600, now: () => NOW });
  const s: IoSample = {
    ts_us: (NOW - 1) * 1e6 + 123,
    dev: '259:3',
    c: 'Metadata-Sync-Write',
    sector: 2 ** 40 + 7,
    bytes: 1 << 20,
    q_ns: null,
    d_ns: 123_456_789,
    pid: 4_000_000,
    comm: 'kworker/ü:1H-kblockd',
    cgroup: 2 ** 45,
    outlier: true,
  };
  const flush: IoSample = { ...s, ts_us: s.ts_us + 1, c: 'Flush', sector: null, bytes: 0 };
  store.add([s, flush]);
  const [got, gotFlush] = store.query({ from: NOW - 10, to: NOW, limit: 10 }).samples;
  assert.deepEqual({ ...gotFlush, comm: '' }, { ...flush, comm: '' }, 'a sample without a sector (a flush) keeps sector null');
  assert.ok(got);
  assert.deepEqual({ ...got, comm: '' }, { ...s, comm: '' });
  assert.ok(Buffer.byteLength(got.comm) <= 15 && s.comm.startsWith(got.comm), `comm cut on a character boundary: ${got.comm}`);
});

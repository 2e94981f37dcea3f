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
    // Written out here, not through samplePhaseNs, so the store is checked against the rule itself.
    const kind = q.kind ?? 'device';
    const v =
      kind === 'device'
        ? s.d_ns
        : kind === 'queue'
          ? s.q_ns
          : kind === 'submit'
            ? (s.w_ns ?? null)
            : s.w_ns === undefined
              ? s.q_ns === null
                ? s.d_ns
                : null
              : s.w_ns === null || s.q_ns === null
                ? null
                : s.w_ns + s.q_ns + s.d_ns;
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
    { from: NOW - 100, to: NOW, kind: 'submit', minNs: 1_000_000, maxNs: 3_000_000, limit: 5000 },
    { from: NOW - 100, to: NOW, kind: 'total', minNs: 4_000_000, maxNs: 16_000_000, classes: ['Read'], limit: 5000 },
    { from: NOW - 100, to: NOW, kind: 'total', limit: 5000 },
  ];
  for (const q of queries) {
    const got = store.query(q);
    const want = brute(all, q);
    assert.ok(q.disks?.[0] === '9:9' || want.length > 20, `${want.length} samples match ${JSON.stringify(q)}`);
    assert.deepEqual(got.samples, want, JSON.stringify(q));
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

test('fields round-trip, including null queue latency and sector, w_ns absent, null or known, and a long multi-byte comm cut safely', () => {
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
  const flush: IoSample = { ...s, ts_us: s.ts_us + 1, c: 'Flush', sector: null, bytes: 0, w_ns: 0 };
  const unseen: IoSample = { ...s, ts_us: s.ts_us + 2, comm: 'dd', q_ns: 7, w_ns: null };
  const waited: IoSample = { ...s, ts_us: s.ts_us + 3, comm: 'dd', q_ns: 7, w_ns: 2 ** 40 };
  store.add([s, flush, unseen, waited]);
  const [got, gotFlush, gotUnseen, gotWaited] = store.query({ from: NOW - 10, to: NOW, limit: 10 }).samples;
  assert.equal(got && 'w_ns' in got, false, 'an absent w_ns stays absent');
  assert.deepEqual(gotUnseen, unseen);
  assert.deepEqual(gotWaited, waited);
  assert.deepEqual({ ...gotFlush, comm: '' }, { ...flush, comm: '' }, 'a sample without a sector (a flush) keeps sector null');
  assert.ok(got);
  assert.deepEqual({ ...got, comm: '' }, { ...s, comm: '' });
  assert.ok(Buffer.byteLength(got.comm) <= 15 && s.comm.startsWith(got.comm), `comm cut on a character boundary: ${got.comm}`);
});

test('samples filter by phase (protocol 4): submit w_ns, total w_ns + q_ns + d_ns, a bio-based disk total d_ns', () => {
  const store = new SampleStore({ capacity: 16, windowSeconds: 3600, now: () => NOW });
  const base = { dev: '7:0', c: 'Read', sector: 8, bytes: 4096, pid: 1, comm: 'fio', cgroup: 1, outlier: false };
  const at = (k: number): number => (NOW - 10) * 1e6 + k;
  const samples: IoSample[] = [
    { ...base, ts_us: at(0), q_ns: 1_000, d_ns: 2_000_000, w_ns: 30_000_000 }, // total 32.001 ms, waited for a frozen queue
    { ...base, ts_us: at(1), q_ns: 1_000, d_ns: 9_000_000, w_ns: 2_000 }, // total 9.003 ms
    { ...base, ts_us: at(2), q_ns: 1_000, d_ns: 40_000_000, w_ns: null }, // submission not seen
    { ...base, ts_us: at(3), dev: '253:0', q_ns: null, d_ns: 31_000_000 }, // bio-based: total = d
    { ...base, ts_us: at(4), q_ns: 5_000, d_ns: 35_000_000 }, // an agent before protocol 4: no total
  ];
  store.add(samples);
  const ids = (kind: SampleQuery['kind'], minNs: number, maxNs: number): number[] =>
    store.query({ from: NOW - 20, to: NOW, kind, minNs, maxNs, limit: 100 }).samples.map((s) => s.ts_us - at(0));
  assert.deepEqual(ids('total', 30_000_000, 40_000_000), [0, 3], 'the frozen wait and the bio-based disk');
  assert.deepEqual(ids('total', 0, 10_000_000), [1]);
  assert.deepEqual(ids('submit', 1_000_000, 1e12), [0]);
  assert.deepEqual(ids('submit', 0, 1e12), [0, 1], 'unknown and absent submit waits never match');
  assert.deepEqual(ids('device', 30_000_000, 40_000_000), [2, 3, 4]);
  assert.deepEqual(ids('queue', 0, 1e12), [0, 1, 2, 4]);
  assert.deepEqual(ids(undefined, 30_000_000, 40_000_000), [2, 3, 4], 'device by default');
});

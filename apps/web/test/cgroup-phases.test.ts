// Size × latency and the cgroup filter follow the phase on screen (protocol 4: sizes and cgroups
// carry every phase). Frames written out by hand, so each expected count is read off them: the
// heat matrix under a cgroup filter counts that cgroup's latency of the phase; the cgroup and
// size tallies sum the phase, and fall back to device latency, saying so (`kind`), where a
// frame of the range has no other phase by size or cgroup (an older agent), never a mix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, bucketCount, type DiskFrame, type Frame } from '@blkheat/shared-types';
import { cgroupBreakdown, cgroupInForce, cgroupPhasesOf } from '../src/model/cgroups.ts';
import { buildMatrix } from '../src/model/heatmatrix.ts';
import { sizeLatency } from '../src/model/sizeLatency.ts';

const T0 = 1_700_000_000;
const DEV = '7:0';
// Per second: 6 reads of 4 KiB by /db (device bucket 40, total bucket 70: they waited for a tag)
// and 2 of 1 MiB by /backup (device 44, total 45).
const v4disk: DiskFrame = {
  dev: DEV,
  cls: [
    {
      c: 'Read',
      n: 8,
      d: [40, 6, 44, 2],
      q: [1, 8],
      w: [1, 2, 69, 6],
      t: [45, 2, 70, 6],
      sz: [
        { s: 12, n: 6, d: [40, 6], q: [1, 6], w: [69, 6], t: [70, 6] },
        { s: 20, n: 2, d: [44, 2], q: [1, 2], w: [1, 2], t: [45, 2] },
      ],
    },
  ],
  cg: [
    { g: '/db', n: 6, d: [40, 6], q: [1, 6], w: [69, 6], t: [70, 6] },
    { g: '/backup', n: 2, d: [44, 2], q: [1, 2], w: [1, 2], t: [45, 2] },
  ],
};
// The same second from an agent before protocol 4: device latency only by size and cgroup.
const deviceOnly = <S extends { readonly d: readonly number[] }>({
  q: _q,
  w: _w,
  t: _t,
  ...rest
}: S & { q?: unknown; w?: unknown; t?: unknown }) => rest;
const v3disk: DiskFrame = {
  dev: DEV,
  cls: v4disk.cls.map(({ w: _w, t: _t, sz, ...c }) => ({ ...c, sz: (sz ?? []).map(deviceOnly) })),
  cg: (v4disk.cg ?? []).map(deviceOnly),
};
const seconds = (disk: DiskFrame, from: number, n: number): Frame[] =>
  Array.from({ length: n }, (_, i) => ({ ts: from + i, step: 1, disks: [disk] }));
const v4 = seconds(v4disk, T0, 10);
const mixed = [...seconds(v3disk, T0, 5), ...seconds(v4disk, T0 + 5, 5)];

test('a cgroup filter counts the cgroup’s latency of the phase on screen', () => {
  const matrix = (kind: 'total' | 'queue' | 'device', cgroup: string) =>
    buildMatrix(v4, { from: T0, to: T0 + 10, step: 1, rows: bucketCount(), filter: { dev: DEV, kind, cgroup } });
  const db = matrix('total', '/db');
  assert.equal(db.count(T0 + 3, 70), 6, '/db’s reads waited: their total is in bucket 70');
  assert.equal(db.count(T0 + 3, 45), 0, '/backup’s reads are not /db’s');
  assert.equal(db.total(T0 + 3), 6);
  assert.equal(matrix('total', '/backup').count(T0 + 3, 45), 2);
  assert.equal(matrix('queue', '/backup').count(T0 + 3, 1), 2);
  assert.equal(matrix('device', '/db').count(T0 + 3, 40), 6);
  // The same filter over data before protocol 4: no phase but device latency is the cgroup's.
  const old = buildMatrix(seconds(v3disk, T0, 2), {
    from: T0,
    to: T0 + 2,
    step: 1,
    rows: bucketCount(),
    filter: { dev: DEV, kind: 'total', cgroup: '/db' },
  });
  assert.equal(old.maxCell(), 0, 'nothing drawn as /db’s total');
});

test('the filter is in force for every phase where the data splits them by cgroup, for device latency only where not', () => {
  assert.deepEqual(cgroupPhasesOf(v4[0] as Frame), ['total', 'submit', 'queue']);
  assert.deepEqual(cgroupPhasesOf(mixed[0] as Frame), []);
  const onlyTotal: Frame = { ts: T0, step: 1, disks: [{ ...v3disk, cg: [{ g: '/db', n: 6, d: [40, 6], t: [70, 6] }] }] };
  assert.deepEqual(cgroupPhasesOf(onlyTotal), ['total']);
  assert.equal(cgroupInForce('/db', 'total', ['total', 'submit', 'queue']), '/db');
  assert.equal(cgroupInForce('/db', 'queue', ['total']), undefined, 'a phase the data does not split by cgroup');
  assert.equal(cgroupInForce('/db', 'total', []), undefined);
  assert.equal(cgroupInForce('/db', 'device', []), '/db');
  assert.equal(cgroupInForce(undefined, 'device', ['total']), undefined);
});

test('the cgroup table and size × latency sum the phase; a range with older frames is device latency, said so', () => {
  const cg = cgroupBreakdown(v4, { from: T0, to: T0 + 10, kind: 'total' }, BUCKET_SCHEMA).get(DEV);
  assert.equal(cg?.kind, 'total');
  assert.deepEqual(
    cg?.rows.map((r) => [r.g, r.n, r.hist[70], r.hist[45]]),
    [
      ['/db', 60, 60, 0],
      ['/backup', 20, 0, 20],
    ],
  );
  const sz = sizeLatency(v4, { from: T0, to: T0 + 10, kind: 'submit' }, BUCKET_SCHEMA).get(DEV);
  assert.equal(sz?.kind, 'submit');
  assert.deepEqual(sz?.sizes.slice(0, 1), [12]);
  assert.equal(sz?.hists[0]?.[69], 60, '4 KiB reads waited for a request');
  assert.equal(sz?.hists.at(-1)?.[1], 20, '1 MiB reads did not');

  const oldCg = cgroupBreakdown(mixed, { from: T0, to: T0 + 10, kind: 'total' }, BUCKET_SCHEMA).get(DEV);
  assert.equal(oldCg?.kind, 'device', 'half the range has no total by cgroup: the table is device latency');
  assert.deepEqual(
    oldCg?.rows.map((r) => [r.g, r.n, r.hist[40], r.hist[44], r.hist[70]]),
    [
      ['/db', 60, 60, 0, 0],
      ['/backup', 20, 0, 20, 0],
    ],
  );
  const oldSz = sizeLatency(mixed, { from: T0, to: T0 + 10, kind: 'total' }, BUCKET_SCHEMA).get(DEV);
  assert.equal(oldSz?.kind, 'device');
  assert.equal(oldSz?.hists[0]?.[40], 60);
  assert.equal(oldSz?.hists[0]?.[70], 0, 'never half total, half device');
  // Only the newer half: every phase again.
  assert.equal(sizeLatency(mixed, { from: T0 + 5, to: T0 + 10, kind: 'total' }, BUCKET_SCHEMA).get(DEV)?.hists[0]?.[70], 30);
});

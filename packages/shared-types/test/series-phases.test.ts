// Protocol 4: sizes (ClassSeries.sz) and cgroups (DiskFrame.cg) carry the phases a class does
// (PhaseSeries). Parsed as written, refused when malformed naming the field, summed by the same
// rule as a class's phases (phase-acc.ts) through merges and the (other) fold, and read through
// phaseHist / phaseCarried, which tell data without a phase from "none waited".
import { snapshotOf } from './fixtures.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  CGROUP_OTHER,
  CGROUPS_LISTED,
  type ClassSeries,
  type DiskFrame,
  type Frame,
  mergeFrames,
  overflowIndex,
  parseSnapshot,
  phaseCarried,
  phaseHist,
  type Snapshot,
} from '../src/index.js';

const T0 = 1795290000;
const small = { s: 12, n: 7, d: [40, 7], q: [0, 7], w: [0, 5, 30, 2], t: [41, 5, 52, 2] };
const large = { s: 20, n: 3, d: [44, 3], q: [0, 3], w: [0, 1, 31, 1], t: [45, 1, 53, 1], wu: 1 };
const read: ClassSeries = {
  c: 'Read',
  n: 10,
  d: [40, 7, 44, 3],
  q: [0, 10],
  w: [0, 6, 30, 2, 31, 1],
  t: [41, 5, 45, 1, 52, 2, 53, 1],
  wu: 1,
  sz: [small, large],
};
const disk: DiskFrame = {
  dev: '7:0',
  cls: [read],
  cg: [
    { g: '/a', n: 6, d: [40, 6], q: [0, 6], w: [0, 5, 30, 1], t: [41, 5, 52, 1] },
    { g: '/b', n: 4, d: [40, 1, 44, 3], q: [0, 4], w: [0, 1, 30, 1, 31, 1], t: [45, 1, 52, 1, 53, 1], wu: 1 },
  ],
};
const v4: Snapshot = snapshotOf(T0, disk);

/** Sums a phase of sparse histograms by bucket, as a map. */
function byBucket(hists: readonly (readonly number[])[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const h of hists)
    for (let k = 0; k < h.length; k += 2) out.set(h[k] as number, (out.get(h[k] as number) ?? 0) + (h[k + 1] as number));
  return out;
}

test('the fixture is conserved: each phase summed over sizes, and over cgroups, is the class’s', () => {
  for (const key of ['d', 'q', 'w', 't'] as const) {
    const cls = byBucket([read[key] ?? []]);
    assert.deepEqual(byBucket(read.sz?.map((z) => z[key] ?? []) ?? []), cls, `sizes, ${key}`);
    assert.deepEqual(byBucket(disk.cg?.map((g) => g[key] ?? []) ?? []), cls, `cgroups, ${key}`);
  }
});

test('a snapshot 4 with phases in sizes and cgroups parses to the same value; a version 3 one (device only) still opens', () => {
  const r = parseSnapshot(JSON.stringify(v4));
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.deepEqual(r.value, v4);
  const v3disk = {
    dev: '7:0',
    cls: [{ c: 'Read', n: 4, d: [40, 4], q: [0, 4], sz: [{ s: 12, n: 4, d: [40, 4] }] }],
    cg: [{ g: '/', n: 4, d: [40, 4] }],
  };
  const r3 = parseSnapshot(JSON.stringify({ ...v4, version: 3, frames: [{ ts: T0, step: 1, disks: [v3disk] }] }));
  assert.ok(r3.ok, r3.ok ? '' : r3.message);
  assert.deepEqual(r3.value.frames[0]?.disks[0], v3disk);
});

test('malformed phases of a size or a cgroup are refused, naming the field', () => {
  const at = 'frames.0.disks.0';
  const withDisk = (d: unknown): string => JSON.stringify({ ...v4, frames: [{ ts: T0, step: 1, disks: [d] }] });
  const top = overflowIndex(BUCKET_SCHEMA);
  const cases: [string, string, RegExp][] = [
    [
      withDisk({ ...disk, cls: [{ ...read, sz: [{ ...small, w: [30, 2, 0, 5] }, large] }] }),
      `${at}.cls.0.sz.0.w`,
      /not strictly increasing/,
    ],
    [withDisk({ ...disk, cls: [{ ...read, sz: [small, { ...large, wu: 4 }] }] }), `${at}.cls.0.sz.1.wu`, /must not be above n/],
    [withDisk({ ...disk, cls: [{ ...read, sz: [{ ...small, t: 'x' }, large] }] }), `${at}.cls.0.sz.0.t`, /array/i],
    [withDisk({ ...disk, cls: [{ ...read, sz: [{ ...small, z: [] }, large] }] }), `${at}.cls.0.sz.0`, /unrecognized|z/i],
    [withDisk({ ...disk, cg: [{ ...disk.cg?.[0], q: [0, 0] }] }), `${at}.cg.0.q`, /count 0 at bucket 0 is not a positive integer/],
    [withDisk({ ...disk, cg: [{ ...disk.cg?.[0], wu: -1 }] }), `${at}.cg.0.wu`, />=0/],
    [withDisk({ ...disk, cg: [{ ...disk.cg?.[0], t: [top + 1, 1] }] }), `${at}.cg.0.t`, new RegExp(`bucket index ${top + 1} is outside`)],
    [withDisk({ ...disk, cls: [{ ...read, sz: [small, { ...large, q: [top + 1, 3] }] }] }), `${at}.cls.0.sz.1.q`, /outside/],
  ];
  for (const [text, field, message] of cases) {
    const r = parseSnapshot(text);
    assert.equal(r.ok, false, `accepted: ${field}`);
    if (!r.ok) {
      assert.equal(r.field, field, r.message);
      assert.match(r.message, message);
    }
  }
});

test('merging sums every phase of sizes and cgroups as of classes, and the cgroups past the listed ones fold into (other) with theirs', () => {
  const frames: Frame[] = [0, 1, 2].map((i) => ({ ts: T0 + i, step: 1, disks: [disk] }));
  const merged = mergeFrames(frames, T0, 3).disks[0];
  const sz = merged?.cls[0]?.sz?.find((z) => z.s === 20);
  assert.deepEqual(sz, { s: 20, n: 9, d: [44, 9], q: [0, 9], w: [0, 3, 31, 3], t: [45, 3, 53, 3], wu: 3 });
  assert.deepEqual(
    merged?.cg?.find((g) => g.g === '/b'),
    { g: '/b', n: 12, d: [40, 3, 44, 9], q: [0, 12], w: [0, 3, 30, 3, 31, 3], t: [45, 3, 52, 3, 53, 3], wu: 3 },
  );
  // Old data merged with new: a phase only some seconds had is their sum, not a guess for the others.
  const old: DiskFrame = { dev: '7:0', cls: [{ c: 'Read', n: 2, d: [40, 2], q: [0, 2] }], cg: [{ g: '/a', n: 2, d: [40, 2] }] };
  const mixed = mergeFrames(
    [
      { ts: T0, step: 1, disks: [old] },
      { ts: T0 + 1, step: 1, disks: [disk] },
    ],
    T0,
    2,
  ).disks[0];
  assert.deepEqual(
    mixed?.cg?.find((g) => g.g === '/a'),
    { g: '/a', n: 8, d: [40, 8], q: [0, 6], w: [0, 5, 30, 1], t: [41, 5, 52, 1] },
  );

  // More cgroups than are listed: the rest is one (other) row, every phase summed exactly.
  const many: DiskFrame = {
    dev: '7:0',
    cls: [],
    cg: Array.from({ length: CGROUPS_LISTED + 5 }, (_, i) => ({
      g: `/g${i}`,
      n: 1 + (i % 2),
      d: [40, 1 + (i % 2)],
      q: [0, 1 + (i % 2)],
      t: [41 + (i % 3), 1 + (i % 2)],
    })),
  };
  const folded = mergeFrames([{ ts: T0, step: 1, disks: [many] }], T0, 1).disks[0]?.cg ?? [];
  assert.equal(folded.length, CGROUPS_LISTED);
  for (const key of ['d', 'q', 't'] as const) {
    assert.deepEqual(
      byBucket(folded.map((g) => g[key] ?? [])),
      byBucket(many.cg?.map((g) => g[key] ?? []) ?? []),
      `${key} kept through the fold`,
    );
  }
  const other = folded.find((g) => g.g === CGROUP_OTHER);
  assert.ok(other && other.t !== undefined && other.w === undefined, 'the fold carries the phases its cgroups had, and no other');
});

test('phaseHist and phaseCarried: a size or cgroup without a phase is not data of none waiting', () => {
  const v3size = { s: 12, n: 4, d: [40, 4] };
  assert.deepEqual(phaseHist(v3size, 'queue', 'request'), []);
  assert.equal(phaseCarried(v3size, 'queue', 'request'), false);
  assert.equal(phaseCarried(v3size, 'total', 'request'), false);
  assert.equal(phaseCarried(v3size, 'device', 'request'), true);
  assert.equal(phaseCarried(v3size, 'total', 'bio'), true, 'a bio-based disk’s total is its device time');
  assert.deepEqual(phaseHist(v3size, 'total', 'bio'), [40, 4]);
  assert.equal(phaseCarried(small, 'total', 'request'), true);
  assert.deepEqual(phaseHist(small, 'total', 'request'), small.t);
  assert.deepEqual(phaseHist(small, 'submit', 'request'), small.w);
  assert.equal(phaseCarried(small, 'submit', 'bio'), false, 'a bio-based disk has no submit phase');
});

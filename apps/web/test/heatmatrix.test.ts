// The matrix builder puts counts in the right cells; merging ranges equals summing seconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addSparseInto, BUCKET_SCHEMA, bucketCount, coarsenFrames, denseHist, type Frame, mergeFrames } from '@blkheat/shared-types';
import { buildMatrix, HeatMatrix } from '../src/model/heatmatrix.ts';
import { classBreakdown, diskSummaries } from '../src/model/breakdown.ts';
import { syntheticSource } from './fixtures/synthetic.ts';

const ROWS = bucketCount();
const T0 = 1_700_000_000;

test('buildMatrix: each count lands in column floor(ts/step), row = bucket', () => {
  const frames: Frame[] = [
    { ts: T0, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 3, d: [10, 2, 40, 1], q: [3, 3] }] }] },
    {
      ts: T0 + 2,
      step: 1,
      disks: [
        { dev: '7:0', cls: [{ c: 'Write', n: 5, d: [11, 5], q: [] }] },
        { dev: '8:0', cls: [{ c: 'Read', n: 9, d: [12, 9], q: [] }] },
      ],
    },
  ];
  const m = buildMatrix(frames, { from: T0, to: T0 + 4, step: 1, rows: ROWS, filter: { dev: '7:0', kind: 'device' } });
  assert.equal(m.start, T0);
  assert.equal(m.end, T0 + 4);
  assert.equal(m.count(T0, 10), 2);
  assert.equal(m.count(T0, 40), 1);
  assert.equal(m.count(T0 + 2, 11), 5);
  assert.equal(m.count(T0 + 2, 12), 0, 'another disk');
  assert.equal(m.count(T0 + 1, 10), 0);
  assert.equal(m.total(T0), 3);
  assert.equal(m.total(T0 + 2), 5);
  const q = buildMatrix(frames, { from: T0, to: T0 + 4, step: 1, rows: ROWS, filter: { dev: '7:0', kind: 'queue' } });
  assert.equal(q.count(T0, 3), 3);
  const onlyWrite = buildMatrix(frames, {
    from: T0,
    to: T0 + 4,
    step: 1,
    rows: ROWS,
    filter: { dev: '7:0', kind: 'device', classes: new Set(['Write']) },
  });
  assert.equal(onlyWrite.total(T0), 0);
  assert.equal(onlyWrite.total(T0 + 2), 5);
  // Coarser step: both frames in one 10 s column (T0 is a multiple of 10).
  const coarse = buildMatrix(frames, { from: T0, to: T0 + 10, step: 10, rows: ROWS, filter: { dev: '7:0', kind: 'device' } });
  assert.equal(coarse.end - coarse.start, 1);
  assert.equal(coarse.total(T0 / 10), 8);
});

test('HeatMatrix ring: appending expires the oldest columns, counts never leak between slots', () => {
  const m = new HeatMatrix(ROWS, 1, 4, 0);
  for (let c = 0; c < 10; c++) m.addSparse(c, [c + 1, c + 1]);
  assert.equal(m.start, 6);
  assert.equal(m.end, 10);
  for (let c = 6; c < 10; c++) {
    assert.equal(m.count(c, c + 1), c + 1);
    assert.equal(m.total(c), c + 1);
    assert.equal(
      m.column(c).reduce((s, v) => s + v, 0),
      c + 1,
      'old slot contents cleared',
    );
  }
  assert.equal(m.count(5, 6), 0, 'expired');
  assert.equal(m.ensure(2), false, 'too old for the ring');
  // A jump far ahead clears everything.
  m.addSparse(100, [1, 1]);
  assert.equal(m.start, 97);
  for (let c = 97; c < 100; c++) {
    assert.equal(m.total(c), 0);
    // Their slots held columns 9, 6 and 7: the counts themselves are cleared, not just the totals.
    assert.deepEqual([...m.column(c)], new Array<number>(ROWS).fill(0), `column ${c}'s counts`);
  }
  // Growing left while there is room.
  const l = new HeatMatrix(ROWS, 1, 4, 10);
  l.addSparse(10, [1, 1]);
  assert.equal(l.ensure(8), true);
  assert.equal(l.start, 8);
  assert.equal(l.total(9), 0);
  assert.equal(l.ensure(6), false);
});

test('HeatMatrix slot versions change exactly when a column changes', () => {
  const m = new HeatMatrix(ROWS, 1, 4, 0);
  m.addSparse(0, [1, 1]);
  const v0 = m.slotVersion[m.slot(0)];
  const v1 = m.slotVersion[m.slot(1)];
  m.addSparse(0, [2, 1]);
  assert.notEqual(m.slotVersion[m.slot(0)], v0);
  assert.equal(m.slotVersion[m.slot(1)], v1);
  // Reusing a slot for a new column (ring wrap) changes its version too.
  const before = m.slotVersion[m.slot(4)];
  m.addSparse(4, [1, 1]);
  assert.notEqual(m.slotVersion[m.slot(4)], before);
});

test('merging ranges equals summing seconds (matrix columns, coarsened frames, breakdowns)', () => {
  const src = syntheticSource();
  const frames = src.frames(T0 + 100, T0 + 160); // includes the loop0 spike
  for (const step of [2, 5, 10, 15, 30, 60]) {
    const from = Math.floor((T0 + 100) / step) * step;
    const to = Math.ceil((T0 + 160) / step) * step;
    const coarse = coarsenFrames(frames, step);
    for (const dev of ['253:0', '7:0', '252:0']) {
      for (const kind of ['device', 'queue'] as const) {
        const filter = { dev, kind };
        const fromSeconds = buildMatrix(frames, { from, to, step, rows: ROWS, filter });
        const fromCoarse = buildMatrix(coarse, { from, to, step, rows: ROWS, filter });
        const fine = buildMatrix(frames, { from, to, step: 1, rows: ROWS, filter });
        for (let c = from / step; c < to / step; c++) {
          // Brute force: add up the 1 s columns of this step.
          const sum = fine.sumColumns(c * step, (c + 1) * step);
          assert.deepEqual([...fromSeconds.column(c)], [...sum], `step ${step} col ${c} ${dev} ${kind}`);
          assert.deepEqual([...fromCoarse.column(c)], [...sum]);
        }
      }
    }
    // Breakdowns over the same range agree whichever resolution they are computed from.
    const a = classBreakdown(frames, { from, to, kind: 'device' }, BUCKET_SCHEMA);
    const b = classBreakdown(coarse, { from, to, kind: 'device' }, BUCKET_SCHEMA);
    assert.deepEqual(
      a.map((x) => [x.c, x.n, [...x.hist]]),
      b.map((x) => [x.c, x.n, [...x.hist]]),
    );
    assert.deepEqual(diskSummaries(frames, from, to, BUCKET_SCHEMA), diskSummaries(coarse, from, to, BUCKET_SCHEMA));
  }
  // The whole range merged into one frame equals the sum of every second's histograms.
  const merged = mergeFrames(frames, T0 + 100, 60);
  const loop = merged.disks.find((d) => d.dev === '7:0');
  assert.ok(loop);
  const brute = denseHist();
  for (const f of frames) for (const d of f.disks) if (d.dev === '7:0') for (const c of d.cls) addSparseInto(brute, c.d);
  const viaMerge = denseHist();
  for (const c of loop.cls) addSparseInto(viaMerge, c.d);
  assert.deepEqual([...viaMerge], [...brute]);
});

test('classBreakdown: counts, shares and the class filter', () => {
  const src = syntheticSource();
  const frames = src.frames(T0 + 200, T0 + 230); // Sync-Write burst on vda
  const rows = classBreakdown(frames, { from: T0 + 200, to: T0 + 230, kind: 'device', devs: new Set(['253:0']) }, BUCKET_SCHEMA);
  const total = rows.reduce((s, r) => s + r.n, 0);
  let brute = 0;
  for (const f of frames) for (const d of f.disks) if (d.dev === '253:0') for (const c of d.cls) brute += c.n;
  assert.equal(total, brute);
  assert.equal(rows[0]?.c, 'Sync-Write', 'the burst dominates');
  assert.ok(Math.abs(rows.reduce((s, r) => s + r.share, 0) - 1) < 1e-9);
  for (const r of rows) assert.equal(r.quantiles.length, 4);
});

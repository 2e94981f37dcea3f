// The range summary sums a big range in slices (one per task on the page): sliced or at once,
// the result is the same, and it agrees with counting the frames by brute force.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, bucketCount, conservedCount, type Frame } from '@blkheat/shared-types';
import { BreakdownTally } from '../src/model/breakdown.ts';
import { NOTHING_KNOWN } from '../src/model/gaps.ts';
import { buildMatrix } from '../src/model/heatmatrix.ts';
import { SUMMARY_SLICE, summarize, summarizeNow, type SummaryInput, summaryWeight } from '../src/model/summary.ts';
import { manyClassesSource } from './fixtures/manyClasses.ts';
import { syntheticSource } from './fixtures/synthetic.ts';

const ROWS = bucketCount();
const T0 = 1_700_000_000;

function input(frames: readonly Frame[], from: number, to: number, step: number): SummaryInput {
  const devs = ['253:0', '7:0'];
  const matrices = new Map(
    devs.map((dev) => [
      dev,
      buildMatrix(frames, {
        from: frames[0]!.ts,
        to: frames[frames.length - 1]!.ts + 1,
        step,
        rows: ROWS,
        filter: { dev, kind: 'device' },
      }),
    ]),
  );
  return {
    from,
    to,
    step,
    frames,
    matrices,
    devs: new Set(devs),
    kind: 'device',
    schema: BUCKET_SCHEMA,
    snapshotRange: { from: T0, to: T0 + 3600 },
    known: NOTHING_KNOWN,
  };
}

test('summarize: in slices or at once, the same summary; brute force agrees', () => {
  const frames = syntheticSource().frames(T0, T0 + 1200);
  const inp = input(frames, T0 + 300, T0 + 900, 10);
  const steps = summarize(inp, 100);
  let yields = 0;
  let r = steps.next();
  while (!r.done) {
    yields++;
    r = steps.next();
  }
  assert.ok(yields >= 10, `a big range takes many slices (${yields})`);
  const sliced = r.value;
  const whole = summarizeNow(inp);
  assert.deepEqual(sliced, whole);

  // Brute force over the frames in range.
  const inRange = frames.filter((f) => f.ts >= inp.from && f.ts < inp.to);
  for (const dev of ['253:0', '7:0', '252:0']) {
    let n = 0;
    for (const f of inRange) for (const d of f.disks) if (d.dev === dev) n += conservedCount(d);
    assert.equal(sliced.disks.get(dev)?.n ?? 0, n, `${dev}: completed I/Os`);
  }
  let shown = 0;
  for (const f of inRange) for (const d of f.disks) if (inp.devs.has(d.dev)) for (const c of d.cls) shown += c.n;
  assert.equal(
    sliced.classes.reduce((s, c) => s + c.n, 0),
    shown,
    'class breakdown: the shown disks only',
  );
  assert.equal(
    sliced.perDisk.get('7:0')?.total,
    sliced.perDisk.get('7:0')?.hist.reduce((s, v) => s + v, 0),
  );
  assert.equal(sliced.windowSeconds, 600, 'rates are over the seconds of the range inside the snapshot');
});

test('BreakdownTally: every class of every frame is named for the filter, in range or not', () => {
  const frames = syntheticSource().frames(T0, T0 + 600);
  const names = new Set<string>();
  for (const f of frames) for (const d of f.disks) for (const c of d.cls) names.add(c.c);
  const t = new BreakdownTally({ from: T0, to: T0 + 1, kind: 'queue' }, BUCKET_SCHEMA);
  t.add(frames, 0, 300);
  t.add(frames, 300);
  assert.deepEqual(t.allClasses(), [...names].sort());
  let first = 0;
  for (const f of frames) if (f.ts === T0) for (const d of f.disks) first += conservedCount(d);
  assert.equal(
    [...t.disks().values()].reduce((s, d) => s + d.n, 0),
    first,
    'only the range is counted',
  );
});

test('summarize: a disk-frame of thousands of classes is many slices of work, not one', () => {
  // 4,096 classes (the snapshot limit) in each of 10 frames: counted as disk-frames, the whole
  // range was one slice, and the page summed it in one long task.
  const frames = manyClassesSource(4096).frames(T0, T0 + 10);
  assert.ok(summaryWeight(frames) >= 10 * 500, `weight ${summaryWeight(frames)}`);
  const steps = summarize(input(frames, T0, T0 + 10, 1), SUMMARY_SLICE);
  let yields = 0;
  for (let r = steps.next(); !r.done; r = steps.next()) yields++;
  assert.equal(yields, 9, 'a yield between every two frames');
});

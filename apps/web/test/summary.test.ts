// The range summary sums a big range in slices (one per task on the page): sliced or at once,
// the result is the same, and it agrees with counting the frames by brute force.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, bucketCount, conservedCount, type DiskFrame, type Frame } from '@blkheat/shared-types';
import { BreakdownTally } from '../src/model/breakdown.ts';
import { NOTHING_KNOWN } from '../src/model/gaps.ts';
import { buildMatrix } from '../src/model/heatmatrix.ts';
import {
  RunningSummary,
  SUMMARY_SLICE,
  summarize,
  summarizeNow,
  type Summary,
  type SummaryInput,
  summaryWeight,
} from '../src/model/summary.ts';
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

/**
 * The synthetic frames with every split a summary sums: each class's device latency also as its
 * submit wait and total, one size class, and two cgroups per disk (so the cgroup, size and
 * submit-wait tallies all have something to add).
 */
function withSplits(frames: readonly Frame[]): Frame[] {
  return frames.map((f) => ({
    ...f,
    disks: f.disks.map((d): DiskFrame => ({
      ...d,
      cls: d.cls.map((c) => ({ ...c, w: c.d, t: c.d, sz: [{ s: 12, n: c.n, d: c.d }] })),
      cg: [
        { g: '/a', n: d.cls.reduce((s, c) => s + c.n, 0), d: d.cls[0]?.d ?? [] },
        { g: '/b', n: 1, d: [3, 1] },
      ],
    })),
  }));
}

/** A plain copy of a summary's numbers (its quantiles read), to compare later. */
function numbers(s: Summary): unknown {
  return JSON.parse(
    JSON.stringify(s, (_k, v: unknown) =>
      v instanceof Map ? Object.fromEntries(v) : ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v,
    ),
  );
}

test('RunningSummary: a live window summed second by second equals summing it whole, and a summary read stays as read', () => {
  const all = withSplits(syntheticSource().frames(T0, T0 + 900));
  const frames: Frame[] = all.slice(0, 300);
  const base = input(all, T0 + 100, T0 + 900, 10);
  // As a live window's: the range ends at the column after the newest frame, so it moves on a
  // column every ten frames while its start stays.
  const live = (): SummaryInput => ({ ...base, to: Math.ceil((frames.at(-1)!.ts + 1) / 10) * 10, frames, devs: new Set(base.devs) });
  const running = new RunningSummary(live(), true);
  let read = summarizeNow(live());
  const steps = running.catchUp();
  for (let r = steps.next(); ; r = steps.next()) if (r.done) break;
  const reads: { summary: Summary; numbers: unknown; frames: number }[] = [];
  let i = 300;
  let added = 0;
  while (i < all.length) {
    // One to seven frames at a time (a live second, or a burst after a stall).
    const n = 1 + (i % 7);
    for (const f of all.slice(i, i + n)) frames.push(f);
    i += n;
    // Now and then the window drops its oldest frames, out of the range by then (as a live
    // window does once its matrices move on).
    if (i % 13 === 0) while (frames[0]!.ts < base.from && frames[0]!.ts < T0 + (i % 100)) frames.shift();
    const next = live();
    assert.ok(running.follows(next), `frames grown to ${frames.length}: the same range, only longer`);
    const steps2 = running.retarget(next).catchUp();
    const r = steps2.next();
    assert.ok(r.done === true, 'a few new frames are one slice');
    read = r.value;
    added++;
    assert.deepEqual(numbers(read), numbers(summarizeNow(next)), `after ${frames.length} frames: the same as summing the window whole`);
    if (added % 20 === 0) reads.push({ summary: read, numbers: numbers(read), frames: frames.length });
  }
  assert.ok(reads.length >= 4, `${reads.length} reads kept`);
  const classes = read.classes.reduce((s, c) => s + c.n, 0);
  assert.ok(classes > 0 && (read.sizes.get('7:0')?.sizes.length ?? 0) > 0 && (read.cgroups.get('7:0')?.rows.length ?? 0) === 2);
  // Summaries read earlier: their numbers are what they were (the tallies went on without them).
  for (const r of reads) assert.deepEqual(numbers(r.summary), r.numbers, `the summary read at ${r.frames} frames is unchanged`);
  assert.notDeepEqual(reads[0]!.numbers, numbers(read), 'and later summaries did count more');
});

test('RunningSummary.follows: only the same range over the same frames array, grown at its end', () => {
  const all = withSplits(syntheticSource().frames(T0, T0 + 200));
  const frames = all.slice(0, 100);
  const base: SummaryInput = { ...input(all, T0, T0 + 200, 10), frames };
  const running = new RunningSummary(base, true);
  const steps = running.catchUp();
  for (let r = steps.next(); !r.done; r = steps.next());
  frames.push(all[100]!);
  assert.equal(running.follows({ ...base }), true, 'grown at the end');
  assert.equal(running.follows({ ...base, from: T0 - 10 }), false, 'an earlier start');
  assert.equal(running.follows({ ...base, from: T0 + 10 }), true, 'a later start (the frames before it are taken back)');
  assert.equal(running.follows({ ...base, kind: 'queue' }), false, 'another phase');
  assert.equal(running.follows({ ...base, classes: new Set(['R']) }), false, 'a class filter');
  assert.equal(running.follows({ ...base, devs: new Set(['7:0']) }), false, 'other disks');
  assert.equal(running.follows({ ...base, frames: [...frames] }), false, 'another array (a new window)');
  const moved = frames.splice(0, 1);
  assert.equal(running.follows({ ...base }), false, 'frames cut at the front');
  frames.unshift(...moved);
  assert.equal(running.follows({ ...base }), true, 'the same again');
  // A range starting at T0 + 5: the window may drop frames before it, not those in it.
  const later: SummaryInput = { ...base, from: T0 + 5 };
  const fromFive = new RunningSummary(later, true);
  for (let r = fromFive.catchUp().next(); !r.done; r = fromFive.catchUp().next());
  const dropped = frames.splice(0, 3);
  assert.equal(fromFive.follows({ ...later }), true, 'frames before the range dropped from the front');
  const again = fromFive
    .retarget({ ...later })
    .catchUp()
    .next();
  assert.ok(again.done === true);
  assert.deepEqual(numbers(again.value), numbers(summarizeNow({ ...later })), 'and the summary is the one of the frames left');
  const inRange = frames.splice(0, 5);
  assert.equal(fromFive.follows({ ...later }), false, 'frames of the range dropped');
  frames.unshift(...dropped, ...inRange);
  frames.splice(50, 0, all[150]!);
  assert.equal(running.follows({ ...base }), false, 'a frame put in before the last one fed (a filled gap)');
  frames.splice(50, 1);
  assert.equal(running.follows({ ...base, to: T0 + 210 }), true, 'the end moved on a column, past every frame');
  frames.push(all[199]!);
  assert.equal(running.follows({ ...base, to: T0 + 190 }), false, 'the end moved before a frame');
  frames.pop();
  const closed = new RunningSummary({ ...base, to: T0 + 50 }, true);
  assert.equal(closed.follows({ ...base, to: T0 + 50 }), true, 'frames past the end: the same range');
  assert.equal(closed.follows({ ...base, to: T0 + 60 }), false, 'frames past the end: the end may not move');
  assert.equal(new RunningSummary(base, false).follows({ ...base }), false, 'a summary that is not detached is summed once');
  assert.throws(() => running.retarget({ ...base, from: T0 - 10 }), /not the same range/);
  // Frames out of time order: a later start cannot take the ones it leaves out back from the front.
  const shuffled = [...frames.slice(50, 60), ...frames.slice(0, 50)];
  const unordered = new RunningSummary({ ...base, frames: shuffled }, true);
  for (let r = unordered.catchUp().next(); !r.done; r = unordered.catchUp().next());
  assert.equal(unordered.follows({ ...base, frames: shuffled, from: T0 + 20 }), false, 'frames left out after frames kept');
  assert.equal(unordered.follows({ ...base, frames: shuffled }), true, 'the same start: order does not matter');
});

/**
 * The frames with what else a disk's summary counts: failures by status, passthrough, untimed,
 * records dropped, causes, wbt and full tags; some now and then, some only in a burst of
 * [BURST, BURST + 20) (a class, a status, a wait's causes: gone from a range that moved past it).
 */
const BURST = 450;
function withIncidents(frames: readonly Frame[]): Frame[] {
  return frames.map((f, i) => ({
    ...f,
    disks: f.disks.map((d, k): DiskFrame => {
      const j = i + 3 * k;
      const burst = i >= BURST && i < BURST + 20;
      return {
        ...d,
        cls: [
          ...d.cls.map((c, m) => (j % 7 === m ? { ...c, e: { IOERR: 1 + (j % 3), ...(burst ? { TIMEOUT: 1 } : {}) } } : c)),
          ...(j % 9 === 0 ? [{ c: `Passthrough-${j % 2}`, n: 2, d: [5, 2], q: [], pt: true as const }] : []),
          ...(burst ? [{ c: 'Burst-Read', n: 5, d: [40, 5], q: [], w: [45, 5], t: [46, 5] }] : []),
        ],
        ...(j % 5 === 0 ? { untimed: { read: 3 }, dropped: 2, missed: 1 } : {}),
        ...(burst ? { causes: { frozen: 2, refused: 1 }, wbt: 1, tags_full: 1 } : {}),
      };
    }),
  }));
}

test('RunningSummary: a following range whose start moves on a column at a time equals summing it afresh at every second', () => {
  const all = withIncidents(withSplits(syntheticSource().frames(T0, T0 + 1200)));
  const SPAN = 300;
  const STEP = 10;
  const frames: Frame[] = all.slice(0, 400);
  const base = input(all, T0, T0 + 1200, STEP);
  // A following window's range: whole columns from SPAN seconds before the newest frame to the column after it.
  const following = (): SummaryInput => {
    const edge = frames.at(-1)!.ts + 1;
    return { ...base, from: Math.floor((edge - SPAN) / STEP) * STEP, to: Math.ceil(edge / STEP) * STEP, frames, devs: new Set(base.devs) };
  };
  const running = new RunningSummary(following(), true);
  for (let r = running.catchUp().next(); !r.done; r = running.catchUp().next());
  let moved = 0;
  let peaksMoved = 0;
  const causes = new Set<string>();
  let last = summarizeNow(following());
  for (let i = 400; i < all.length;) {
    const n = 1 + (i % 3);
    for (const f of all.slice(i, i + n)) frames.push(f);
    i += n;
    const next = following();
    // The window drops frames well before the range now and then (a live window's ring).
    if (i % 17 === 0) while (frames[0]!.ts < next.from - 30) frames.shift();
    assert.ok(running.follows(next), `at ${frames.length} frames, start ${next.from - T0}: the same range, moved on`);
    if (next.from > last.from) moved++;
    const r = running.retarget(next).catchUp().next();
    assert.ok(r.done === true, 'a few new frames are one slice');
    const fresh = summarizeNow(next);
    assert.deepEqual(
      numbers(r.value),
      numbers(fresh),
      `start ${next.from - T0}, end ${next.to - T0}: the same as summing the range afresh`,
    );
    if (JSON.stringify([...r.value.peaks]) !== JSON.stringify([...last.peaks])) peaksMoved++;
    causes.add(r.value.submitWait.get('7:0')?.cause ?? 'none');
    last = r.value;
  }
  assert.ok(moved >= 70, `the start moved ${moved} times`);
  // A zoom into the range's last 10 s would take back 290 s of frames at once: summed afresh instead.
  const zoomed = { ...following(), from: following().to - 10 };
  assert.ok(
    summaryWeight(frames.filter((f) => f.ts >= last.from && f.ts < zoomed.from)) > SUMMARY_SLICE,
    'more than a slice of work left out',
  );
  assert.equal(
    running.follows(zoomed),
    false,
    'a start that leaves out more than a slice of work is summed afresh, not taken back at once',
  );
  assert.ok(peaksMoved > 0, `the busiest step changed ${peaksMoved} times as the range moved`);
  assert.deepEqual([...causes].sort(), ['none', 'tags'], 'the burst’s waits were named while it was in the range, and not after');
  assert.equal(last.disks.get('7:0')?.byClass['Burst-Read'], undefined, 'the range moved past the burst');
  // What the range counts that a moving start takes back: every kind of it is there to take.
  const d = last.disks.get('7:0');
  assert.ok(
    d && d.failed > 0 && d.untimed > 0 && d.passthrough > 0 && d.dropped > 0,
    'failures, untimed, passthrough and dropped records counted',
  );
  assert.ok((last.cgroups.get('7:0')?.rows.length ?? 0) === 2 && (last.sizes.get('7:0')?.sizes.length ?? 0) > 0);
});

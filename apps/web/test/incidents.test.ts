// Incident views' model (model/stuck.ts, model/faults.ts, the errors column of model/breakdown.ts):
// stuck I/O judged on one frame's in-flight list against a threshold (strictly longer), counted
// with "≥" when the agent's list may have left some out; stuck spans from start = ts + step − age
// to the newest sighting, one per I/O across 1 s and merged (coarse) frames; failed I/Os by block
// status and requeues per column, exact across coarsening; failed I/Os per op class.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type ClassSeries, coarsenFrames, type DiskFrame, type Frame, type InflightIo } from '@blkheat/shared-types';
import { classBreakdown } from '../src/model/breakdown.ts';
import { faultColumns, faultsAt, statusText } from '../src/model/faults.ts';
import { formatLatency } from '../src/model/latency.ts';
import { parseStuckSeconds, stuckNow, stuckSpans, stuckText } from '../src/model/stuck.ts';

const T0 = 1_700_000_000; // a multiple of 10 and 60
const DEV = '7:0';

const io = (ageS: number, pid = 4242, comm = 'dd', sector: number | null = 2048): InflightIo => ({
  c: 'Read',
  pid,
  comm,
  sector,
  bytes: 4096,
  age_ns: Math.round(ageS * 1e9),
  dev_age_ns: Math.round(ageS * 1e9) - 1000,
});
const inflightDisk = (ios: InflightIo[], n = ios.length, oldestS = Math.max(0, ...ios.map((i) => i.age_ns / 1e9))): DiskFrame => ({
  dev: DEV,
  cls: [],
  inflight: { n, oldest_ns: Math.round(oldestS * 1e9), ios },
});

test('stuckNow: only I/O in flight strictly longer than the threshold, oldest first', () => {
  assert.equal(stuckNow(undefined, 1), undefined, 'a disk absent from the frame had nothing in flight');
  assert.equal(stuckNow({ dev: DEV, cls: [] }, 1), undefined, 'no inflight (old agent): not stuck');
  assert.equal(stuckNow(inflightDisk([io(0.5)]), 1), undefined);
  assert.equal(stuckNow(inflightDisk([io(1)]), 1), undefined, 'exactly the threshold is not longer than it');

  const s = stuckNow(inflightDisk([io(2, 7, 'a'), io(12.3, 8, 'b'), io(0.5, 9, 'c')], 5), 1);
  assert.ok(s);
  assert.equal(s.count, 2);
  assert.equal(s.atLeast, false, 'a listed I/O is younger: the unlisted ones are too');
  assert.equal(s.oldestS, 12.3);
  assert.deepEqual(
    s.ios.map((x) => [x.pid, x.comm, x.ageS]),
    [
      [8, 'b', 12.3],
      [7, 'a', 2],
    ],
  );
  assert.equal(stuckText(s, formatLatency), 'stuck: 2 I/Os, oldest 12.3 s');

  const one = stuckNow(inflightDisk([io(3)]), 1);
  assert.ok(one);
  assert.equal(stuckText(one, formatLatency), 'stuck: 1 I/O, oldest 3.00 s');

  // Every listed I/O is stuck and more were in flight: at least that many.
  const more = stuckNow(inflightDisk([io(5), io(4, 1, 'x', 8)], 30), 1);
  assert.ok(more);
  assert.equal(more.count, 2);
  assert.equal(more.atLeast, true);
  assert.equal(stuckText(more, formatLatency), 'stuck: ≥ 2 I/Os, oldest 5.00 s');

  // None listed, but the oldest is over the threshold: one at least.
  const unlisted = stuckNow(inflightDisk([], 3, 9), 1);
  assert.ok(unlisted);
  assert.equal(unlisted.count, 1);
  assert.equal(unlisted.ios.length, 0);
  assert.equal(unlisted.oldestS, 9);

  // The threshold decides.
  assert.equal(stuckNow(inflightDisk([io(12.3)]), 15), undefined);
});

test('parseStuckSeconds: seconds 0.01..3600, a message otherwise', () => {
  assert.deepEqual(parseStuckSeconds('0.5'), { ok: true, value: 0.5 });
  const bad = parseStuckSeconds('forever');
  assert.equal(bad.ok, false);
  assert.ok(!bad.ok && /expected a number of seconds from 0\.01 to 3600/.test(bad.message));
});

/** A stuck I/O made at `start` (fractional), in flight until `done` (exclusive second), in 1 s frames [from, to). */
function hangFrames(from: number, to: number, start: number, done: number, pid = 4242): Frame[] {
  const out: Frame[] = [];
  for (let ts = from; ts < to; ts++) {
    const age = ts + 1 - start;
    const inFlight = ts >= Math.floor(start) && ts < done;
    out.push({ ts, step: 1, disks: inFlight ? [inflightDisk([io(age, pid)])] : [] });
  }
  return out;
}

test('stuckSpans: start = ts + step − age, end = the newest sighting, one span per I/O', () => {
  const start = T0 + 3.3;
  const frames = hangFrames(T0, T0 + 20, start, T0 + 11);
  const spans = stuckSpans(frames, DEV, 1);
  assert.equal(spans.length, 1);
  const s = spans[0];
  assert.ok(s);
  assert.ok(Math.abs(s.start - start) < 1e-6, `start ${s.start}`);
  assert.equal(s.end, T0 + 11, 'last seen in flight when second T0+10 closed');
  assert.ok(Math.abs(s.ageS - 7.7) < 1e-6);
  assert.equal(s.pid, 4242);
  // Seen only while older than the threshold: a 10 s threshold sees nothing.
  assert.deepEqual(stuckSpans(frames, DEV, 10), []);
  // Another disk is not this one.
  assert.deepEqual(stuckSpans(frames, '8:0', 1), []);
  // Order of the frames does not matter.
  assert.deepEqual(stuckSpans([...frames].reverse(), DEV, 1), spans);

  // Two I/Os hanging at once are two spans, oldest start first.
  const two = frames.map((f, i) => {
    const other = hangFrames(T0, T0 + 20, T0 + 6.1, T0 + 15, 99)[i] as Frame;
    const a = f.disks[0]?.inflight?.ios ?? [];
    const b = other.disks[0]?.inflight?.ios ?? [];
    return { ...f, disks: a.length + b.length > 0 ? [inflightDisk([...a, ...b])] : [] };
  });
  assert.deepEqual(
    stuckSpans(two, DEV, 1).map((x) => [x.pid, Math.round(x.start * 10) / 10, x.end]),
    [
      [4242, T0 + 3.3, T0 + 11],
      [99, T0 + 6.1, T0 + 15],
    ],
  );
});

test('stuckSpans on merged frames: the start falls in the column it started in; a finer sighting wins', () => {
  const start = T0 + 3.3;
  const frames = hangFrames(T0, T0 + 30, start, T0 + 14);
  const coarse = coarsenFrames(frames, 10, BUCKET_SCHEMA);
  const spans = stuckSpans(coarse, DEV, 1);
  assert.equal(spans.length, 1, 'one I/O seen in two merged frames is one span');
  const s = spans[0];
  assert.ok(s);
  assert.equal(Math.floor(s.start / 10), Math.floor(start / 10), 'drawn above the 10 s column it started in');
  assert.ok(s.start >= start - 1e-6, 'a merged frame cannot make it start earlier than it did');
  assert.equal(s.end, T0 + 20, 'the end of the merged frame of its last sighting');
  assert.ok(Math.abs(s.ageS - (T0 + 14 - start)) < 1e-6, 'the worst second of that frame: its age when last seen');
  // The newest live second beside coarse frames (a zoomed live view): the fine start wins.
  const mixed = stuckSpans([...coarse, frames[13] as Frame], DEV, 1);
  assert.equal(mixed.length, 1);
  assert.ok(Math.abs((mixed[0] as { start: number }).start - start) < 1e-6);
});

const cls = (c: string, n: number, e?: Record<string, number>, pt?: true): ClassSeries => ({
  c,
  n,
  d: [],
  q: [],
  ...(e ? { e } : {}),
  ...(pt ? { pt } : {}),
});

/** A column's causes of submit wait, none. */
const NONE = { frozen: 0, refused: 0, wbt: 0, tagsFull: 0, queueChanged: [] };

test('faults: failed I/Os by status and requeues per column, exact when merged', () => {
  const frames: Frame[] = [
    { ts: T0, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 10, { IOERR: 2 }), cls('Write', 5, { TIMEOUT: 1, IOERR: 1 })] }] },
    { ts: T0 + 1, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 3)], requeues: 4 }] },
    { ts: T0 + 2, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 3)] }] },
    // A failed passthrough command failed too.
    {
      ts: T0 + 3,
      step: 1,
      disks: [
        { dev: DEV, cls: [cls('DrvIn', 1, { IOERR: 1 }, true)] },
        { dev: '8:0', cls: [], requeues: 50 },
      ],
    },
    { ts: T0 + 12, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 9, { NOSPC: 3 })], requeues: 1 }] },
  ];
  const cols = faultColumns(frames, DEV, 1, T0, T0 + 20);
  assert.deepEqual(cols, [
    { col: T0, failed: 4, byStatus: { IOERR: 3, TIMEOUT: 1 }, requeues: 0, ...NONE },
    { col: T0 + 1, failed: 0, byStatus: {}, requeues: 4, ...NONE },
    { col: T0 + 3, failed: 1, byStatus: { IOERR: 1 }, requeues: 0, ...NONE },
    { col: T0 + 12, failed: 3, byStatus: { NOSPC: 3 }, requeues: 1, ...NONE },
  ]);
  assert.deepEqual(faultsAt(frames, DEV, 1, T0 + 2), { col: T0 + 2, failed: 0, byStatus: {}, requeues: 0, ...NONE });
  assert.deepEqual(faultColumns(frames, DEV, 1, T0 + 1, T0 + 3).length, 1, 'only the columns asked for');
  // Merged into 10 s frames (as a zoomed view gets them), or 10 s columns of 1 s frames: the sums.
  const want = [
    { col: T0 / 10, failed: 5, byStatus: { IOERR: 4, TIMEOUT: 1 }, requeues: 4, ...NONE },
    { col: T0 / 10 + 1, failed: 3, byStatus: { NOSPC: 3 }, requeues: 1, ...NONE },
  ];
  assert.deepEqual(faultColumns(coarsenFrames(frames, 10, BUCKET_SCHEMA), DEV, 10, T0 / 10, T0 / 10 + 2), want);
  assert.deepEqual(faultColumns(frames, DEV, 10, T0 / 10, T0 / 10 + 2), want);
  assert.equal(statusText({ IOERR: 4, TIMEOUT: 1, AGAIN: 1 }), 'IOERR 4, AGAIN 1, TIMEOUT 1');
});

test('faults: causes of submit wait per column (protocols 4, 5): frozen and refused I/Os, wbt windows and tags_full seconds add, changed queue settings join, exact when merged', () => {
  const frames: Frame[] = [
    { ts: T0, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 10)], causes: { frozen: 3 }, queue_changed: ['scheduler'] }] },
    { ts: T0 + 1, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 10)], causes: { refused: 7 } }] },
    { ts: T0 + 2, step: 1, disks: [{ dev: DEV, cls: [cls('Write', 4)], wbt: 9 }] },
    { ts: T0 + 3, step: 1, disks: [{ dev: DEV, cls: [], queue_changed: ['nr_requests'], tags_full: 1 }] },
  ];
  assert.deepEqual(faultColumns(frames, DEV, 1, T0, T0 + 4), [
    { col: T0, failed: 0, byStatus: {}, requeues: 0, ...NONE, frozen: 3, queueChanged: ['scheduler'] },
    { col: T0 + 1, failed: 0, byStatus: {}, requeues: 0, ...NONE, refused: 7 },
    { col: T0 + 2, failed: 0, byStatus: {}, requeues: 0, ...NONE, wbt: 9 },
    { col: T0 + 3, failed: 0, byStatus: {}, requeues: 0, ...NONE, tagsFull: 1, queueChanged: ['nr_requests'] },
  ]);
  const want = [
    {
      col: T0 / 10,
      failed: 0,
      byStatus: {},
      requeues: 0,
      frozen: 3,
      refused: 7,
      wbt: 9,
      tagsFull: 1,
      queueChanged: ['scheduler', 'nr_requests'],
    },
  ];
  assert.deepEqual(faultColumns(coarsenFrames(frames, 10, BUCKET_SCHEMA), DEV, 10, T0 / 10, T0 / 10 + 1), want);
  assert.deepEqual(faultColumns(frames, DEV, 10, T0 / 10, T0 / 10 + 1), want);
});

test('class breakdown: failed I/Os per class, by status', () => {
  const frames: Frame[] = [
    { ts: T0, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 10, { IOERR: 2 }), cls('Write', 5)] }] },
    { ts: T0 + 1, step: 1, disks: [{ dev: '8:0', cls: [cls('Read', 7, { IOERR: 1, TIMEOUT: 2 })] }] },
    { ts: T0 + 5, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 1, { IOERR: 1 })] }] }, // outside the range
  ];
  const rows = classBreakdown(frames, { from: T0, to: T0 + 5, kind: 'device' }, BUCKET_SCHEMA);
  const byName = new Map(rows.map((r) => [r.c, r]));
  assert.equal(byName.get('Read')?.failed, 5);
  assert.deepEqual(byName.get('Read')?.errors, { IOERR: 3, TIMEOUT: 2 });
  assert.equal(byName.get('Write')?.failed, 0);
  const only = classBreakdown(frames, { from: T0, to: T0 + 5, kind: 'device', devs: new Set([DEV]) }, BUCKET_SCHEMA);
  assert.equal(only.find((r) => r.c === 'Read')?.failed, 2, 'over the shown disks only');
});

test('stuck: bios waiting for a request (protocol 4) count, a frozen queue says so; spans mark the oldest wait', () => {
  const waitingDisk = (waitS: number, waiting = 28, frozen = true, ios: InflightIo[] = []): DiskFrame => ({
    dev: DEV,
    cls: [],
    inflight: {
      n: ios.length,
      oldest_ns: Math.round(Math.max(0, ...ios.map((i) => i.age_ns / 1e9)) * 1e9),
      ios,
      waiting,
      oldest_wait_ns: Math.round(waitS * 1e9),
      ...(frozen ? { frozen: true as const } : {}),
    },
  });
  // A queue frozen for 10 s: nothing with the driver, 28 bios waiting.
  const s = stuckNow(waitingDisk(10), 1);
  assert.ok(s, 'a queue frozen for 10 s is stuck I/O');
  assert.equal(s.count, 0, 'no request is stuck');
  assert.deepEqual(s.waiting, { count: 28, oldestS: 10 });
  assert.equal(s.frozen, true);
  assert.equal(stuckText(s, formatLatency), 'stuck: 28 bios waiting for a request, oldest 10.0 s (queue frozen)');
  assert.equal(stuckNow(waitingDisk(0.5), 1), undefined, 'waiting less than the threshold');
  assert.equal(stuckNow(waitingDisk(10, 0), 1), undefined, 'no bio waiting');
  // Both: a stuck request and waiting bios behind it.
  const both = stuckNow(waitingDisk(4, 1, false, [io(12.3)]), 1);
  assert.ok(both);
  assert.equal(stuckText(both, formatLatency), 'stuck: 1 I/O, oldest 12.3 s; 1 bio waiting for a request, oldest 4.00 s');
  // Data before protocol 4: what it always was.
  assert.equal(stuckNow(inflightDisk([io(3)]), 1)?.waiting, undefined);

  // The heat map marks the oldest wait as a span of its own, from 3 frames of it.
  const frames: Frame[] = [8, 9, 10].map((ageS, i) => ({ ts: T0 + i, step: 1, disks: [waitingDisk(ageS)] }));
  const spans = stuckSpans(frames, DEV, 1);
  assert.equal(spans.length, 1, 'one waiting bio, seen three times');
  assert.equal(spans[0]?.waiting, true);
  assert.equal(spans[0]?.end, T0 + 3);
  assert.ok(Math.abs((spans[0]?.start ?? 0) - (T0 + 1 - 8)) < 1e-9, 'start = ts + step − age');
});

test('faults: I/Os that found the queue frozen (causes.frozen) mark their column, exact when merged', () => {
  const frames: Frame[] = [
    { ts: T0, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 10)], causes: { frozen: 6 } }] },
    { ts: T0 + 1, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 3)], causes: {} }] },
    { ts: T0 + 4, step: 1, disks: [{ dev: DEV, cls: [cls('Read', 3)], causes: { frozen: 1 } }] },
  ];
  assert.deepEqual(faultColumns(frames, DEV, 1, T0, T0 + 10), [
    { col: T0, failed: 0, byStatus: {}, requeues: 0, ...NONE, frozen: 6 },
    { col: T0 + 4, failed: 0, byStatus: {}, requeues: 0, ...NONE, frozen: 1 },
  ]);
  assert.equal(faultsAt(frames, DEV, 1, T0 + 1).frozen, 0);
  assert.deepEqual(faultColumns(coarsenFrames(frames, 10, BUCKET_SCHEMA), DEV, 10, T0 / 10, T0 / 10 + 1), [
    { col: T0 / 10, failed: 0, byStatus: {}, requeues: 0, ...NONE, frozen: 7 },
  ]);
});

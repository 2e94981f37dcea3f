// Throughput per heat map column (model/throughput.ts): exact IOPS, MB/s and I/Os in flight from
// synthetic frames; passthrough classes left out; missing `b` or `inflight` is no data (NaN),
// never 0; coarse columns rate over the seconds recorded and keep the worst queue depth and the
// oldest age in flight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClassSeries, DiskFrame, Frame } from '@blkheat/shared-types';
import { formatRate } from '../src/model/format.ts';
import {
  formatThroughput,
  laneCaption,
  laneFacts,
  LANE_TOP_HOLD,
  laneTopHeld,
  ThroughputColumns,
  throughputAt,
  throughputSeries,
  waitingAt,
} from '../src/model/throughput.ts';

const T0 = 1_700_000_000;
const cls = (c: string, n: number, b?: number, pt?: true): ClassSeries => ({
  c,
  n,
  d: [],
  q: [],
  ...(b !== undefined ? { b } : {}),
  ...(pt ? { pt } : {}),
});
/** In flight: `inflight` I/Os, the oldest `oldestNs` old (default 1000 ns × inflight). */
const disk = (dev: string, c: ClassSeries[], inflight?: number, oldestNs?: number): DiskFrame => ({
  dev,
  cls: c,
  ...(inflight !== undefined ? { inflight: { n: inflight, oldest_ns: oldestNs ?? 1000 * inflight, ios: [] } } : {}),
});
const frame = (ts: number, disks: DiskFrame[], step = 1): Frame => ({ ts, step, disks });
const list = (a: Float64Array): (number | null)[] => Array.from(a, (v) => (Number.isNaN(v) ? null : v));

test('per-second columns: IOPS, MB/s and in flight, exact', () => {
  const frames = [
    frame(T0, [disk('7:0', [cls('Read', 100, 409_600), cls('Write', 50, 2_000_000), cls('DrvIn', 9, 999, true)], 4)]),
    // Another disk does not count; the frame has no 7:0: recorded, idle (0 for all three).
    frame(T0 + 1, [disk('8:0', [cls('Read', 1000, 1e9)], 7)]),
    // Old data: no `b` and no `inflight`.
    frame(T0 + 2, [disk('7:0', [cls('Read', 30)])]),
    // T0 + 3: no frame at all (not recorded).
    // Mixed: one class with bytes, one without (with I/Os): MB/s unknown; a class with n = 0 and no b is fine.
    frame(T0 + 4, [disk('7:0', [cls('Read', 10, 40_960), cls('Write', 0)], 0)]),
    frame(T0 + 5, [disk('7:0', [cls('Read', 10, 40_960), cls('Write', 5)], 2)]),
    // Outside the columns asked for.
    frame(T0 + 9, [disk('7:0', [cls('Read', 5, 5)], 1)]),
  ];
  const s = throughputSeries(frames, '7:0', 1, T0, T0 + 6);
  assert.equal(s.col0, T0);
  assert.deepEqual(list(s.iops), [150, 0, 30, null, 10, 15]);
  assert.deepEqual(list(s.mbps), [2.4096, 0, null, null, 0.04096, null]);
  assert.deepEqual(list(s.queue), [4, 0, null, null, 0, 2]);
  assert.deepEqual(
    list(s.oldest),
    [4e-6, 0, null, null, 0, 2e-6],
    'oldest in flight, seconds: none in flight is 0, no `inflight` is no data',
  );
  assert.equal(throughputAt(s, 'iops', T0), 150);
  assert.ok(Number.isNaN(throughputAt(s, 'iops', T0 + 6)), 'outside the series');
});

test('coarse columns: rates over the seconds recorded, the worst queue depth', () => {
  const step = 10;
  const c0 = Math.floor(T0 / step);
  const frames = [
    // Column c0: two 10 s frames would not share a column; here 1 s frames in a 10 s column (3 of 10 s recorded).
    frame(c0 * step, [disk('7:0', [cls('Read', 30, 3e6)], 3, 7.5e9)]),
    frame(c0 * step + 1, [disk('7:0', [cls('Read', 30, 3e6)], 8, 2e6)]),
    frame(c0 * step + 2, []),
    // Column c0 + 1: one coarse frame (the merge kept the worst second's in-flight count).
    frame((c0 + 1) * step, [disk('7:0', [cls('Write', 500, 20e6)], 16, 3e9)], step),
  ];
  const s = throughputSeries(frames, '7:0', step, c0, c0 + 3);
  assert.deepEqual(list(s.iops), [20, 50, null]);
  assert.deepEqual(list(s.mbps), [2, 2, null]);
  assert.deepEqual(list(s.queue), [8, 16, null]);
  // The oldest age is the column's worst, whichever second had it (not the deepest queue's).
  assert.deepEqual(list(s.oldest), [7.5, 3, null]);
});

test('formatRate: no data is a dash, not 0', () => {
  assert.equal(formatRate(NaN), '–');
  assert.equal(formatRate(0), '0');
  assert.equal(formatRate(2.4096), '2.41');
  assert.equal(formatRate(12_345), '12.3k');
  assert.equal(formatThroughput('oldest', 12.34), '12.3 s', 'an age is written as a latency');
  assert.equal(formatThroughput('oldest', NaN), '–');
  assert.equal(formatThroughput('queue', 2), '2');
});

test('waiting bios beside in flight (protocol 4): the worst frame of a column, the queue frozen in any; 0 before 4', () => {
  const waiting = (ts: number, n: number, waitNs: number, frozen: boolean): Frame =>
    frame(ts, [
      {
        dev: '7:0',
        cls: [],
        inflight: { n: 1, oldest_ns: 1000, ios: [], waiting: n, oldest_wait_ns: waitNs, ...(frozen ? { frozen: true as const } : {}) },
      },
    ]);
  const frames = [
    waiting(T0, 28, 3e9, true),
    waiting(T0 + 1, 30, 4e9, false),
    frame(T0 + 2, [disk('7:0', [cls('Read', 3)], 2)]), // an agent before 4: nothing waits that it says
    frame(T0 + 3, [disk('7:0', [cls('Read', 3)])]), // before 2: no in-flight data at all
  ];
  const s = throughputSeries(frames, '7:0', 1, T0, T0 + 4);
  assert.deepEqual(list(s.waiting), [28, 30, 0, null]);
  assert.deepEqual(list(s.oldestWait), [3, 4, 0, null]);
  assert.deepEqual(Array.from(s.frozen), [1, 0, 0, 0]);
  assert.deepEqual(list(s.queue), [1, 1, 2, null], 'waiting bios are not in flight');
  assert.deepEqual(waitingAt(s, T0), { count: 28, oldestS: 3, frozen: true });
  assert.equal(waitingAt(s, T0 + 2), undefined, 'none waiting, not frozen');
  assert.equal(waitingAt(s, T0 + 9), undefined, 'outside');
  // A 10 s column keeps the worst second's count and age, frozen if any second was.
  const coarse = throughputSeries(frames.slice(0, 3), '7:0', 10, T0 / 10, T0 / 10 + 1);
  assert.deepEqual(waitingAt(coarse, T0 / 10), { count: 30, oldestS: 4, frozen: true });
});

test('a strip’s running column totals follow a live window as it moves on, equal to the window summed afresh; another array is refused', () => {
  const step = 5;
  // A live window: per-second frames, the oldest dropped as it moves (its first column partly, then whole).
  const all = Array.from({ length: 80 }, (_, i) =>
    frame(
      T0 + i,
      i % 7 === 3 ? [disk('8:0', [cls('Read', 9, 4096)], 1)] : [disk('7:0', [cls('Read', 10 + i, 4096 * (i + 1))], i % 4, 1000 * i)],
    ),
  );
  const series = (s: ReturnType<typeof throughputSeries>) => [s.iops, s.mbps, s.queue, s.oldest, s.waiting, s.oldestWait].map(list);
  const running = new ThroughputColumns('7:0', step);
  const window: Frame[] = [];
  for (let end = 1; end <= all.length; end++) {
    window.push(all[end - 1] as Frame);
    // Drop the frames more than 40 s old: from T0 + 41 on, a column is left part-dropped at times.
    while ((window[0] as Frame).ts < T0 + end - 40) window.shift();
    assert.ok(running.catchUp(window), `second ${end}: the same window moved on`);
    const c0 = Math.floor((window[0] as Frame).ts / step);
    const c1 = Math.ceil((T0 + end) / step);
    assert.deepEqual(series(running.series(c0, c1)), series(throughputSeries(window, '7:0', step, c0, c1)), `second ${end}`);
  }
  // A second inserted in the middle (a gap filled), or another window's frames: not this one's, made anew.
  const filled = [...window.slice(0, 5), frame(T0 + 100, []), ...window.slice(5)];
  assert.equal(running.catchUp(filled), false);
  assert.equal(running.catchUp(all.slice(0, 10)), false);
});

test('lane captions: the scale’s top where a column in view has the value, "no data" where none has (never "≤ 0")', () => {
  assert.equal(laneCaption('mbps', 12.34, true, false), `MB/s ≤ ${formatThroughput('mbps', 12.34)}`);
  assert.equal(laneCaption('iops', 0, true, false), 'IOPS ≤ 0', 'an idle disk measured: a zero that was counted');
  // A fleet row (latency histograms only) or an agent before protocol 3: the lane's top is 0 for want of data.
  assert.equal(laneCaption('mbps', 0, false, false), 'MB/s: no data');
  assert.equal(laneCaption('queue', 0, false, false), 'in flight: no data');
  assert.equal(laneCaption('oldest', 0, false, false), 'oldest in flight: no data');
  assert.equal(laneCaption('queue', 7, true, true), `in flight + waiting ≤ ${formatThroughput('queue', 7)}`);
  assert.equal(laneCaption('oldest', 2.5, true, true), `oldest in flight / waiting ≤ ${formatThroughput('oldest', 2.5)}`);
  assert.equal(laneCaption('iops', 5, true, true), `IOPS ≤ ${formatThroughput('iops', 5)}`, 'only in flight and its age draw waiting bios');
});

test('lane facts: the top stacks waiting bios on in flight and takes the older of the two ages; no data is neither a value nor a zero', () => {
  // Columns: no data (an agent before protocol 2), 3 in flight + 4 waiting, 5 in flight alone, idle.
  const nan = NaN;
  const s = {
    dev: '7:0',
    step: 1,
    col0: 0,
    iops: new Float64Array([nan, 10, 20, 0]),
    mbps: new Float64Array([nan, nan, nan, nan]),
    queue: new Float64Array([nan, 3, 5, 0]),
    oldest: new Float64Array([nan, 0.5, 0.2, 0]),
    waiting: new Float64Array([nan, 4, 0, 0]),
    oldestWait: new Float64Array([nan, 0.9, 0, 0]),
    frozen: new Uint8Array(4),
  };
  assert.deepEqual(laneFacts(s, 'queue'), { top: 7, inView: true, waiting: true }, '3 + 4 stacked is taller than 5');
  assert.deepEqual(laneFacts(s, 'oldest'), { top: 0.9, inView: true, waiting: true }, 'the oldest wait stands behind the 0.5 s age');
  assert.deepEqual(laneFacts(s, 'iops'), { top: 20, inView: true, waiting: false }, 'IOPS draws no waiting bios');
  assert.deepEqual(laneFacts(s, 'mbps'), { top: 0, inView: false, waiting: false }, 'no byte counts: no data, not a measured 0');
  const idle = { ...s, iops: new Float64Array([0, 0]), queue: new Float64Array([0, 0]), waiting: new Float64Array([0, 0]) };
  assert.deepEqual(laneFacts(idle, 'queue'), { top: 0, inView: true, waiting: false }, 'an idle disk: a counted zero');
});

test('a live lane keeps its top while its largest value fits under it and reaches its upper quarter', () => {
  assert.equal(LANE_TOP_HOLD, 0.75);
  assert.equal(laneTopHeld(12_000, 12_000), true, 'the same largest value');
  assert.equal(laneTopHeld(12_000, 11_400), true, "the newest column's one-second swing settled: the top stays");
  assert.equal(laneTopHeld(12_000, 9_000), true, 'down to three quarters of it');
  assert.equal(laneTopHeld(12_000, 8_999), false, 'below: scaled again, the bars would no longer fill the lane');
  assert.equal(laneTopHeld(12_000, 12_001), false, 'above: a bar would pass the top, and the caption would understate it');
  assert.equal(laneTopHeld(0, 0), true, 'an idle lane stays idle');
  assert.equal(laneTopHeld(6, 0), false, 'a lane gone idle (or without data) is scaled again');
});

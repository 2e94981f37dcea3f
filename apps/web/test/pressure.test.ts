// The host's I/O pressure per heat map column (model/pressure.ts): shares of the step from
// `psi` (some_us / (step × 1e6)), coarse columns from merged frames and from 1 s frames alike
// (over the seconds that have it), no data (NaN) where no frame carries it, never 0; the
// strip's scale and bar heights (drawn by render/pressure.ts) and the tooltip's words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coarsenFrames, type Frame } from '@blkheat/shared-types';
import {
  hasPressure,
  PRESSURE_SCALE_FLOOR,
  pressureAt,
  pressureBarHeight,
  pressureScale,
  pressureSeries,
  pressureText,
} from '../src/model/pressure.ts';

const T0 = 1_700_000_040; // a multiple of 10 and 60
const psiFrame = (ts: number, some?: number, full?: number, step = 1): Frame => ({
  ts,
  step,
  disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 1, d: [40, 1], q: [] }] }],
  ...(some !== undefined ? { psi: { some_us: some, full_us: full ?? 0 } } : {}),
});
const list = (a: Float64Array): (number | null)[] => Array.from(a, (v) => (Number.isNaN(v) ? null : v));

test('per-second columns: the share of the second, no data where a frame has no psi or there is no frame', () => {
  const frames = [
    psiFrame(T0, 420_000, 100_000),
    psiFrame(T0 + 1), // an agent before protocol 4, or its first second
    // T0 + 2: no frame (not recorded)
    psiFrame(T0 + 3, 0, 0), // recorded, no stall: 0, not no data
    { ts: T0 + 4, step: 1, disks: [], psi: { some_us: 1_000_000, full_us: 250_000 } }, // idle disks, stalled host
    psiFrame(T0 + 9, 5, 5), // outside the columns asked for
  ];
  const s = pressureSeries(frames, 1, T0, T0 + 5);
  assert.equal(s.col0, T0);
  assert.deepEqual(list(s.some), [0.42, null, null, 0, 1]);
  assert.deepEqual(list(s.full), [0.1, null, null, 0, 0.25]);
  assert.deepEqual(pressureAt(s, T0), { some: 0.42, full: 0.1 });
  assert.equal(pressureAt(s, T0 + 1), undefined);
  assert.equal(pressureAt(s, T0 + 7), undefined, 'outside the series');
  assert.equal(pressureText({ some: 0.42, full: 0.1 }), 'some 42.0%, full 10.0%');
  assert.equal(pressureText({ some: 0.0712, full: 0 }), 'some 7.12%, full 0%');
});

test('coarse columns: a merged frame is its sum over step × 1e6; 1 s frames of a column share its seconds', () => {
  const seconds: Frame[] = [];
  for (let i = 0; i < 60; i++) seconds.push(psiFrame(T0 + i, i < 30 ? 600_000 : 0, i < 30 ? 200_000 : 0));
  const tens = coarsenFrames(seconds, 10);
  assert.deepEqual(
    tens.map((f) => f.psi),
    [
      { some_us: 6e6, full_us: 2e6 },
      { some_us: 6e6, full_us: 2e6 },
      { some_us: 6e6, full_us: 2e6 },
      { some_us: 0, full_us: 0 },
      { some_us: 0, full_us: 0 },
      { some_us: 0, full_us: 0 },
    ],
  );
  const byTen = pressureSeries(tens, 10, T0 / 10, T0 / 10 + 6);
  assert.deepEqual(list(byTen.some), [0.6, 0.6, 0.6, 0, 0, 0]);
  assert.deepEqual(list(byTen.full), [0.2, 0.2, 0.2, 0, 0, 0]);
  // The same seconds at a 60 s step, from the merged minute or from the 1 s frames: the same share.
  const minute = pressureSeries(coarsenFrames(seconds, 60), 60, T0 / 60, T0 / 60 + 1);
  const fromSeconds = pressureSeries(seconds, 60, T0 / 60, T0 / 60 + 1);
  assert.deepEqual(list(minute.some), [0.3]);
  assert.deepEqual(list(fromSeconds.some), [0.3]);
  assert.ok(Math.abs((minute.full[0] as number) - 0.1) < 1e-12);
  // A live column still filling: its 4 seconds so far, 3 of them with psi, over those 3 seconds.
  const filling = [psiFrame(T0 + 60, 900_000), psiFrame(T0 + 61), psiFrame(T0 + 62, 300_000), psiFrame(T0 + 63, 0)];
  const live = pressureSeries(filling, 10, T0 / 10 + 6, T0 / 10 + 7);
  assert.ok(Math.abs((live.some[0] as number) - 0.4) < 1e-12, `${live.some[0]}`);
  // A coarse window's frame and the live 1 s frames after it (the window grows with them).
  const mixed = pressureSeries([...tens, ...filling], 10, T0 / 10, T0 / 10 + 7);
  assert.deepEqual(
    list(mixed.some).map((v) => (v === null ? v : Math.round(v * 1e9) / 1e9)),
    [0.6, 0.6, 0.6, 0, 0, 0, 0.4],
  );
});

test('whether a window has pressure at all: the strip takes no space without it', () => {
  assert.equal(hasPressure([]), false);
  assert.equal(hasPressure([psiFrame(T0), psiFrame(T0 + 1)]), false, 'older agents, snapshots before 4, the fleet view');
  assert.equal(hasPressure([psiFrame(T0, 0, 0), psiFrame(T0 + 1)]), true, 'an old frame with it is enough');
  assert.equal(hasPressure([psiFrame(T0), psiFrame(T0 + 1, 0, 0)]), true);
});

test('the strip scale: the largest visible share of some, at least the floor, at most 1; bars inside it', () => {
  const quiet = pressureSeries([psiFrame(T0, 100), psiFrame(T0 + 1, 200, 100)], 1, T0, T0 + 2);
  assert.equal(pressureScale(quiet), PRESSURE_SCALE_FLOOR, 'a hundredth of a percent does not fill the strip');
  const busy = pressureSeries([psiFrame(T0, 420_000, 100_000), psiFrame(T0 + 1, 210_000)], 1, T0, T0 + 2);
  assert.equal(pressureScale(busy), 0.42);
  assert.equal(pressureScale(pressureSeries([], 1, T0, T0 + 3)), PRESSURE_SCALE_FLOOR, 'no data');
  const h = 28; // the strip's height; 2 px stay free above the bars
  assert.equal(pressureBarHeight(0.42, 0.42, h), 26, 'the top share fills the strip');
  assert.equal(pressureBarHeight(0.21, 0.42, h), 13);
  assert.equal(pressureBarHeight(0.1, 0.42, h), (0.1 / 0.42) * 26, 'full, within some');
  assert.equal(pressureBarHeight(0, 0.42, h), 0, 'no stall: no bar');
  assert.equal(pressureBarHeight(NaN, 0.42, h), 0);
  assert.equal(pressureBarHeight(0.0001, 0.42, h), 1, 'any stall shows, one pixel at least');
});

test('a cgroup’s series reads its entry of cg_psi: no data where the frame has none for it, the host’s untouched', () => {
  const frames: Frame[] = [
    { ...psiFrame(T0, 100_000), cg_psi: [{ g: '/backup', some_us: 900_000, full_us: 800_000 }] },
    { ...psiFrame(T0 + 1, 100_000), cg_psi: [{ g: '/db', some_us: 5, full_us: 0 }] },
    psiFrame(T0 + 2, 100_000),
  ];
  assert.equal(hasPressure(frames, '/backup'), true);
  assert.equal(hasPressure(frames, '/web'), false);
  const s = pressureSeries(frames, 1, T0, T0 + 3, '/backup');
  assert.deepEqual(list(s.some), [0.9, null, null]);
  assert.deepEqual(list(s.full), [0.8, null, null]);
  assert.deepEqual(list(pressureSeries(frames, 1, T0, T0 + 3).some), [0.1, 0.1, 0.1], 'the host’s');
  // A merged 10 s frame: the cgroup's stall over the frame's 10 s, as the host's is; from the 1 s
  // frames of a coarse column, over the seconds that had it.
  assert.deepEqual(list(pressureSeries(coarsenFrames(frames, 10), 10, T0 / 10, T0 / 10 + 1, '/backup').some), [0.09]);
  assert.deepEqual(list(pressureSeries(frames, 10, T0 / 10, T0 / 10 + 1, '/backup').some), [0.9]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coarsenFrames, filterFrame, MAX_FRAMES_PER_ANSWER, MAX_SPAN_SECONDS, type Frame } from '@blkheat/shared-types';
import { backfillCutter, planRange, rangeCutter } from '../src/history/range-read.js';
import { HistoryStore } from '../src/history/store.js';
import { randomFrames } from './history-fixtures.js';

const TIERS = [
  { step: 1, retention: 3600 },
  { step: 10, retention: 86400 },
  { step: 60, retention: 86400 },
];
const NOW = 1_750_000_000;

test('planRange: the finest tier that covers the start and fits the frame limit', () => {
  // Last 10 minutes: 1 s.
  assert.deepEqual(planRange({ from: NOW - 600, to: NOW }, TIERS, NOW, 3600), { tierStep: 1, step: 1, from: NOW - 600, to: NOW });
  // The whole last hour at 1 s is exactly 3600 frames.
  assert.equal(planRange({ from: NOW - 3600, to: NOW }, TIERS, NOW, 3600).step, 1);
  // Older than the 1 s tier keeps: 10 s, aligned outwards.
  const p = planRange({ from: NOW - 7203, to: NOW - 3601 }, TIERS, NOW, 3600);
  assert.deepEqual(p, { tierStep: 10, step: 10, from: NOW - 7210, to: NOW - 3600 });
  // A day: 10 s would be 8640 frames; the 10 s tier merged to 30 s fits (2880).
  const day = planRange({ from: NOW - 86400, to: NOW }, TIERS, NOW, 3600);
  assert.equal(day.tierStep, 10);
  assert.ok((day.to - day.from) / day.step <= 3600 && day.step % 10 === 0, JSON.stringify(day));
  // A requested step is honoured when a tier can give it, coarser otherwise.
  assert.equal(planRange({ from: NOW - 600, to: NOW, step: 60 }, TIERS, NOW, 3600).tierStep, 60);
  assert.equal(planRange({ from: NOW - 600, to: NOW, step: 5 }, TIERS, NOW, 3600).step, 5);
  assert.equal(planRange({ from: NOW - 600, to: NOW, step: 5 }, TIERS, NOW, 3600).tierStep, 1);
  // Beyond every tier's retention: the coarsest.
  assert.equal(planRange({ from: NOW - 30 * 86400, to: NOW }, TIERS, NOW, 3600).tierStep, 60);
  // Never more than the limit, whatever is asked.
  for (const span of [1, 59, 3601, 86400, MAX_SPAN_SECONDS]) {
    for (const step of [undefined, 1, 7, 60, 3600]) {
      const q = planRange({ from: NOW - span, to: NOW, step }, TIERS, NOW, MAX_FRAMES_PER_ANSWER);
      assert.ok((q.to - q.from) / q.step <= MAX_FRAMES_PER_ANSWER, `${span}/${step}: ${JSON.stringify(q)}`);
      assert.equal(q.from % q.step, 0);
      assert.equal(q.to % q.step, 0);
      assert.equal(q.step % q.tierStep, 0);
      assert.ok(q.from <= NOW - span && q.to >= NOW);
    }
  }
});

function withStore(t: { after(fn: () => void): void }, frames: readonly Frame[]): HistoryStore {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-query-'));
  const last = frames[frames.length - 1]?.ts ?? NOW;
  const store = HistoryStore.open({ dir, historySeconds: 86400, maxBytes: 1 << 30, now: () => last + 1 });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const f of frames) store.append(f);
  return store;
}

test('range answers: spliced when stored as is, merged and filtered otherwise, exact either way', (t) => {
  const start = NOW - (NOW % 60) - 1800;
  const frames = randomFrames(11, start, 1800);
  const store = withStore(t, frames);
  const parse = (a: { frames: string[] }): Frame[] => a.frames.map((j) => JSON.parse(j) as Frame);

  const plain = rangeCutter(store, { tierStep: 1, step: 1, from: start + 100, to: start + 200 }, {}, 1 << 30).finish();
  assert.deepEqual(parse(plain), frames.slice(100, 200));
  assert.equal(plain.cut, false);

  const filter = { disks: ['7:0', '8:0'], classes: ['Read', 'Flush'] };
  const merged = rangeCutter(store, { tierStep: 1, step: 5, from: start, to: start + 600 }, filter, 1 << 30).finish();
  const expected = coarsenFrames(frames.slice(0, 600), 5).map((f) => filterFrame(f, filter));
  assert.deepEqual(parse(merged), expected);

  const fromTier = rangeCutter(store, { tierStep: 10, step: 30, from: start, to: start + 1800 }, {}, 1 << 30).finish();
  assert.deepEqual(parse(fromTier), coarsenFrames(frames, 30), '30 s from the 10 s tier equals 30 s from seconds');
});

test('range answers and backfill pages are cut at the byte limit and say where they stopped', (t) => {
  const start = NOW - (NOW % 60) - 600;
  const frames = randomFrames(12, start, 600, { idle: 0 });
  const store = withStore(t, frames);
  const a = rangeCutter(store, { tierStep: 1, step: 1, from: start, to: start + 600 }, {}, 20_000).finish();
  assert.equal(a.cut, true);
  assert.ok(a.frames.length > 0 && a.frames.length < 600);
  assert.equal(a.to, start + a.frames.length, '`to` is the first second left out');
  assert.ok(a.frames.join(',').length <= 20_000);

  const p = backfillCutter(store, start, start + 600, {}, 100, 1 << 30).finish();
  assert.equal(p.frames.length, 100);
  assert.equal(p.to, start + 100);
  const q = backfillCutter(store, start + 590, start + 600, {}, 100, 1 << 30).finish();
  assert.equal(q.to, start + 600);
  assert.equal(q.cut, false);
});

test('an answer pulled a piece at a time, its frames taken as they come, is the answer read at once', (t) => {
  const start = NOW - (NOW % 60) - 600;
  const frames = randomFrames(13, start, 600, { idle: 0 });
  const store = withStore(t, frames);
  const plan = { tierStep: 1, step: 1, from: start, to: start + 600 };
  for (const maxBytes of [1 << 30, 60_000]) {
    const whole = rangeCutter(store, plan, {}, maxBytes).finish();
    const sliced = rangeCutter(store, plan, {}, maxBytes);
    const taken: string[] = [];
    let pulls = 0;
    let read = 0;
    let answer: ReturnType<typeof sliced.pull>;
    do {
      // A past deadline: each pull reads one frame; 4 KB pieces: the byte bound works too.
      answer = sliced.pull(pulls % 2 === 0 ? 0 : Infinity, 4096);
      taken.push(...sliced.takeFrames());
      read += sliced.takeBytesRead();
      pulls++;
    } while (!answer);
    assert.deepEqual(taken, whole.frames, `maxBytes ${maxBytes}: the same frames, in order`);
    assert.deepEqual({ ...answer, frames: [] }, { ...whole, frames: [] }, `maxBytes ${maxBytes}: the same bounds and cut`);
    assert.ok(pulls > 10, `maxBytes ${maxBytes}: read in ${pulls} pieces`);
    assert.ok(read >= whole.frames.join('').length, `maxBytes ${maxBytes}: every byte read is reported`);
  }
});

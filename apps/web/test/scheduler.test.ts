// The frame scheduler (render/scheduler.ts) on a hand-driven clock: each dirty view draws once
// per frame in registration order however often it was invalidated; a frame starts no view
// after its budget and the rest draw first in the next frames, each once, so none starves; a view
// that throws does not stop the others; a view that invalidates itself draws again next frame.
// What each view drew is kept per kind, the latest replacing the one before, until it unregisters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DrawnKind, FRAME_BUDGET_MS, type FrameClock, FrameScheduler } from '../src/render/scheduler.ts';

/** A clock whose frames run when the test says, and whose time moves only when a view draws. */
class HandClock implements FrameClock {
  t = 0;
  private pending: (() => void) | undefined;
  requests = 0;
  requestFrame(cb: () => void): number {
    assert.equal(this.pending, undefined, 'one frame requested at a time');
    this.pending = cb;
    return ++this.requests;
  }
  now(): number {
    return this.t;
  }
  /** Runs the requested frame; false when none was requested. */
  frame(): boolean {
    const cb = this.pending;
    this.pending = undefined;
    cb?.();
    return cb !== undefined;
  }
}

/** A scheduler with views a..e, each taking `costMs` of the hand clock to draw; `log` lists draws per frame. */
function setUp(costMs: number, budget = FRAME_BUDGET_MS) {
  const clock = new HandClock();
  const s = new FrameScheduler(clock, budget);
  const frames: string[][] = [];
  let current: string[] = [];
  const view = (key: string) => () => {
    current.push(key);
    clock.t += costMs;
  };
  for (const key of ['a', 'b', 'c', 'd', 'e']) s.register(key, view(key));
  const frame = (): boolean => {
    current = [];
    const ran = clock.frame();
    if (ran) frames.push(current);
    return ran;
  };
  return { clock, s, frames, frame };
}

test('each dirty view draws once per frame, in registration order, however often invalidated', () => {
  // Each view well within the budget: all five start in the first frame.
  const { clock, s, frames, frame } = setUp(FRAME_BUDGET_MS / 8);
  assert.ok(frame());
  assert.deepEqual(frames, [['a', 'b', 'c', 'd', 'e']], 'registering draws every view once');
  assert.equal(s.busy, false);
  for (let i = 0; i < 10; i++) {
    s.invalidate('d');
    s.invalidate('b');
  }
  s.invalidate('unknown');
  assert.equal(s.busy, true);
  assert.ok(frame());
  assert.deepEqual(frames[1], ['b', 'd']);
  assert.equal(frame(), false, 'nothing dirty: no frame requested');
  assert.equal(clock.requests, 2);
});

test('over budget: the views not started draw in the next frames, in order, each once', () => {
  // 10 ms per view, budget 24 ms: views start at 0, 10 and 20 ms; the fourth would start at 30.
  const { s, frames, frame } = setUp(10, 24);
  while (frame());
  assert.deepEqual(frames, [
    ['a', 'b', 'c'],
    ['d', 'e'],
  ]);
  assert.equal(s.busy, false);
  // A view dirtied again while it waits for its frame still draws once, with what is current
  // then; the views left over go first in the next frame, before those drawn last frame.
  frames.length = 0;
  s.invalidateMatching();
  assert.ok(frame());
  s.invalidate('e');
  s.invalidate('a');
  while (frame());
  assert.deepEqual(frames, [
    ['a', 'b', 'c'],
    ['d', 'e', 'a'],
  ]);
  assert.deepEqual(s.timingsOf('a'), [10, 10, 10]);
  assert.deepEqual(
    ['a', 'b', 'e', 'z'].map((k) => s.drawsOf(k)),
    [3, 2, 2, 0],
    'draws counted per view since start (a benchmark takes the newest timings by them)',
  );
});

test('a view slower than the budget still draws, one per frame, and the rest follow', () => {
  const { frames, frame } = setUp(100, 24);
  while (frame());
  assert.deepEqual(frames, [['a'], ['b'], ['c'], ['d'], ['e']]);
});

test('a view that throws does not stop the others; one that invalidates itself draws again next frame', (t) => {
  const clock = new HandClock();
  const s = new FrameScheduler(clock);
  const drawn: string[] = [];
  t.mock.method(console, 'error', () => undefined);
  let again = 2;
  s.register('broken', () => {
    drawn.push('broken');
    throw new Error('boom');
  });
  s.register('self', () => {
    drawn.push('self');
    if (again-- > 0) s.invalidate('self');
  });
  s.register('last', () => drawn.push('last'));
  clock.frame();
  assert.deepEqual(drawn, ['broken', 'self', 'last']);
  clock.frame();
  clock.frame();
  assert.deepEqual(drawn, ['broken', 'self', 'last', 'self', 'self']);
  assert.equal(clock.frame(), false);
  assert.equal(s.busy, false);
});

test('an unregistered view is not drawn, even when it was dirty', () => {
  const clock = new HandClock();
  const s = new FrameScheduler(clock);
  const drawn: string[] = [];
  s.register('kept', () => drawn.push('kept'));
  const off = s.register('gone', () => drawn.push('gone'));
  off();
  clock.frame();
  assert.deepEqual(drawn, ['kept']);
  assert.equal(s.busy, false);
});

test('a view dirtied again every frame does not keep the ones after it from drawing', () => {
  // 10 ms per view, budget 15 ms: two views per frame. 'a' is dirtied again before every frame
  // (a hover); b..e still draw, each within a few frames, and 'a' keeps drawing too.
  const { s, frames, frame } = setUp(10, 15);
  while (frame());
  frames.length = 0;
  s.invalidateMatching();
  for (let i = 0; i < 4; i++) {
    frame();
    s.invalidate('a');
  }
  while (frame());
  assert.deepEqual(frames, [['a', 'b'], ['c', 'd'], ['e', 'a'], ['a'], ['a']]);
});

test('what a view drew is kept per kind, the latest replacing the one before, and dropped when it unregisters', () => {
  const clock = new HandClock();
  const s = new FrameScheduler(clock);
  const SHAPE = new DrawnKind<{ n: number }>('shape');
  const OTHER = new DrawnKind<string>('other');
  const first = { canvas: 1 };
  const second = { canvas: 2 };
  let n = 0;
  const off = s.register('view', (record) => {
    n++;
    record(SHAPE, n === 1 ? first : second, { n });
  });
  s.register('quiet', () => undefined);
  assert.equal(s.drawn('view', SHAPE), undefined, 'nothing before its first draw');
  clock.frame();
  assert.deepEqual(s.drawn('view', SHAPE), { canvas: first, value: { n: 1 } });
  assert.equal(s.drawn('view', OTHER), undefined, 'another kind: not drawn');
  assert.equal(s.drawn('quiet', SHAPE), undefined, 'another view: not drawn');
  s.invalidate('view');
  clock.frame();
  assert.deepEqual(s.drawn('view', SHAPE), { canvas: second, value: { n: 2 } }, 'the latest drawing, on its canvas');
  off();
  assert.equal(s.drawn('view', SHAPE), undefined, 'dropped with the view: no canvas is held after it unmounts');
  s.register('view', () => undefined);
  clock.frame();
  assert.equal(s.drawn('view', SHAPE), undefined, 'a view registered again under the key starts with nothing drawn');
});

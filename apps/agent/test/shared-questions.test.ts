// Identical questions under way share one answer (apps/agent/src/fleet/shared-questions.ts):
// the fleet server's ranked table asked by many pages following live at the same scrape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_OPEN_QUESTIONS, SharedQuestions } from '../src/fleet/shared-questions.js';

/** An asker whose answers come when the test says, counting the questions it was asked. */
function heldAsker(): {
  asked: string[];
  answer(i: number, value: string): void;
  fail(i: number, e: Error): void;
  ask(q: string): Promise<string>;
} {
  const asked: string[] = [];
  const pending: { resolve(v: string): void; reject(e: Error): void }[] = [];
  return {
    asked,
    ask: (q) =>
      new Promise<string>((resolve, reject) => {
        asked.push(q);
        pending.push({ resolve, reject });
      }),
    answer: (i, value) => pending[i]?.resolve(value),
    fail: (i, e) => pending[i]?.reject(e),
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('identical questions under way are asked once and all get its answer; the joiners say they asked nothing', async () => {
  const a = heldAsker();
  const shared = new SharedQuestions(a.ask);
  const first = shared.answer('1 h');
  const second = shared.answer('1 h');
  const other = shared.answer('30 min');
  await tick();
  assert.deepEqual(a.asked, ['1 h', '30 min'], 'one question per range');
  assert.equal(shared.size, 2);
  a.answer(0, 'table of 1 h');
  a.answer(1, 'table of 30 min');
  assert.deepEqual(await first, { answer: 'table of 1 h', joined: false });
  assert.deepEqual(await second, { answer: 'table of 1 h', joined: true });
  assert.deepEqual(await other, { answer: 'table of 30 min', joined: false });
  assert.equal(shared.size, 0, 'nothing kept once answered');

  // Answered, the same question is asked afresh: its newest scrapes may have landed since.
  const again = shared.answer('1 h');
  await tick();
  assert.deepEqual(a.asked, ['1 h', '30 min', '1 h']);
  a.answer(2, 'newer table of 1 h');
  assert.deepEqual(await again, { answer: 'newer table of 1 h', joined: false });
});

test('a failure reaches every caller of the question, and the next one asks again', async () => {
  const a = heldAsker();
  const shared = new SharedQuestions(a.ask);
  const first = shared.answer('1 h');
  const second = shared.answer('1 h');
  await tick();
  a.fail(0, new Error('Prometheus is unreachable'));
  await assert.rejects(first, /unreachable/);
  await assert.rejects(second, /unreachable/);
  assert.equal(shared.size, 0);
  const retry = shared.answer('1 h');
  await tick();
  assert.equal(a.asked.length, 2, 'asked again after the failure');
  a.answer(1, 'table');
  assert.deepEqual(await retry, { answer: 'table', joined: false });
});

test('past MAX_OPEN_QUESTIONS distinct questions under way, a new one is asked on its own, not refused', async () => {
  const a = heldAsker();
  const shared = new SharedQuestions(a.ask);
  const open = Array.from({ length: MAX_OPEN_QUESTIONS }, (_, i) => shared.answer(`q${i}`));
  const extra = shared.answer('extra');
  const extraAgain = shared.answer('extra');
  await tick();
  assert.equal(shared.size, MAX_OPEN_QUESTIONS, 'the open questions are bounded');
  assert.equal(a.asked.length, MAX_OPEN_QUESTIONS + 2, 'the question past the bound is asked by each caller');
  for (let i = 0; i < a.asked.length; i++) a.answer(i, `answer ${i}`);
  assert.equal((await extra).answer, `answer ${MAX_OPEN_QUESTIONS}`);
  assert.equal((await extraAgain).joined, false);
  await Promise.all(open);
  assert.equal(shared.size, 0);
});

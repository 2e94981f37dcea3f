// Long computations a task at a time (pipeline/steps.ts): the result is the steps' own, other
// tasks run between the slices, and a step that throws rejects with its error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runStepsAcrossTasks, stepFor } from '../src/pipeline/steps.ts';

/** `n` steps of about `ms` each (busy), then `n`. */
function* busySteps(n: number, ms: number): Generator<void, number> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    while (performance.now() - t0 < ms);
    yield;
  }
  return n;
}

test('stepFor runs at least one step, and stops after about its time', () => {
  const steps = busySteps(100, 1);
  const t0 = performance.now();
  const r = stepFor(steps, 10);
  const took = performance.now() - t0;
  assert.equal(r.done, false);
  assert.ok(took >= 10 && took < 40, `took ${took.toFixed(1)} ms`);
  assert.equal(stepFor(busySteps(1, 0), 0).done, false, 'one step even with no time');
});

test('runStepsAcrossTasks gives the result, lets other tasks run between slices, and rejects with a step’s error', async () => {
  let between = 0;
  const timer = setInterval(() => between++, 0);
  try {
    assert.equal(await runStepsAcrossTasks(busySteps(40, 1), 5), 40);
  } finally {
    clearInterval(timer);
  }
  assert.ok(between >= 3, `other tasks ran ${between} times between the slices`);
  function* failing(): Generator<void, number> {
    yield;
    throw new Error('bad step');
  }
  await assert.rejects(runStepsAcrossTasks(failing(), 5), /bad step/);
});

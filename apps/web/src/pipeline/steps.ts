/**
 * Long computations a task at a time. A computation written as steps (a generator that yields
 * between them: model/samples.ts matchSamplesInSteps, model/summary.ts) runs for a few ms of a
 * task, then lets the page draw and take input, and goes on in the next. On this project's
 * 2-CPU machines a garbage collection can land in any task and take 100 ms of it: the page's
 * own share of a task must stay small for the task to stay under the 200 ms the tests allow.
 */

/** Runs `steps` for about `ms` of this task (at least one step); where they stand after. */
export function stepFor<R>(steps: Generator<void, R>, ms: number): IteratorResult<void, R> {
  const t0 = performance.now();
  let r = steps.next();
  while (!r.done && performance.now() - t0 < ms) r = steps.next();
  return r;
}

/** Runs `steps` a task at a time, about `ms` of each, starting in the next task; their result. */
export function runStepsAcrossTasks<R>(steps: Generator<void, R>, ms: number): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const next = (): void => {
      try {
        const r = stepFor(steps, ms);
        if (r.done) resolve(r.value);
        else setTimeout(next, 0);
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    };
    setTimeout(next, 0);
  });
}

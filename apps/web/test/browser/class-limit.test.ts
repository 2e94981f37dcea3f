// A snapshot at the documented class limit (SNAPSHOT_LIMITS.classesPerDisk classes on one disk,
// docs/snapshot.md) imports in headless chromium and the page stays usable: no main-thread task
// over 200 ms from the import to the page being idle, idle within IMPORT_MS, a bounded number of
// canvases (the op class table lists the busiest ROWS_FIRST classes, one sparkline each, and says
// how many more there are), and then a click on a class filters the view and "show more" lists
// more, each without a long task; imported again, it lists ROWS_FIRST again; and the agent's other
// disks, live meanwhile, are not drawn beside the snapshot's. The cap is what this holds: a row and
// a canvas per class make tasks of 0.7 and 1.1 s, the page idle only after 3.6 s, and 4,106
// canvases. Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { SNAPSHOT_LIMITS } from '@blkheat/shared-types';
import { hook, type Hooked, idle, importSnapshot, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { ROWS_FIRST, ROWS_MORE } from '../../src/model/rowCap.ts';
import { jsonFile, openFakeAgent, skipWithoutDashboard, watchLongTasks } from '../fixtures/browser.ts';
import { manyClassesSource } from '../fixtures/manyClasses.ts';

const T0 = 1_700_000_000;
/** Seconds of frames: each names every class (~0.5 MiB a frame), 14 MiB in all. */
const SECONDS = 30;
/** No main-thread task longer than this, from the import on. */
const LONG_TASK_MS = 200;
/** From choosing the file to the page idle (reading and validating it in the worker included). */
const IMPORT_MS = 3000;
/** Canvases on the page: the heat map's, the panels' and the listed classes' sparklines, not one per class. */
const MAX_CANVASES = ROWS_FIRST + 30;

const CLASSES = SNAPSHOT_LIMITS.classesPerDisk;

/** The page's document, as `drawn` (run in the page) sees it. */
type Doc = {
  querySelectorAll(q: string): { length: number };
  querySelector(q: string): { getAttribute(a: string): string | null } | null;
};

/** What the page holds that grows with the classes (run in the page). */
function drawn(): { canvases: number; classRows: number; sparks: number; hidden: number } {
  const doc = (globalThis as unknown as { document: Doc }).document;
  return {
    canvases: doc.querySelectorAll('canvas').length,
    classRows: doc.querySelectorAll('[data-testid=class-breakdown] tbody tr').length,
    sparks: doc.querySelectorAll('[data-testid=class-breakdown] canvas').length,
    hidden: Number(doc.querySelector('[data-testid=class-breakdown] [data-testid=more-rows]')?.getAttribute('data-hidden') ?? 0),
  };
}

test(
  `class limit: a snapshot with ${CLASSES} classes on one disk imports and the page stays responsive`,
  { timeout: 180_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const snap = manyClassesSource(CLASSES).snapshot(T0, T0 + SECONDS, 'class limit');
    // The file reaches the limit in every frame (and so is valid at it, not over it).
    assert.equal(snap.frames.length, SECONDS);
    for (const f of snap.frames) assert.equal(f.disks[0]?.cls.length, CLASSES, `frame ${f.ts} names ${CLASSES} classes`);
    const file = jsonFile(t, 'class-limit.json', snap);
    const mib = statSync(file).size / 1048576;

    const { agent, session, page } = await openFakeAgent(t);
    await page.goto(agent.url);
    await waitLive(page, 20_000);
    await idle(page);

    // 1. The import, to the page idle.
    const longTasks = await watchLongTasks(page);
    const t0 = Date.now();
    await importSnapshot(page, file, 60_000);
    await idle(page, 60_000);
    const importMs = Date.now() - t0;
    const importTasks = await longTasks();
    const afterImport = await page.evaluate(drawn);
    t.diagnostic(
      `import of ${CLASSES} classes × ${SECONDS} s (${mib.toFixed(1)} MiB): idle after ${importMs} ms; long tasks [${importTasks.join(', ')}] ms; ` +
        `${afterImport.canvases} canvases, ${afterImport.classRows} class rows (${afterImport.hidden} more not listed)`,
    );
    const importWorst = Math.max(0, ...importTasks);
    assert.ok(importWorst <= LONG_TASK_MS, `no main-thread task over ${LONG_TASK_MS} ms after the import (worst ${importWorst} ms)`);
    assert.ok(importMs <= IMPORT_MS, `idle ${importMs} ms after the import (at most ${IMPORT_MS})`);
    assert.ok(afterImport.canvases <= MAX_CANVASES, `${afterImport.canvases} canvases (at most ${MAX_CANVASES})`);
    // The table lists the busiest ROWS_FIRST and counts the rest in one line.
    assert.deepEqual(
      { rows: afterImport.classRows, sparks: afterImport.sparks, hidden: afterImport.hidden },
      { rows: ROWS_FIRST, sparks: ROWS_FIRST, hidden: CLASSES - ROWS_FIRST },
      'ROWS_FIRST classes listed, one line for the rest',
    );
    let expected = 0;
    for (const f of snap.frames) for (const d of f.disks) for (const c of d.cls) expected += c.n;
    const counts = await hook(page).counts();
    assert.equal(counts['253:0']?.completed, expected, 'every I/O of the file is counted');
    assert.equal(Object.keys(await hook(page).classCounts()).length, CLASSES);
    await screenshot(page, 'class-limit', 'web-browser');

    // 2. A click on a class filters the view to it.
    const second = page.locator('[data-testid=class-breakdown] tbody tr').nth(1).locator('button.class-button');
    const name = (await second.textContent()) ?? '';
    const scaleOf = async () => (await hook(page).scale('253:0'))?.max ?? 0;
    const maxBefore = await scaleOf();
    const t1 = Date.now();
    await second.click();
    await idle(page);
    const clickMs = Date.now() - t1;
    const clickTasks = await longTasks();
    const st = await hook(page).state();
    assert.deepEqual(st.classes, [name], 'the clicked class is the filter');
    assert.equal(await second.getAttribute('aria-pressed'), 'true');
    // The heat map now counts that class only: one of thousands of equal shares.
    const maxAfter = await scaleOf();
    assert.ok(maxAfter > 0 && maxAfter < maxBefore / 100, `the heat map's busiest cell: ${maxBefore} I/Os, ${maxAfter} of ${name}`);
    t.diagnostic(`click on ${name}: idle after ${clickMs} ms; long tasks [${clickTasks.join(', ')}] ms`);

    // 3. "Show more" lists ROWS_MORE more classes.
    const t2 = Date.now();
    await page.click('[data-testid=class-breakdown] [data-testid=more-rows-show]');
    await idle(page);
    const moreMs = Date.now() - t2;
    const moreTasks = await longTasks();
    const afterMore = await page.evaluate(drawn);
    t.diagnostic(`show more: idle after ${moreMs} ms; long tasks [${moreTasks.join(', ')}] ms; ${afterMore.classRows} class rows`);

    const worst = Math.max(0, ...clickTasks, ...moreTasks);
    assert.ok(worst <= LONG_TASK_MS, `no main-thread task over ${LONG_TASK_MS} ms after a click (worst ${worst} ms)`);
    assert.deepEqual(
      { sparks: afterMore.sparks, hidden: afterMore.hidden },
      { sparks: ROWS_FIRST + ROWS_MORE, hidden: CLASSES - ROWS_FIRST - ROWS_MORE },
      'show more lists ROWS_MORE more',
    );
    // 4. Imported again, the file's table starts from ROWS_FIRST rows, not the ones asked for before.
    await importSnapshot(page, file, 60_000);
    const relisted = await page
      .waitForFunction(
        (n) =>
          (globalThis as unknown as { document: Doc }).document.querySelectorAll('[data-testid=class-breakdown] tbody tr').length === n,
        ROWS_FIRST,
        { timeout: 20_000 },
      )
      .then(
        () => true,
        () => false,
      );
    assert.ok(relisted, `imported again, the table lists ${ROWS_FIRST} classes (${(await page.evaluate(drawn)).classRows} listed)`);
    await idle(page, 60_000);
    const againTasks = await longTasks();
    t.diagnostic(`imported again: long tasks [${againTasks.join(', ')}] ms`);
    assert.equal((await page.evaluate(drawn)).sparks, ROWS_FIRST);
    const againWorst = Math.max(0, ...againTasks);
    assert.ok(againWorst <= LONG_TASK_MS, `no main-thread task over ${LONG_TASK_MS} ms imported again (worst ${againWorst} ms)`);

    // A live second later the page still shows the snapshot's one disk, not the agent's others.
    const coveredAtEnd = (await hook(page).state()).liveCovered?.to ?? 0;
    await page.waitForFunction((to) => ((globalThis as unknown as Hooked).__blkheat.state().liveCovered?.to ?? 0) > to, coveredAtEnd, {
      timeout: 10_000,
    });
    await idle(page);
    assert.deepEqual((await hook(page).state()).shownDisks, ['253:0']);
    assert.deepEqual(unexpectedErrors(session), []);
  },
);

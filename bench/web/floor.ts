/**
 * The long-task floor of the live section: what the machine's load alone does to a page's main
 * thread. A page that does next to nothing (once a second it writes the time into one line of
 * text, the least any live page does) runs in the same browser, under the same fio load, for as
 * long as the dashboard's steady window; its long tasks and its main thread's run-queue wait are
 * printed beside the dashboard's.
 *
 * Why: on a loaded machine a long task's wall time is mostly the page's main thread waiting for
 * a CPU (cpu.ts). Where even this page has tasks over 50 ms, that much of the dashboard's figure
 * is the machine's, not the dashboard's: no page's code can take it away. The budget is still
 * judged on the dashboard's own figure; the floor says how much of it is the machine.
 */
import type { BrowserContext } from 'playwright-core';
import { describePageThread, markRendererThreads, pageThreadBetween, type PageThreadUse } from './cpu.ts';
import { describeLongTasks, type LongTaskStats, longTasksBetween, pageNow } from './longtasks.ts';

/** What the near-idle page saw over the window. */
export interface LongTaskFloor {
  readonly steady: LongTaskStats;
  readonly pageThread: PageThreadUse | undefined;
  /** Seconds the page's ticker ran (it should be about the window's length). */
  readonly ticks: number;
}

/** The page: served by a route (no server), so the context's init scripts (the long-task recorder) run in it. */
const FLOOR_URL = 'http://blkheat-floor.invalid/';
const FLOOR_HTML = `<!doctype html><meta charset="utf-8"><title>floor</title>
<p>now: <span id="now">-</span></p>
<script>
  globalThis.__bhTicks = 0;
  setInterval(() => {
    globalThis.__bhTicks++;
    document.getElementById('now').textContent = new Date().toISOString();
  }, 1000);
</script>`;

/**
 * Opens the near-idle page in `context` (the dashboard's own page closed first: it would compete
 * for the same CPUs) and watches it for `seconds`.
 */
export async function measureLongTaskFloor(context: BrowserContext, seconds: number): Promise<LongTaskFloor> {
  const page = await context.newPage();
  try {
    await page.route(FLOOR_URL, (route) => route.fulfill({ contentType: 'text/html', body: FLOOR_HTML }));
    await page.goto(FLOOR_URL);
    const threads0 = markRendererThreads();
    const from = await pageNow(page);
    const ticks0 = await page.evaluate(() => (globalThis as unknown as { __bhTicks: number }).__bhTicks);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const to = await pageNow(page);
    const ticks1 = await page.evaluate(() => (globalThis as unknown as { __bhTicks: number }).__bhTicks);
    const pageThread = pageThreadBetween(threads0, markRendererThreads());
    return { steady: await longTasksBetween(page, from, to), pageThread, ticks: ticks1 - ticks0 };
  } finally {
    await page.close();
  }
}

/** "the floor: a page that only writes the time once a second, same browser and load, 30 s: 3 tasks > 50 ms, …" */
export function describeLongTaskFloor(f: LongTaskFloor): string {
  return (
    `  the floor: a near-idle page (it writes the time into one line once a second; ${f.ticks} ticks), same browser and load, ` +
    `${(f.steady.windowMs / 1000).toFixed(0)} s: ${describeLongTasks(f.steady)}\n    ${describePageThread(f.pageThread)}`
  );
}

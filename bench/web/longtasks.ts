/**
 * Long tasks (the Long Tasks API: PerformanceObserver entryType 'longtask', every main-thread
 * task over 50 ms) seen by a page, over windows of its own clock (performance.now()).
 *
 * One observer per document, installed by an init script before any of the page's own scripts
 * run, records every long task from the first one; a measurement marks the start and end of its
 * window on the page's clock and reads the tasks that overlap it. Marking in the page, not in
 * Node, keeps the CDP round trips (which wait for a busy main thread) out of the window's edges.
 */
import type { BrowserContext, Page } from 'playwright-core';

/** One long task: start and duration in ms of the page's performance.now() clock. */
export interface LongTask {
  readonly start: number;
  readonly duration: number;
}

/** What a page's main thread did over a window. */
export interface LongTaskStats {
  /** Length of the window, ms. */
  readonly windowMs: number;
  /** Tasks over 50 ms that overlap the window. */
  readonly count: number;
  readonly longestMs: number;
  /** Their time inside the window, ms (the main thread was blocked by long tasks this long). */
  readonly blockedMs: number;
  /** blockedMs / windowMs. */
  readonly blockedShare: number;
  /** Sum of each task's time over 50 ms (Lighthouse's "total blocking time"). */
  readonly over50Ms: number;
  /** The longest few, ms, longest first. */
  readonly worst: readonly number[];
}

/** The page globals the recorder uses (this file is type-checked without the DOM library). */
interface RecorderGlobals {
  __bhLongTasks?: LongTask[];
  PerformanceObserver: new (cb: (list: { getEntries(): { startTime: number; duration: number }[] }) => void) => {
    observe(o: { type: string }): void;
  };
}

/** Records every long task of every document the context opens, from its first script on. */
export async function recordLongTasks(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const g = globalThis as unknown as RecorderGlobals;
    if (g.__bhLongTasks) return;
    const tasks: LongTask[] = [];
    g.__bhLongTasks = tasks;
    new g.PerformanceObserver((list) => {
      for (const e of list.getEntries()) tasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask' });
  });
}

/** The page's clock now (ms of performance.now()). */
export function pageNow(page: Page): Promise<number> {
  return page.evaluate(() => performance.now());
}

/** The long tasks recorded so far (waits a frame and a task first: entries arrive after the task they time). */
export async function longTasks(page: Page): Promise<LongTask[]> {
  return page.evaluate(
    () =>
      new Promise<LongTask[]>((resolve) =>
        (globalThis as unknown as { requestAnimationFrame(cb: () => void): number }).requestAnimationFrame(() =>
          setTimeout(() => resolve([...((globalThis as unknown as RecorderGlobals).__bhLongTasks ?? [])]), 60),
        ),
      ),
  );
}

/** Summarizes the tasks that overlap [from, to) (page clock), counting only their time inside it. */
export function summarize(tasks: readonly LongTask[], from: number, to: number): LongTaskStats {
  const inside = tasks.filter((t) => t.start < to && t.start + t.duration > from);
  const clipped = inside.map((t) => Math.min(to, t.start + t.duration) - Math.max(from, t.start));
  const blockedMs = clipped.reduce((a, b) => a + b, 0);
  const windowMs = Math.max(0, to - from);
  const durations = inside.map((t) => t.duration).sort((a, b) => b - a);
  return {
    windowMs,
    count: inside.length,
    longestMs: durations[0] ?? 0,
    blockedMs,
    blockedShare: windowMs > 0 ? blockedMs / windowMs : 0,
    over50Ms: durations.reduce((a, d) => a + Math.max(0, d - 50), 0),
    worst: durations.slice(0, 5).map((d) => Math.round(d)),
  };
}

/** Long tasks over [from, to) of the page's clock, read now. */
export async function longTasksBetween(page: Page, from: number, to: number): Promise<LongTaskStats> {
  return summarize(await longTasks(page), from, to);
}

/** summarize() of each of windows one after another, as marked on the page's clock: `bounds` has one more entry than there are windows. */
export function summarizeWindows(tasks: readonly LongTask[], bounds: readonly number[]): LongTaskStats[] {
  return bounds.slice(1).map((to, i) => summarize(tasks, bounds[i] as number, to));
}

/** Each window's long tasks in one line: "per 30 s window: 5, 8, 3 tasks > 50 ms (longest 91, 140, 66 ms)". */
export function describeWindows(windows: readonly LongTaskStats[]): string {
  const seconds = Math.round((windows[0]?.windowMs ?? 0) / 1000);
  return (
    `per ${seconds} s window: ${windows.map((w) => w.count).join(', ')} tasks > 50 ms ` +
    `(longest ${windows.map((w) => (w.count > 0 ? `${Math.round(w.longestMs)}` : '–')).join(', ')} ms)`
  );
}

/** "3 tasks > 50 ms, longest 120 ms, 310 ms blocked (1.0% of 30.0 s), 160 ms over 50 ms; worst 120, 98, 92 ms" */
export function describeLongTasks(s: LongTaskStats): string {
  if (s.count === 0) return `no task > 50 ms in ${(s.windowMs / 1000).toFixed(1)} s`;
  return (
    `${s.count} task${s.count === 1 ? '' : 's'} > 50 ms, longest ${Math.round(s.longestMs)} ms, ` +
    `${Math.round(s.blockedMs)} ms blocked (${(s.blockedShare * 100).toFixed(1)}% of ${(s.windowMs / 1000).toFixed(1)} s), ` +
    `${Math.round(s.over50Ms)} ms over 50 ms; worst ${s.worst.join(', ')} ms`
  );
}

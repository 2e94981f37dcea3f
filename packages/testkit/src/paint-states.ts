/**
 * What a live page shows at every animation frame from its first paint (issue 29: a live view is
 * never an old window labelled live): the view, and the seconds the summary (row heads, side
 * histograms) and the data window (heat maps) read, sampled through the test hook in the page.
 * Used by the fake-agent browser test (apps/web live-edge) and the real-agent one (e2e).
 */
import type { Page } from 'playwright-core';
import type { Hooked } from './hook.js';

/** One painted state of the page. */
export interface PaintedState {
  readonly atMs: number;
  readonly following: boolean;
  readonly view: { readonly from: number; readonly to: number };
  readonly summary: { readonly from: number; readonly to: number } | undefined;
  readonly window: { readonly from: number; readonly to: number } | undefined;
}

/** From the page's first animation frame on (set before it loads), records its state at every frame. */
export async function samplePaintedStates(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const seen: unknown[] = [];
    const raf = (globalThis as unknown as { requestAnimationFrame(cb: () => void): number }).requestAnimationFrame.bind(globalThis);
    (globalThis as unknown as { __seen: unknown[] }).__seen = seen;
    const sample = (): void => {
      const h = (globalThis as unknown as Partial<Hooked>).__blkheat;
      if (h) {
        const st = h.state();
        seen.push({ atMs: Date.now(), following: st.following, view: st.view, summary: st.summaryRange, window: st.window });
      }
      raf(sample);
    };
    raf(sample);
  });
}

/** The states recorded since the page loaded, those following live only. */
export async function paintedStates(page: Page): Promise<PaintedState[]> {
  return (await page.evaluate(() => (globalThis as unknown as { __seen: PaintedState[] }).__seen)).filter((x) => x.following);
}

/** The states that break the rules, by rule, and a line of text for a few of them. */
export interface PaintedViolations {
  /** The view stood more than 3 s before the page's now. */
  readonly stale: PaintedState[];
  /** The heat maps showed a window ending before the view starts. */
  readonly late: PaintedState[];
  /** Row heads and histograms read seconds outside the view. */
  readonly outside: PaintedState[];
  readonly text: (xs: readonly PaintedState[]) => string;
}

/**
 * The painted states that show anything but the view at now: the view more than 3 s before now
 * (the agent's clock reaches the page in whole seconds, and the view is worked out again at each
 * message), heat maps of a window before the view (its newest seconds may still be coming, never
 * older ones in their place), or a summary of seconds outside the view.
 */
export function paintedViolations(seen: readonly PaintedState[]): PaintedViolations {
  return {
    stale: seen.filter((x) => x.view.to < x.atMs / 1000 - 3),
    late: seen.filter((x) => x.window !== undefined && x.window.to <= x.view.from),
    outside: seen.filter(
      (x) => x.summary !== undefined && (x.summary.from < x.view.from - 1 || x.summary.to > x.view.to || x.summary.to <= x.view.from),
    ),
    text: (xs) =>
      xs
        .slice(0, 3)
        .map(
          (x) =>
            `at ${(x.atMs / 1000).toFixed(1)}: view ${x.view.from}..${x.view.to}, summary ${x.summary?.from}..${x.summary?.to}, window ${x.window?.from}..${x.window?.to}`,
        )
        .join('; '),
  };
}

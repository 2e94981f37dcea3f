// A fresh live page never shows an old window as live (issue 29), in headless chromium against
// the fake agent: it has ten minutes of history and sends the backfill as a busy agent does,
// oldest first, a minute every 400 ms. From the first animation frame the page paints on, every
// state it shows is sampled: the view stands at the agent's now, and the row heads and side
// histograms (the summary) and the heat maps (the data window) read seconds of that window (its
// newest seconds come once the backfill is in: till then they are not known, never older ones
// in their place). Before, the view followed the backfill: for seconds it showed a window
// minutes old, labelled live.
// Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Hooked, idle, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

interface Seen {
  readonly atMs: number;
  readonly following: boolean;
  readonly view: { readonly from: number; readonly to: number };
  readonly summary: { readonly from: number; readonly to: number } | undefined;
  readonly window: { readonly from: number; readonly to: number } | undefined;
}

test(
  'a fresh live page with ten minutes of history stands at now from its first paint, and every part reads that window',
  { timeout: 60_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { agent, session: s, page } = await openFakeAgent(t, { history: 600, backfillPace: { frames: 60, everyMs: 400 } });
    // Every animation frame from the first, the state the page shows.
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
    await page.goto(`${agent.url}?live=60`);
    await waitLive(page, 20_000);
    // The backfill takes about 4 s: watch through it and a little after.
    await page.waitForTimeout(6000);
    await idle(page);
    await screenshot(page, 'live-edge-after-backfill', 'web-browser');
    const seen = (await page.evaluate(() => (globalThis as unknown as { __seen: Seen[] }).__seen)).filter((x) => x.following);
    assert.ok(seen.length > 100, `${seen.length} painted states sampled`);
    // Never an old window: the view stands at now (the agent's clock reaches the page in whole
    // seconds, and the view is worked out again at each message: 0.4 s here).
    const stale = seen.filter((x) => x.view.to < x.atMs / 1000 - 3);
    // What the heat maps and the row heads show is of the view: the newest seconds may still be
    // coming (the agent sends them after the backfill), never seconds before the view instead.
    const late = seen.filter((x) => x.window && x.window.to <= x.view.from);
    const outside = seen.filter(
      (x) => x.summary && (x.summary.from < x.view.from - 1 || x.summary.to > x.view.to || x.summary.to <= x.view.from),
    );
    const text = (xs: Seen[]): string =>
      xs
        .slice(0, 3)
        .map(
          (x) =>
            `at ${(x.atMs / 1000).toFixed(1)}: view ${x.view.from}..${x.view.to}, summary ${x.summary?.from}..${x.summary?.to}, window ${x.window?.from}..${x.window?.to}`,
        )
        .join('; ');
    const behind = Math.max(0, ...seen.map((x) => (x.window ? x.view.to - x.window.to : 0)));
    t.diagnostic(`${seen.length} states; first: ${text(seen.slice(0, 1))}; the data window at most ${behind} s short of the view's end`);
    assert.deepEqual(stale.length, 0, `the view stood more than 3 s before now: ${text(stale)}`);
    assert.deepEqual(late.length, 0, `the heat maps showed a window before the view: ${text(late)}`);
    assert.deepEqual(outside.length, 0, `row heads and histograms read seconds outside the view: ${text(outside)}`);
    // Once the backfill is in, every part reads the view whole.
    const last = seen.at(-1) as Seen;
    assert.ok(last.window && last.window.to >= last.view.to, `the data window reaches the view's end (${text([last])})`);
    assert.deepEqual(last.summary, last.view, 'the summary is of the view');
    assert.deepEqual(unexpectedErrors(s), []);
  },
);

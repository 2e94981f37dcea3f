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
import {
  idle,
  type PaintedState,
  paintedStates,
  paintedViolations,
  samplePaintedStates,
  screenshot,
  unexpectedErrors,
  waitLive,
} from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

test(
  'a fresh live page with ten minutes of history stands at now from its first paint, and every part reads that window',
  { timeout: 60_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { agent, session: s, page } = await openFakeAgent(t, { history: 600, backfillPace: { frames: 60, everyMs: 400 } });
    // Every animation frame from the first, the state the page shows.
    await samplePaintedStates(page);
    await page.goto(`${agent.url}?live=60`);
    await waitLive(page, 20_000);
    // The backfill takes about 4 s: watch through it and a little after.
    await page.waitForTimeout(6000);
    await idle(page);
    await screenshot(page, 'live-edge-after-backfill', 'web-browser');
    const seen = await paintedStates(page);
    assert.ok(seen.length > 100, `${seen.length} painted states sampled`);
    const { stale, late, outside, text } = paintedViolations(seen);
    const behind = Math.max(0, ...seen.map((x) => (x.window ? x.view.to - x.window.to : 0)));
    t.diagnostic(`${seen.length} states; first: ${text(seen.slice(0, 1))}; the data window at most ${behind} s short of the view's end`);
    assert.deepEqual(stale.length, 0, `the view stood more than 3 s before now: ${text(stale)}`);
    assert.deepEqual(late.length, 0, `the heat maps showed a window before the view: ${text(late)}`);
    assert.deepEqual(outside.length, 0, `row heads and histograms read seconds outside the view: ${text(outside)}`);
    // Once the backfill is in, every part reads the view whole.
    const last = seen.at(-1) as PaintedState;
    assert.ok(last.window && last.window.to >= last.view.to, `the data window reaches the view's end (${text([last])})`);
    assert.deepEqual(last.summary, last.view, 'the summary is of the view');
    assert.deepEqual(unexpectedErrors(s), []);
  },
);

// Drill-down results where the eye is (issue 29), in headless chromium with the fake agent: a
// click on a cell of the last disk's heat map, scrolled to the bottom of the window, lists its
// sampled I/Os in the dock at the window's bottom, in view, and the clicked heat map stays in
// view above the dock (the page scrolls it up when the dock would cover it), the clicked cell
// too. A comparison opened then is shown in the dock too, each in its tab; Esc clears the
// selection (its hint is back among the panels), and clearing the comparison closes the dock. Screenshot in
// artifacts/web-browser/. Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hook, idle, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

const VDA = '253:0';

test(
  'a cell click lists its I/Os in the dock, in view, with the clicked heat map still visible above it',
  { timeout: 60_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { agent, session: s, page } = await openFakeAgent(t, {}, { width: 1400, height: 900 });
    await page.goto(`${agent.url}?live=300`);
    await waitLive(page, 20_000);
    await idle(page);
    const height = page.viewportSize()?.height ?? 0;
    const hot = await hook(page).hottestCell(VDA);
    assert.ok(hot, 'vda has I/O');
    // The cell is brought into view the least way: the last disk's heat map at the window's bottom.
    const c = await hook(page).cellCenter(VDA, hot.from, hot.bucket);
    assert.ok(c);
    const row = page.locator('[data-testid="disk-row-vda"]');
    const before = await row.boundingBox();
    t.diagnostic(`vda's row at y ${before?.y}..${(before?.y ?? 0) + (before?.height ?? 0)} of ${height} before the click`);
    assert.ok(before && before.y + before.height > height * 0.58, 'the row is where the dock will be: the case to handle');

    const clickedAt = Date.now();
    await page.mouse.click(c.x, c.y);
    const dock = page.locator('[data-testid="results-dock"]');
    await dock.waitFor({ timeout: 5000 });
    // What the list says once loaded: its first I/O, or (the cell's I/Os drew no sample) why not.
    const first = dock.locator('[data-testid=samples-table] tbody tr, [data-testid=samples-empty]').first();
    await first.waitFor({ timeout: 10_000 });
    const shownMs = Date.now() - clickedAt;
    const dockBox = await dock.boundingBox();
    const rowBox = await first.boundingBox();
    const after = await row.boundingBox();
    const header = await page.locator('.app-header').boundingBox();
    t.diagnostic(
      `listed in ${shownMs} ms; dock at y ${dockBox?.y}, first I/O at y ${rowBox?.y}; vda's row at y ${after?.y}..${(after?.y ?? 0) + (after?.height ?? 0)} under a header ending at ${header ? header.y + header.height : '?'}`,
    );
    assert.ok(dockBox && rowBox && after && header);
    assert.ok(rowBox.y >= dockBox.y && rowBox.y + rowBox.height <= height, 'the first listed I/O (or why none) is in view, in the dock');
    assert.ok(after.y + after.height <= dockBox.y, 'the clicked heat map is not under the dock');
    assert.ok(after.y >= header.y + header.height, 'nor under the header');
    // The clicked cell, where it sits in its heat map now: in view, and what is there is vda's heat map, not the dock.
    const cellY = after.y + (c.y - before.y);
    const there = await page.evaluate(
      ([x, y]) =>
        (
          globalThis as unknown as {
            document: {
              elementFromPoint(x: number, y: number): { closest(q: string): { getAttribute(n: string): string | null } | null } | null;
            };
          }
        ).document
          .elementFromPoint(x, y)
          ?.closest('[data-testid^="disk-row-"]')
          ?.getAttribute('data-testid') ?? null,
      [c.x, cellY] as const,
    );
    assert.ok(cellY < dockBox.y, `the clicked cell (y ${cellY}) is above the dock`);
    assert.equal(there, 'disk-row-vda', 'at the clicked cell is vda’s heat map');
    assert.equal(await page.locator('.panels [data-testid=samples]').count(), 0, 'the list is in the dock, not among the panels');
    await screenshot(page, 'results-dock', 'web-browser');

    // A comparison opened now: its tab is shown, in view, and the list keeps its own tab.
    await page.click('[data-testid=set-baseline]');
    const compare = dock.locator('[data-testid=compare-panel]');
    await compare.waitFor({ timeout: 5000 });
    assert.equal(await dock.getAttribute('data-tab'), 'compare');
    const cmp = await compare.boundingBox();
    assert.ok(cmp && cmp.y >= dockBox.y - 1 && cmp.y < height, `the comparison is in the dock, in view (${JSON.stringify(cmp)})`);
    await page.click('[data-testid=dock-tab-samples]');
    await first.waitFor({ timeout: 5000 });
    assert.equal(await dock.getAttribute('data-tab'), 'samples');

    // Esc clears the selection: the comparison stays in the dock; cleared too, the dock closes.
    await page.keyboard.press('Escape');
    await compare.waitFor({ timeout: 5000 });
    assert.equal(await page.locator('.panels [data-testid=samples]').count(), 1, 'the hint is back among the panels');
    await page.click('[data-testid=compare-clear]');
    await dock.waitFor({ state: 'detached', timeout: 5000 });
    assert.deepEqual(unexpectedErrors(s), []);
  },
);

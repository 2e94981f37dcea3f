// Every canvas on the dashboard hands its pixels to the compositor when it is drawn
// (render/contract.ts pageContext, `desynchronized`), not with each commit of the page: in
// chromium without a GPU (this headless one, VMs, remote desktops) a canvas made otherwise is
// copied into every frame that changes anything on the page, drawn or not, and the page's
// commits carried 25-74 ms of such copies a frame (bench/web's import). A canvas's options are
// fixed by its first getContext call, so one view that asks first without them brings the
// copies back for its canvas. Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idle, unexpectedErrors } from '@blkheat/testkit';
import { gotoSummed, openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

test(
  'every canvas on a live page (heat maps, histograms, strips, offset scatter, sparklines) is drawn through pageContext (desynchronized)',
  { timeout: 120_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { agent, session, page } = await openFakeAgent(t);
    await gotoSummed(page, `${agent.url}?live=600`);
    // Hover a heat map (the overlay draws its cursor) and let every view draw.
    const box = await page.locator('[data-testid="heatmap-overlay-loop0"]').boundingBox();
    assert.ok(box, 'loop0 has a heat map');
    await page.mouse.move(box.x + box.width * 0.8, box.y + box.height * 0.5);
    await idle(page);

    const canvases = await page.evaluate(() => {
      type Canvas = {
        width: number;
        className: string;
        getAttribute(n: string): string | null;
        getContext(kind: '2d'): { getContextAttributes(): { desynchronized?: boolean } } | null;
      };
      const d = (globalThis as unknown as { document: { querySelectorAll(q: string): Iterable<Canvas> } }).document;
      return [...d.querySelectorAll('canvas')].map((c) => ({
        name: c.getAttribute('data-testid') ?? (c.className || '(unnamed)'),
        // On a canvas the page already drew, this returns the page's context and its options.
        desynchronized: c.getContext('2d')?.getContextAttributes().desynchronized === true,
      }));
    });
    t.diagnostic(`${canvases.length} canvases: ${canvases.map((c) => c.name).join(', ')}`);
    assert.ok(canvases.length >= 12, `the page's heat maps, histograms, strips and panels are on it (${canvases.length} canvases)`);
    const plain = canvases.filter((c) => !c.desynchronized).map((c) => c.name);
    assert.deepEqual(plain, [], 'canvases whose context was made without pageContext');
    assert.deepEqual(unexpectedErrors(session), []);
  },
);

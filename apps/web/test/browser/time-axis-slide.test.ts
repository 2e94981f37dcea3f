// The time axis over the heat maps while a live window slides (issue 29 item 6), in headless
// chromium against the fake agent. Its ticks are drawn once and moved as one group while the
// window slides and the ticks are the same times (render/axes.ts renderTimeAxis): read over
// several live seconds, every tick stands where the view's scale puts its time, and the axis
// line spans the whole width, also while the group is moved. Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Hooked, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

/** One reading of the axis, in px from the axis svg's left edge, with the view it was drawn for. */
interface AxisReading {
  readonly view: { readonly from: number; readonly to: number };
  readonly width: number;
  /** The moved group's transform (null: drawn for this window, not moved). */
  readonly moved: string | null;
  readonly ticks: readonly { readonly time: number; readonly x: number; readonly label: string }[];
  readonly line: { readonly left: number; readonly right: number };
}

interface Box {
  readonly left: number;
  readonly right: number;
  readonly width: number;
}
interface El {
  getBoundingClientRect(): Box;
  querySelector(q: string): El | null;
  querySelectorAll(q: string): ArrayLike<El>;
  getAttribute(name: string): string | null;
  readonly textContent: string | null;
}

test('a sliding live time axis: every tick where the view puts its time, the line the whole width', { timeout: 60_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const { agent, session: s, page } = await openFakeAgent(t);
  await page.goto(`${agent.url}?live=60`);
  await waitLive(page, 20_000);
  const readings: AxisReading[] = [];
  const isMoved = (r: AxisReading): boolean => r.moved !== null && !/^translate\(0,/.test(r.moved);
  // Until four readings caught the ticks moved (about four live seconds in five move them; a
  // second whose ticks change draws them afresh), at most 40.
  for (let i = 0; i < 40 && readings.filter(isMoved).length < 4; i++) {
    await page.waitForTimeout(700);
    readings.push(
      await page.evaluate(async (): Promise<AxisReading> => {
        const h = (globalThis as unknown as Hooked).__blkheat;
        await h.idle(10_000);
        // In the same turn as the idle page: the view and what is drawn for it.
        const { view } = h.state();
        const doc = (globalThis as unknown as { document: { querySelector(q: string): El | null } }).document;
        const svg = doc.querySelector('[data-testid=time-axis] svg');
        if (!svg) throw new Error('no time axis');
        const box = svg.getBoundingClientRect();
        const ticks = Array.from(svg.querySelectorAll('.tick')).map((el) => ({
          time: (el as unknown as { __data__: Date }).__data__.getTime() / 1000,
          x: (el.querySelector('line')?.getBoundingClientRect().left ?? NaN) - box.left,
          label: el.textContent ?? '',
        }));
        const line = svg.querySelector('.domain')?.getBoundingClientRect();
        return {
          view,
          width: box.width,
          moved: svg.querySelector('g.time-slide')?.getAttribute('transform') ?? null,
          ticks,
          line: { left: (line?.left ?? NaN) - box.left, right: (line?.right ?? NaN) - box.left },
        };
      }),
    );
  }
  const moved = readings.filter(isMoved);
  t.diagnostic(`${readings.length} readings, ${moved.length} with the ticks moved; last: ${JSON.stringify(readings.at(-1))}`);
  // The moved group is what this test is about: most live seconds move it.
  assert.ok(moved.length >= 4, `the ticks were moved in ${moved.length} of ${readings.length} readings`);
  const views = new Set(readings.map((r) => r.view.to));
  assert.ok(views.size >= 2, `the window slid: ${views.size} distinct view ends`);
  for (const r of readings) {
    const span = r.view.to - r.view.from;
    assert.ok(r.ticks.length >= 2, `ticks drawn: ${JSON.stringify(r)}`);
    for (const tick of r.ticks) {
      const want = ((tick.time - r.view.from) / span) * r.width;
      assert.ok(
        Math.abs(tick.x - want) <= 1,
        `tick "${tick.label}" (${tick.time}) at x ${tick.x.toFixed(2)}, where the view ${r.view.from}..${r.view.to} puts it at ${want.toFixed(2)} (moved: ${r.moved})`,
      );
    }
    assert.ok(r.line.left <= 0 && r.line.right >= r.width, `the axis line spans the width: ${JSON.stringify(r.line)} of ${r.width}`);
  }
  assert.deepEqual(unexpectedErrors(s), []);
});

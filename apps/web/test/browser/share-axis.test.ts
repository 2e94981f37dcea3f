// The share axis under the histograms in headless chromium against the fake agent: with no
// I/O in the visible range every histogram is empty and the axis has no tick labels (the
// histograms say "no I/O"; d3's default axis over [0, 1e-9] would crowd six labels, "0%" then
// "<0.01%" five times, on top of each other), and with I/O its labels are distinct and never
// overlap. Screenshots in artifacts/web-browser/. Needs apps/web/dist and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { hook, type Hooked, idle, importSnapshot, screenshot, unexpectedErrors } from '@blkheat/testkit';
import { jsonFile, openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { syntheticSource } from '../fixtures/synthetic.ts';

const T0 = 1_700_000_000;

interface AxisLabel {
  readonly text: string;
  readonly left: number;
  readonly right: number;
}

/** Visible tick labels of every share axis, per axis, in page px. */
function shareAxisLabels(page: Page): Promise<AxisLabel[][]> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<ShareAxisEl> } }).document;
    interface Box {
      left: number;
      right: number;
      width: number;
    }
    interface ShareAxisEl {
      querySelectorAll(s: string): ArrayLike<{ textContent: string | null; getBoundingClientRect(): Box }>;
    }
    return Array.from(doc.querySelectorAll('svg.share-axis')).map((svg) =>
      Array.from(svg.querySelectorAll('.tick text'))
        .map((t) => ({ text: t.textContent ?? '', box: t.getBoundingClientRect() }))
        .filter((t) => t.text !== '' && t.box.width > 0)
        .map((t) => ({ text: t.text, left: t.box.left, right: t.box.right })),
    );
  });
}

function assertApart(axes: AxisLabel[][]): void {
  for (const labels of axes) {
    const sorted = [...labels].sort((a, b) => a.left - b.left);
    for (let i = 1; i < sorted.length; i++) {
      const a = sorted[i - 1] as AxisLabel;
      const b = sorted[i] as AxisLabel;
      assert.ok(b.left >= a.right, `"${a.text}" and "${b.text}" overlap: ${JSON.stringify(sorted)}`);
      assert.notEqual(a.text, b.text, `the same label twice: ${JSON.stringify(sorted)}`);
    }
  }
}

test('share axis: no overlapping labels, none at all when every histogram is empty', { timeout: 60_000 }, async (t: TestContext) => {
  if (skipWithoutDashboard(t)) return;
  // Ten minutes of three disks with I/O in the first minute only (a snapshot leaves idle seconds out).
  const full = syntheticSource({ samplesPerClass: 0 }).snapshot(T0, T0 + 600);
  const file = jsonFile(t, 'quiet-tail.json', { ...full, frames: full.frames.filter((f) => f.ts < T0 + 60), samples: [] });

  const { agent, session: s, page } = await openFakeAgent(t);
  await page.goto(agent.url);
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().mode !== undefined, undefined, { timeout: 20_000 });
  await importSnapshot(page, file);
  await idle(page);

  // The whole snapshot: I/O in view, a scale with distinct labels apart from each other.
  const busy = await shareAxisLabels(page);
  assert.ok(busy.length >= 1 && busy.every((labels) => labels.length >= 2), `labelled axes: ${JSON.stringify(busy)}`);
  assertApart(busy);

  // Drag-zoom into the quiet tail (the last half of the range): no disk has I/O in view.
  // The third disk's heat map may lie below the fold: bring it into view before dragging on it.
  await page.locator('[data-testid="heatmap-overlay-vda"]').scrollIntoViewIfNeeded();
  const box = await page.locator('[data-testid="heatmap-overlay-vda"]').boundingBox();
  assert.ok(box);
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.95, box.y + box.height / 2, { steps: 8 });
  await page.mouse.up();
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().view.from > 1_700_000_000 + 200, undefined, {
    timeout: 10_000,
  });
  await idle(page);
  const counts = await hook(page).counts();
  assert.ok(Object.keys(counts).length >= 1, 'the disks are still drawn');
  for (const [dev, c] of Object.entries(counts)) assert.equal(c.histogram, 0, `${dev}: no I/O in view`);
  await screenshot(page, 'share-axis-empty', 'web-browser');
  const empty = await shareAxisLabels(page);
  assert.ok(empty.length >= 1, 'the share axes are there');
  assert.deepEqual(
    empty,
    empty.map(() => []),
    'no tick labels on an axis without I/O',
  );
  assert.deepEqual(unexpectedErrors(s), []);
});

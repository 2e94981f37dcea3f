// What must be seen wherever the page is scrolled, and the `?` help, in headless chromium with
// the fake agent (fixtures/incidents.ts: loop0 carries an I/O that hangs from a known second).
// Scrolled to the page's bottom, the header stays in view: its alert says the hang and its age
// within 3 s of the I/O passing the 1 s threshold, and the tab's title leads with it; once the
// I/O completed both go. `?` opens the list of every key and gesture (views/gestures.ts), Esc
// closes it without leaving the view. Screenshots in artifacts/web-browser/. Needs apps/web/dist
// and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type Hooked, screenshot, unexpectedErrors } from '@blkheat/testkit';
import { GESTURES } from '../../src/views/gestures.ts';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';
import { type Hang, withIncidents } from '../fixtures/incidents.ts';
import { defaultDisks, syntheticSource } from '../fixtures/synthetic.ts';

test(
  'page alert: a hang shows in the header and the tab title with the page scrolled to its bottom; ? lists every gesture',
  { timeout: 90_000 },
  async (t: TestContext) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    let hang: Hang = { start: Infinity, done: Infinity };
    const source = withIncidents(syntheticSource({ disks: defaultDisks(started - 260) }), () => hang);
    const { agent, session: s, page } = await openFakeAgent(t, { source });
    await page.goto(agent.url);
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().mode === 'live', undefined, { timeout: 20_000 });
    await page.waitForSelector('[data-testid="disk-row-loop0"]', { timeout: 20_000 });
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    const scrolled = Number(await page.evaluate('window.scrollY'));
    assert.ok(scrolled > 300, `the page scrolls (${scrolled} px): results sit far below the header`);
    // The source's failed I/Os (incidents.ts: loop0 fails reads in one second of seven) raise
    // their own alert in their seconds; a stuck I/O outranks them, so the test follows the stuck one.
    const alert = page.locator('[data-testid="page-alert"]', { hasText: /^⚠ stuck/ });
    assert.equal(await alert.count(), 0, 'no stuck alert while nothing hangs');
    assert.doesNotMatch(await page.title(), /⚠ stuck/);

    const S = Math.floor(Date.now() / 1000) + 1.4;
    const DONE = Math.floor(S) + 8;
    hang = { start: S, done: DONE };
    await alert.waitFor({ timeout: 20_000 });
    const shownAt = Date.now() / 1000;
    const text = (await alert.textContent()) ?? '';
    const title = await page.title();
    const box = await alert.boundingBox();
    t.diagnostic(
      `alert "${text}" ${(shownAt - (S + 1)).toFixed(2)} s after the I/O passed 1 s; title "${title}"; at y ${box?.y} scrolled ${scrolled} px`,
    );
    assert.ok(shownAt <= S + 1 + 3, `shown ${(shownAt - (S + 1)).toFixed(2)} s after the I/O passed the threshold`);
    assert.match(text, /^⚠ stuck \d+(\.\d+)? s on loop0$/);
    assert.match(title, /^⚠ stuck \d+(\.\d+)? s on loop0 · blkheat · fake-host$/);
    assert.ok(box && box.y >= 0 && box.y + box.height <= (page.viewportSize()?.height ?? 0), `in the viewport: ${JSON.stringify(box)}`);
    await screenshot(page, 'page-alert-scrolled', 'web-browser');
    await page.waitForFunction(
      () => !(globalThis as unknown as { document: { title: string } }).document.title.startsWith('⚠ stuck'),
      undefined,
      {
        timeout: (DONE - Date.now() / 1000 + 5) * 1000,
      },
    );
    assert.equal(await alert.count(), 0, 'the stuck alert goes once the I/O completed');

    // `?` lists every gesture; Esc closes the list and leaves the view as it was.
    const before = await page.evaluate(() => (globalThis as unknown as Hooked).__blkheat.state().following);
    await page.keyboard.press('?');
    const help = page.locator('[data-testid="keyboard-help"]');
    await help.waitFor({ state: 'visible', timeout: 5000 });
    const listed = (await help.locator('th').allTextContents()).map((x) => x.trim());
    assert.deepEqual(
      listed,
      GESTURES.map((g) => g.keys),
      'every gesture, in order',
    );
    await screenshot(page, 'keyboard-help', 'web-browser');
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'hidden', timeout: 5000 });
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as Hooked).__blkheat.state().following),
      before,
      'the view did not change',
    );
    assert.deepEqual(unexpectedErrors(s), []);
  },
);

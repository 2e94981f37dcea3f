// The dashboard in headless chromium against the fake agent (test/fixtures/fakeAgent.ts, which
// speaks protocol v1 with synthetic frames and serves the build with the agent's CSP): what
// does not need a kernel. The access token moves from the fragment to sessionStorage and is
// used; the URL keeps the view across a reload; zooming out past what the page holds fetches
// history at a coarser step; a dropped connection reconnects and backfills with no missing or
// duplicated second. Needs apps/web/dist (pnpm --filter @blkheat/web build) and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hook, type Hooked, idle, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

test('dashboard against the fake agent: token, URL state, history fetch, reconnect without gaps', { timeout: 180_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const token = 'fake-token-0123456789';
  const { agent, session: s, page } = await openFakeAgent(t, { token });
  const state = () => hook(page).state();

  // Token: from the fragment into sessionStorage, out of the address bar, used on WS and fetch.
  await page.goto(`${agent.url}?lat=device#token=${token}`);
  await waitLive(page, 20_000);
  await idle(page);
  assert.doesNotMatch(page.url(), /token/, 'the token is removed from the URL');
  assert.equal(
    await page.evaluate(() =>
      (globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }).sessionStorage.getItem('blkheat.token'),
    ),
    token,
  );
  const first = await state();
  assert.deepEqual(first.shownDisks, ['7:0', '252:0', '253:0']);
  assert.equal(first.following, true);
  assert.ok(first.liveCovered && first.liveCovered.to - first.liveCovered.from >= 590, 'backfilled ~10 minutes on connect');

  // URL state: choose things, reload, get them back (token from sessionStorage this time).
  await page.click('[data-testid=kind-queue]');
  await page.click('[data-testid=colour-linear]');
  await page.click('[data-testid=disk-chip-zram0]'); // hide zram0
  await page.click('[data-testid=class-Read]');
  await idle(page);
  await page.waitForFunction(() => (globalThis as unknown as { location: { search: string } }).location.search.includes('classes=Read'));
  const url = page.url();
  assert.match(url, /lat=queue/);
  assert.match(url, /color=lin/);
  assert.match(url, /disks=loop0,vda/);
  await page.reload();
  await waitLive(page, 20_000);
  await idle(page);
  const reloaded = await state();
  assert.deepEqual(
    [reloaded.kind, reloaded.colour, reloaded.classes, reloaded.shownDisks],
    ['queue', 'linear', ['Read'], ['7:0', '253:0']],
  );
  await screenshot(page, 'fake-1-reloaded', 'web-browser');

  // History: a 1 h live window is more than the page holds; it fetches a coarser range.
  const sent = agent.received.length;
  await page.click('[data-testid=span-1h]');
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().step !== 1, undefined, { timeout: 10_000 });
  await idle(page);
  const wide = await state();
  const ranges = agent.received.slice(sent).filter((m) => typeof m === 'object' && m !== null && (m as { t?: string }).t === 'range');
  assert.ok(ranges.length > 0, 'asked the agent for a range');
  assert.ok((wide.step ?? 0) >= 3, `a 1 h window at ${wide.step} s steps`);
  assert.ok(wide.window && wide.window.to - wide.window.from >= 3000, 'the data window covers the hour');
  await screenshot(page, 'fake-2-one-hour', 'web-browser');
  await page.click('[data-testid=span-5m]');
  await idle(page);

  // Reconnect: drop the socket; the page reconnects and backfills from the last second it saw.
  const before = await state();
  agent.dropClients();
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().connection !== 'live', undefined, { timeout: 5000 });
  await page.waitForTimeout(2500); // a few seconds the page did not see
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().reconnects > 0, undefined, { timeout: 20_000 });
  await waitLive(page, 20_000);
  await page.waitForTimeout(1500);
  await idle(page);
  // State and counts read in one go, so no live frame lands between them.
  const { after, check } = await page.evaluate(() => {
    const h = (globalThis as unknown as Hooked).__blkheat;
    return { after: h.state(), check: h.counts() };
  });
  assert.ok(after.lastFrameTs !== undefined && before.lastFrameTs !== undefined && after.lastFrameTs > before.lastFrameTs + 2);
  assert.ok(after.liveCovered && before.liveCovered, 'coverage known');
  assert.ok(
    after.liveCovered.from <= before.liveCovered.to && after.liveCovered.to > before.liveCovered.to,
    'covered span continues across the gap',
  );
  assert.equal(after.gaps, 0, 'no second was missing from the stream');
  // Every second of the covered span is there exactly once, and equals what the agent sent.
  const seconds = after.summaryRange as { from: number; to: number };
  let expected = 0;
  for (const f of agent.source.frames(seconds.from, seconds.to)) {
    for (const d of f.disks) if (d.dev === '7:0') for (const c of d.cls) expected += c.n;
  }
  assert.equal(check['7:0']?.completed, expected, `loop0 I/Os over [${seconds.from}, ${seconds.to}) equal the agent's`);
  await screenshot(page, 'fake-3-reconnected', 'web-browser');

  // A shared link to a past range: opens paused there, fetched once the agent answers.
  const from = (after.lastFrameTs as number) - 2400;
  await page.goto(`${agent.url}?from=${from}&to=${from + 300}&disks=loop0`);
  await waitLive(page, 20_000);
  await page.waitForFunction(() => ((globalThis as unknown as Hooked).__blkheat.counts()['7:0']?.completed ?? 0) > 0, undefined, {
    timeout: 20_000,
  });
  await idle(page);
  const past = await page.evaluate(() => {
    const h = (globalThis as unknown as Hooked).__blkheat;
    return { st: h.state(), counts: h.counts() };
  });
  assert.equal(past.st.following, false);
  assert.deepEqual(past.st.view, { from, to: from + 300 });
  let inPast = 0;
  for (const f of agent.source.frames(from, from + 300)) for (const d of f.disks) if (d.dev === '7:0') for (const c of d.cls) inPast += c.n;
  assert.equal(past.counts['7:0']?.completed, inPast, 'the linked range shows what the agent recorded then');
  await screenshot(page, 'fake-4-linked-past-range', 'web-browser');
  assert.deepEqual(unexpectedErrors(s), []);
});

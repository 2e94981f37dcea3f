// The history-fault banner (protocol 3 status), in headless chromium against the fake agent:
// it appears when the agent reports that history cannot be written (a `status` message), names
// the fault and since when, stays across a reload (the hello carries the status), and goes when
// a status without a fault arrives. Screenshot in artifacts/web-browser/. Needs apps/web/dist
// and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hook, type Hooked, idle, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

test('history fault: the banner appears with the fault, survives a reload, and goes when it ends', { timeout: 60_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const { agent, session: s, page } = await openFakeAgent(t);
  const live = (): Promise<void> => waitLive(page, 20_000);
  const banner = page.locator('[data-testid=history-fault]');

  await page.goto(agent.url);
  await live();
  await idle(page);
  assert.equal(await banner.count(), 0, 'no banner while history is fine');

  const startedAt = Math.floor(Date.now() / 1000) - 120;
  // 12:34:56 UTC today (the browser runs in UTC), so the banner's clock reading is known.
  const day = new Date();
  const since = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 12, 34, 56) / 1000;
  const message = 'ENOSPC writing /var/lib/blkheat/history/t1-1700000000.seg: no space left on device';
  agent.setStatus({ startedAt, historyFault: { message, since } });
  await banner.waitFor({ state: 'visible', timeout: 5000 });
  const text = (await banner.textContent()) ?? '';
  assert.match(text, /^History is not being recorded since 12:34:56: /);
  assert.ok(text.includes(message), `names the fault: ${text}`);
  assert.match(text, /The live view goes on; seconds not recorded show as no data\.$/);
  assert.equal(await banner.getAttribute('role'), 'alert', 'announced to screen readers');
  await screenshot(page, 'history-fault-banner', 'web-browser');

  // A page opened during the fault learns it from the hello.
  await page.reload();
  await live();
  await banner.waitFor({ state: 'visible', timeout: 5000 });

  // Space is back: the agent's next status has no fault, and the banner goes.
  agent.setStatus({ startedAt });
  await banner.waitFor({ state: 'detached', timeout: 5000 });
  assert.equal((await hook(page).state()).connection, 'live');
  assert.deepEqual(unexpectedErrors(s), []);
});

test('a young agent: the seconds before its oldest one are drawn as no data, not as a quiet disk', { timeout: 60_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  // The agent has recorded for 90 s; the 5 min live view reaches 3.5 min before that.
  const { agent, page } = await openFakeAgent(t, { history: 90 });
  await page.goto(`${agent.url}?live=300`);
  await waitLive(page, 20_000);
  await idle(page);
  const got = await page.evaluate(() => {
    const h = (globalThis as unknown as Hooked).__blkheat;
    const st = h.state();
    const dev = st.shownDisks[0] as string;
    return { view: st.view, step: st.step, window: st.window, unrecorded: h.unrecorded(dev, st.view.from, st.view.to) };
  });
  assert.equal(got.step, 1);
  const { historyFrom } = agent;
  assert.ok(got.view.from < historyFrom - 200, `the view reaches well before the agent: ${JSON.stringify(got)}`);
  assert.ok(got.window && got.window.from <= got.view.from, `the data window holds the view: ${JSON.stringify(got)}`);
  const expected = Array.from({ length: historyFrom - Math.floor(got.view.from) }, (_, i) => Math.floor(got.view.from) + i);
  assert.deepEqual(
    got.unrecorded.filter((ts) => ts < historyFrom),
    expected,
    'every second before the agent is no data',
  );
  assert.deepEqual(
    got.unrecorded.filter((ts) => ts >= historyFrom),
    [],
    'nothing the agent recorded is drawn as no data',
  );
  await screenshot(page, 'young-agent-no-data-before-start', 'web-browser');
});

// The counts of I/Os without a full record say what they are on hover (issue 29: "untimed" was
// explained nowhere, "not sampled" read like an error), in headless chromium with the fake
// agent: its loop0 has I/Os without a sample record every second, and here untimed writes too.
// The row head's and the header's hover text is model/explain.ts's, word for word. Needs
// apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Frame } from '@blkheat/shared-types';
import { idle, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { EXPLAIN } from '../../src/model/explain.ts';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';
import { defaultDisks, syntheticSource } from '../fixtures/synthetic.ts';

test('untimed and sample-less I/O counts explain themselves on hover, in the row head and the header', { timeout: 60_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const base = syntheticSource({ disks: defaultDisks(Math.floor(Date.now() / 1000) - 260) });
  // Two untimed writes on loop0 every second (completions no probe saw).
  const source = {
    ...base,
    frames: (from: number, to: number): Frame[] =>
      base.frames(from, to).map((f) => ({ ...f, disks: f.disks.map((d) => (d.dev === '7:0' ? { ...d, untimed: { write: 2 } } : d)) })),
  };
  const { agent, session: s, page } = await openFakeAgent(t, { source });
  await page.goto(agent.url);
  await waitLive(page, 20_000);
  await idle(page);
  const untimed = page.locator('[data-testid="disk-untimed-loop0"]');
  const unsampled = page.locator('[data-testid="disk-unsampled-loop0"]');
  await untimed.waitFor({ timeout: 10_000 });
  assert.match((await untimed.textContent()) ?? '', /^ · [\d,]+ untimed$/);
  assert.equal(await untimed.getAttribute('title'), EXPLAIN.untimed);
  assert.match((await unsampled.textContent()) ?? '', /^ · [\d,.]+[kM]? without a sample record$/);
  assert.equal(await unsampled.getAttribute('title'), EXPLAIN.notSampled);
  const header = page.locator('[data-testid="dropped"]');
  assert.match((await header.textContent()) ?? '', /without a sample record/);
  assert.ok(((await header.getAttribute('title')) ?? '').startsWith(EXPLAIN.notSampled), 'the header says the same');
  assert.deepEqual(unexpectedErrors(s), []);
});

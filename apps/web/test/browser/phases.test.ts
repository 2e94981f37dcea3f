// Latency phases (protocol 4) in headless chromium with the fake agent (fixtures/submitWait.ts):
// a source with submit-wait timing opens on Total (what the application sees); loop0, whose I/O
// waits 200 ms for a request, says so in its row head whatever the phase; Submit wait and Device
// show their own latencies and go into the URL; vda's column tooltip names its tags_full seconds
// (protocol 5); a cell lists its samples with their submit wait; the in-flight tooltip shows the
// waiting bios and the frozen queue. An imported snapshot from before protocol 4 draws device latency, with Total
// disabled and saying why. Needs apps/web/dist and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { hook, type Hooked, idle, importSnapshot, screenshot, waitLive } from '@blkheat/testkit';
import { jsonFile, openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { LOOP0, OLDEST_WAIT_S, VDA, WAIT_S, WAITING, withSubmitWait } from '../fixtures/submitWait.ts';
import { defaultDisks, syntheticSource } from '../fixtures/synthetic.ts';
import { formatLatency } from '../../src/model/latency.ts';

type Search = { location: { search: string } };

/** p50 of a disk's histogram on screen, seconds. */
async function p50(page: Page, dev: string): Promise<number> {
  await idle(page);
  return (await hook(page).percentiles(dev))['p50'] ?? NaN;
}

/** Within the width of a latency bucket and a bit (four per octave: ±19%). */
function near(got: number, want: number, what: string): void {
  assert.ok(Math.abs(got - want) / want < 0.3, `${what}: ${got} s, expected about ${want} s`);
}

test(
  'phases: Total by default with submit-wait data, the row head names the wait, each phase its own latency',
  { timeout: 90_000 },
  async (t: TestContext) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const source = withSubmitWait(syntheticSource({ disks: defaultDisks(started - 400), samplesPerClass: 3 }));
    const { agent, page } = await openFakeAgent(t, { source });
    await page.goto(agent.url);
    await waitLive(page);
    await idle(page);

    const st = await hook(page).state();
    assert.equal(st.kind, 'total', 'data with submit-wait timing opens on Total');
    assert.doesNotMatch(page.url(), /lat=/, 'the default stays out of the URL');
    assert.equal(await page.locator('[data-testid=kind-total]').getAttribute('aria-pressed'), 'true');
    assert.equal(await page.locator('[data-testid=kind-total]').isDisabled(), false);
    near(await p50(page, LOOP0), WAIT_S + 5.3e-3, 'loop0 total p50');

    // The row head: loop0's p99 is mostly the wait for a request, which its reads met on a frozen
    // queue (causes.frozen); vda's is not.
    const note = page.locator('[data-testid=submit-wait-loop0]');
    // Both p99s are bounds (the tops of their buckets), the numbers the note carries.
    const noteTotal = Number(await note.getAttribute('data-total-p99'));
    const noteSubmit = Number(await note.getAttribute('data-submit-p99'));
    assert.match((await note.textContent()) ?? '', /^p99 ≤ \d+(\.\d+)? ms, of which ≤ \d+(\.\d+)? ms waiting on a frozen queue on loop0$/);
    assert.equal(
      await note.textContent(),
      `p99 ≤ ${formatLatency(noteTotal)}, of which ≤ ${formatLatency(noteSubmit)} waiting on a frozen queue on loop0`,
    );
    near(noteSubmit, WAIT_S, 'loop0 submit wait p99');
    assert.equal(await page.locator('[data-testid=submit-wait-vda]').count(), 0);
    // This source has no sizes: the size panel has no phase to fall back from (phase-split.test.ts has sizes).
    assert.equal(await page.locator('[data-testid=size-device-only]').count(), 0);

    // vda's seconds are marked tags_full (protocol 5): its column's tooltip says in how many.
    const vdaHot = await hook(page).hottestCell(VDA);
    assert.ok(vdaHot);
    const v = await hook(page).cellCenter(VDA, vdaHot.from, vdaHot.bucket);
    assert.ok(v);
    await page.mouse.move(v.x, v.y);
    await page.waitForSelector('[data-testid=tooltip-tags-full]', { timeout: 5000 });
    const tags = page.locator('[data-testid=tooltip-tags-full]');
    const seconds = Number(await tags.getAttribute('data-count'));
    assert.ok(seconds >= 1, `tags_full seconds in vda's column: ${seconds}`);
    assert.equal(await tags.textContent(), `every tag in use with bios waiting in ${seconds} second${seconds === 1 ? '' : 's'}`);

    // The in-flight tooltip: bios waiting for a request beside the requests, the queue frozen, and the column's frozen I/Os.
    const hot = await hook(page).hottestCell(LOOP0);
    assert.ok(hot);
    const c = await hook(page).cellCenter(LOOP0, hot.from, hot.bucket);
    assert.ok(c);
    await page.mouse.move(c.x, c.y);
    await page.waitForSelector('[data-testid=tooltip-waiting]', { timeout: 5000 });
    const waiting = page.locator('[data-testid=tooltip-waiting]');
    assert.equal(Number(await waiting.getAttribute('data-count')), WAITING);
    assert.equal(await waiting.getAttribute('data-frozen'), 'true');
    assert.match((await waiting.textContent()) ?? '', new RegExp(`^${WAITING} bios for a request, oldest 350 ms · queue frozen$`));
    assert.ok(OLDEST_WAIT_S === 0.35);
    assert.ok(
      Number(await page.locator('[data-testid=tooltip-frozen]').getAttribute('data-count')) > 0,
      'the column’s I/Os met a frozen queue',
    );
    assert.match((await page.locator('.tooltip-title').textContent()) ?? '', /total latency/);
    assert.equal(await page.locator('[data-testid=tooltip-tags-full]').count(), 0, 'loop0 had no second with tasks asleep for a tag');

    // A cell of the total heat map lists its samples, with their submit wait.
    await page.mouse.click(c.x, c.y);
    await page.waitForSelector('[data-testid=samples-table] tbody tr', { timeout: 10_000 });
    assert.match((await page.locator('[data-testid=samples-scope]').textContent()) ?? '', /total latency/);
    assert.equal(await page.locator('[data-testid=sort-w_ns]').count(), 1, 'a submit wait column');
    const wns = await page.locator('[data-testid=samples-table] tbody tr').first().getAttribute('data-w-ns');
    assert.equal(Number(wns), Math.round(WAIT_S * 1e9));
    await screenshot(page, 'phases-total', 'web-browser');

    // Submit wait, then Device: each its own latency, in the URL, kept by a reload.
    await page.click('[data-testid=kind-submit]');
    near(await p50(page, LOOP0), WAIT_S, 'loop0 submit wait p50');
    near(await p50(page, VDA), 2e-6, 'vda submit wait p50');
    await page.waitForFunction(() => (globalThis as unknown as Search).location.search.includes('lat=submit'));
    await page.click('[data-testid=kind-device]');
    near(await p50(page, LOOP0), 5.3e-3, 'loop0 device p50');
    assert.equal(await page.locator('[data-testid=size-device-only]').count(), 0, 'device latency: nothing to say');
    assert.equal(await page.locator('[data-testid=submit-wait-loop0]').count(), 1, 'the row head says it in any phase');
    await page.waitForFunction(() => (globalThis as unknown as Search).location.search.includes('lat=device'));
    await page.reload();
    await waitLive(page);
    await idle(page);
    assert.equal((await hook(page).state()).kind, 'device', 'a chosen phase is kept by a link, device too');
  },
);

test(
  'phases: a snapshot from before protocol 4 draws device latency, Total and Submit wait disabled saying why',
  { timeout: 90_000 },
  async (t: TestContext) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const old = syntheticSource({ disks: defaultDisks(started - 400) });
    const snap = { ...old.snapshot(started - 300, started - 60), version: 3 };
    const file = jsonFile(t, 'old-snapshot.json', snap);
    const source = withSubmitWait(syntheticSource({ disks: defaultDisks(started - 400) }));
    const { agent, page } = await openFakeAgent(t, { source });
    await page.goto(`${agent.url}?lat=total`);
    await waitLive(page);
    await idle(page);
    assert.equal((await hook(page).state()).kind, 'total');
    await importSnapshot(page, file);
    await idle(page);
    const st = await hook(page).state();
    assert.equal(st.mode, 'snapshot');
    assert.equal(st.kind, 'device', 'the chosen Total falls back to device latency');
    const total = page.locator('[data-testid=kind-total]');
    assert.equal(await total.isDisabled(), true);
    assert.match((await total.getAttribute('title')) ?? '', /^this snapshot predates submit-wait timing/);
    assert.equal(await page.locator('[data-testid=kind-submit]').isDisabled(), true);
    assert.equal(await page.locator('[data-testid=kind-device]').getAttribute('aria-pressed'), 'true');
    const counts = await hook(page).counts();
    assert.ok((counts[LOOP0]?.histogram ?? 0) > 0, 'the old snapshot draws');
    assert.match(page.url(), /lat=total/, 'the choice stays in the link: live data has it');
    await screenshot(page, 'phases-old-snapshot', 'web-browser');
    await page.click('[data-testid=close-snapshot]');
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().kind === 'total', undefined, { timeout: 10_000 });
  },
);

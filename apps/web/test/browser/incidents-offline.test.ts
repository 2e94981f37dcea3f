// Incident views away from a live, connected page, in headless chromium with the fake agent
// (fixtures/incidents.ts): an imported snapshot marks its stuck I/O, failed I/Os and requeues
// with the source's counts but gives no live "stuck" verdict, and its PNG export draws; with the
// agent gone, the live verdict says how old it is. Needs apps/web/dist and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, hook, type Hooked, importSnapshot, screenshot, unexpectedErrors } from '@blkheat/testkit';
import { formatClock } from '../../src/model/format.ts';
import { jsonFile, openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';
import { type InPage, isAlert, LOOP0, sourceFaults, withIncidents } from '../fixtures/incidents.ts';
import { defaultDisks, syntheticSource } from '../fixtures/synthetic.ts';

test(
  'an imported snapshot marks its stuck I/O, failed I/Os and requeues; the row head stays quiet (a live verdict)',
  { timeout: 60_000 },
  async (t: TestContext) => {
    if (skipWithoutDashboard(t)) return;
    const T0 = 1_700_000_000;
    const S = T0 + 100.4;
    const DONE = T0 + 131;
    const source = withIncidents(syntheticSource({ disks: defaultDisks(T0) }), () => ({ start: S, done: DONE }));
    const snap = { ...source.snapshot(T0, T0 + 300), frames: source.frames(T0, T0 + 300).filter((f) => f.disks.length > 0) };
    const file = jsonFile(t, 'hang-snapshot.json', snap);
    const { agent, session: s, page } = await openFakeAgent(t);
    await page.goto(agent.url);
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().mode === 'live', undefined, { timeout: 20_000 });
    await importSnapshot(page, file);
    const read = await page.evaluate(async (dev) => {
      const blkheat = (globalThis as unknown as Hooked).__blkheat;
      await blkheat.idle();
      const bucket = blkheat.hottestCell(dev)?.bucket ?? 0;
      const st = blkheat.stuck(dev);
      const start = st.spans[0]?.start ?? 0;
      const step = blkheat.state().step ?? 1;
      const at = blkheat.cellCenter(dev, Math.floor(start / step) * step, bucket);
      const r = (globalThis as unknown as InPage).document.querySelector('[data-testid="heatmap-overlay-loop0"]')?.getBoundingClientRect();
      return {
        stuck: st,
        step,
        faults: blkheat.faults(dev),
        view: blkheat.state().view,
        px: at && r ? blkheat.overlayPixelAt(dev, at.x, r.top + 2) : undefined,
        loud: (globalThis as unknown as InPage).document.querySelector('[data-testid="disk-row-loop0"][data-stuck="true"]') !== null,
      };
    }, LOOP0);
    assert.equal(read.loud, false, 'no live frame: no stuck verdict');
    assert.equal(read.stuck.count, 0);
    assert.equal(read.stuck.spans.length, 1, JSON.stringify(read.stuck.spans));
    const span = read.stuck.spans[0];
    assert.ok(span && Math.abs(span.start - S) < read.step, `starts in the column of ${S}: ${span?.start}`);
    // Last in flight in second DONE − 1: the end of the column holding it.
    assert.equal(span.end, (Math.floor((DONE - 1) / read.step) + 1) * read.step);
    assert.ok(isAlert(read.px), `the mark above its start column: ${read.px}`);
    // The marks' counts are the source's, column by column.
    const step = read.step;
    let checked = 0;
    for (let ts = Math.ceil(read.view.from / step) * step; ts + step <= read.view.to; ts += step) {
      const want = sourceFaults(source, LOOP0, ts, step);
      const got = read.faults.find((f) => f.ts === ts);
      if (want.failed === 0 && want.requeues === 0) assert.equal(got, undefined, `no mark at ${ts}`);
      else {
        assert.deepEqual(got, { ts, ...want }, `marks at ${ts}`);
        checked++;
      }
    }
    assert.ok(checked >= 40, `${checked} columns checked`);

    // The tooltip of a column inside the hang names it; one before it does not. A snapshot does not scroll.
    const hover = async (ts: number) => {
      const bucket = (await hook(page).hottestCell(LOOP0))?.bucket ?? 0;
      const c = await hook(page).cellCenter(LOOP0, ts, bucket);
      assert.ok(c);
      await page.mouse.move(c.x, c.y);
      await page.waitForSelector('[data-testid=tooltip-failed]', { timeout: 5000 });
      return Number(await page.locator('[data-testid=tooltip-time]').getAttribute('data-ts'));
    };
    const inside = Math.floor(S / step) * step + 5 * step;
    assert.equal(await hover(inside), inside);
    assert.equal(
      await page.locator('[data-testid=tooltip-stuck]').textContent(),
      `xfs_repair (31337) in flight since ${formatClock(Math.floor(S))}`,
    );
    const want = sourceFaults(source, LOOP0, inside, step);
    assert.equal(Number(await page.locator('[data-testid=tooltip-failed]').getAttribute('data-count')), want.failed);
    assert.equal(Number(await page.locator('[data-testid=tooltip-requeues]').getAttribute('data-count')), want.requeues);
    await screenshot(page, 'incidents-snapshot', 'web-browser');
    const before = Math.floor(S / step) * step - 20 * step;
    assert.equal(await hover(before), before);
    assert.equal(await page.locator('[data-testid=tooltip-stuck]').count(), 0, 'before the hang: nothing stuck');
    await page.mouse.move(2, 2);
    // The PNG export draws the same marks (render/png.ts): it is written, and nothing threw.
    const download = page.waitForEvent('download');
    await page.click('[data-testid=export-png]');
    const png = join(artifactsDir('web-browser'), 'incidents-snapshot-export.png');
    await (await download).saveAs(png);
    assert.equal(readFileSync(png).subarray(1, 4).toString(), 'PNG');
    assert.deepEqual(unexpectedErrors(s), []);
  },
);

test('when the agent goes away the stuck verdict says how old it is', { timeout: 60_000 }, async (t: TestContext) => {
  if (skipWithoutDashboard(t)) return;
  const started = Math.floor(Date.now() / 1000);
  // Hung since 30 s before the agent started, and never completes.
  const source = withIncidents(syntheticSource({ disks: defaultDisks(started - 260) }), () => ({ start: started - 29.5, done: Infinity }));
  const { agent, page } = await openFakeAgent(t, { source });
  await page.goto(agent.url);
  const badge = page.locator('[data-testid="stuck-loop0"]');
  await badge.waitFor({ timeout: 20_000 });
  assert.doesNotMatch((await badge.textContent()) ?? '', /as of/, 'connected: the verdict is current');
  await agent.close();
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().connection !== 'live', undefined, {
    timeout: 20_000,
  });
  await page.waitForFunction(
    () =>
      /as of/.test(
        (globalThis as unknown as { document: { querySelector(q: string): { textContent: string } | null } }).document.querySelector(
          '[data-testid="stuck-loop0"]',
        )?.textContent ?? '',
      ),
    undefined,
    { timeout: 5000 },
  );
  const last = (await hook(page).state()).lastFrameTs;
  assert.ok(last !== undefined);
  const text = (await badge.textContent()) ?? '';
  assert.match(
    text,
    new RegExp(`^stuck: 1 I/O, oldest ${(last + 1 - (started - 29.5)).toFixed(1)} s \\(as of ${formatClock(last + 1)}\\)$`),
  );
  await screenshot(page, 'incidents-stale', 'web-browser');
});

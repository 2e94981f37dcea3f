// The host's I/O pressure strip above the heat maps, in headless chromium with the fake agent:
// frames whose `psi` is known (some = (ts mod 10) × 10 % of the second, full a quarter of it)
// draw per column exactly those shares, on the heat maps' x mapping (at the x of a heat map
// column the strip is solid at its foot where the host was stalled, empty where it was not), and
// the tooltip of a hovered cell names the column's pressure. The same agent without `psi` (an
// older agent) shows no strip, takes no space for it and says nothing. Needs apps/web/dist and
// chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Frame } from '@blkheat/shared-types';
import { hook, type Hooked, idle, screenshot, unexpectedErrors } from '@blkheat/testkit';
import { openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { defaultDisks, syntheticSource, type SyntheticSource } from '../fixtures/synthetic.ts';
import { PRESSURE_SOURCE, pressureText } from '../../src/model/pressure.ts';

const LOOP0 = '7:0';
const someUs = (ts: number): number => (ts % 10) * 100_000;
const fullUs = (ts: number): number => (ts % 10) * 25_000;

/** Every second of the source with the host's pressure (protocol 4). */
function withPressure(base: SyntheticSource): SyntheticSource {
  const frame = (f: Frame): Frame => ({ ...f, psi: { some_us: someUs(f.ts), full_us: fullUs(f.ts) } });
  return { ...base, frame: (ts) => frame(base.frame(ts)), frames: (from, to) => base.frames(from, to).map(frame) };
}

/** Opens the dashboard on `source` and waits until loop0's heat map and strip have drawn a while. */
async function openLive(t: TestContext, source: SyntheticSource): Promise<{ page: Page; errors: () => string[] }> {
  const { agent, page, session } = await openFakeAgent(t, { source });
  await page.goto(agent.url);
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().mode === 'live', undefined, { timeout: 20_000 });
  await page.waitForFunction((dev) => ((globalThis as unknown as Hooked).__blkheat.throughput(dev)?.iops.length ?? 0) > 30, LOOP0, {
    timeout: 20_000,
  });
  await idle(page);
  return { page, errors: () => unexpectedErrors(session) };
}

/** Hovers loop0's busiest cell; the second the tooltip shows. */
async function hoverCell(page: Page): Promise<number> {
  const hot = await hook(page).hottestCell(LOOP0);
  assert.ok(hot);
  const c = await hook(page).cellCenter(LOOP0, hot.from, hot.bucket);
  assert.ok(c);
  await page.mouse.move(c.x, c.y);
  await page.waitForSelector('[data-testid=tooltip-time]', { timeout: 5000 });
  return Number(await page.locator('[data-testid=tooltip-time]').getAttribute('data-ts'));
}

test(
  'I/O pressure strip: some and full per column from psi, pixels on the heat map x, the tooltip line',
  { timeout: 90_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const source = withPressure(syntheticSource({ disks: defaultDisks(started - 260) }));
    const { page, errors } = await openLive(t, source);
    await page.waitForFunction(() => ((globalThis as unknown as Hooked).__blkheat.pressure()?.some.length ?? 0) > 30, undefined, {
      timeout: 20_000,
    });
    await idle(page);

    const p = await hook(page).pressure();
    assert.ok(p, 'the strip is drawn');
    const step = p.step;
    let checked = 0;
    for (let i = 0; i < p.some.length; i++) {
      const ts = p.from + i * step;
      if (p.some[i] === null || ts + step > started) continue; // not arrived yet, or a live column still filling
      let some = 0;
      let full = 0;
      for (let s = ts; s < ts + step; s++) [some, full] = [some + someUs(s), full + fullUs(s)];
      assert.ok(Math.abs((p.some[i] as number) - some / (step * 1e6)) < 1e-9, `some at ${ts}: ${p.some[i]}`);
      assert.ok(Math.abs((p.full[i] as number) - full / (step * 1e6)) < 1e-9, `full at ${ts}: ${p.full[i]}`);
      checked++;
    }
    assert.ok(checked >= 30, `${checked} columns checked`);
    const top = Math.max(0.05, ...p.some.filter((v): v is number => v !== null));
    assert.ok(Math.abs(p.scale - top) < 1e-9, `scaled to the largest share: ${p.scale} vs ${top}`);
    const row = await page.locator('[data-testid=pressure-row]').boundingBox();
    assert.ok(row && row.height >= 28, `the strip takes its room: ${JSON.stringify(row)}`);

    // Pixels at the x of heat map columns: solid at the foot for 90 % some (22.5 % full), pale above
    // it within the some bar, nothing for a second without stall.
    if (step === 1) {
      const cols = p.some.map((v, i) => ({ v, ts: p.from + i }));
      // In the right half: the strip's label, on a veil of the background, covers the first
      // columns at the height the pale bar is read (a column there read alpha 172, not the bar's).
      const pick = (share: number): number | undefined =>
        cols.slice(Math.floor(cols.length / 2), -3).find((c) => c.v !== null && Math.abs(c.v - share) < 1e-9)?.ts;
      const stalled = pick(0.9);
      const calm = pick(0);
      assert.ok(stalled !== undefined && calm !== undefined, 'columns with 90 % and 0 % in view');
      const px = await page.evaluate(
        ({ dev, stalled, calm }) => {
          const blkheat = (globalThis as unknown as Hooked).__blkheat;
          const hot = blkheat.hottestCell(dev);
          if (!hot) return undefined;
          const doc = (
            globalThis as unknown as {
              document: { querySelector(q: string): { getBoundingClientRect(): { top: number; bottom: number } } | null };
            }
          ).document;
          const read = (ts: number, fromBottom: number) => {
            const c = blkheat.cellCenter(dev, ts, hot.bucket);
            const r = doc.querySelector('[data-testid="pressure"]')?.getBoundingClientRect();
            if (!c || !r) return undefined;
            return blkheat.pressurePixelAt(c.x, r.bottom - fromBottom);
          };
          return { full: read(stalled, 2), some: read(stalled, 16), calm: read(calm, 2) };
        },
        { dev: LOOP0, stalled, calm },
      );
      assert.ok(px?.full && px.some && px.calm, `pixels read: ${JSON.stringify(px)}`);
      assert.ok(px.full[3] > 200, `full: the solid band (${px.full})`);
      assert.ok(px.some[3] > 60 && px.some[3] < 160, `some above it: the pale bar (${px.some})`);
      assert.equal(px.calm[3], 0, `no stall: nothing drawn (${px.calm})`);
    }
    await screenshot(page, 'pressure-strip', 'web-browser');

    const shownTs = await hoverCell(page);
    await page.waitForSelector('[data-testid=tooltip-pressure]', { timeout: 5000 });
    const want = pressureText({ some: someUs(shownTs) / 1e6, full: fullUs(shownTs) / 1e6 });
    if (step === 1) assert.equal(await page.locator('[data-testid=tooltip-pressure]').textContent(), `${want} (${PRESSURE_SOURCE})`);
    assert.match(
      (await page.locator('.tooltip').textContent()) ?? '',
      /I\/O pressure.*some \d.*%, full \d.*% \(host, \/proc\/pressure\/io\)/,
    );
    assert.deepEqual(errors(), []);
  },
);

test('I/O pressure strip: data without psi (an older agent) shows none, takes no space, says nothing', { timeout: 90_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const started = Math.floor(Date.now() / 1000);
  const { page, errors } = await openLive(t, syntheticSource({ disks: defaultDisks(started - 260) }));
  assert.equal(await page.locator('[data-testid=pressure-row]').count(), 0, 'no strip');
  assert.equal(await hook(page).pressure(), undefined, 'nothing drawn');
  // No room kept for it: the first heat map sits right under the time axis, as before the strip.
  const axis = await page.locator('[data-testid=time-axis]').boundingBox();
  const first = await page.locator('[data-testid^=disk-row-]').first().boundingBox();
  assert.ok(axis && first && first.y - (axis.y + axis.height) < 20, `heat maps right under the axis: ${JSON.stringify({ axis, first })}`);
  await hoverCell(page);
  assert.equal(await page.locator('[data-testid=tooltip-pressure]').count(), 0, 'no pressure line in the tooltip');
  assert.deepEqual(
    (await hook(page).notices()).filter((n) => /pressure|psi/i.test(n.text)),
    [],
  );
  assert.deepEqual(errors(), []);
});

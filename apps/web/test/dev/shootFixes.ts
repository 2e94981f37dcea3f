/**
 * Development aid for what drill-fixes.test.ts checks: a fake agent with the incident
 * drill's situation (a disk doing thousands of I/Os per second next to one doing ~40/s that
 * spikes to 20 ms for 10 s, and an 8 s agent outage), opened in headless chromium at the
 * drill's size; screenshots into artifacts/web-fixes/<label>-*.png. Not a test; run by hand:
 *   node --import tsx apps/web/test/dev/shootFixes.ts before|after [light]
 * (BLKHEAT_WEB_DIST=/path/to/dist shoots another build, e.g. the one before a change.)
 */
import { join } from 'node:path';
import { artifactsDir, hook, type Hooked, idle, launch, screenshot } from '@blkheat/testkit';
import { startFakeAgent } from '../fixtures/fakeAgent.ts';
import { drillScenario } from '../fixtures/drillScenario.ts';

const label = process.argv[2] ?? 'shot';
const { source, outage } = drillScenario();
// BLKHEAT_WEB_DIST: shoot another build of the dashboard (e.g. the one before a change).
const agent = await startFakeAgent({ source, ...(process.env.BLKHEAT_WEB_DIST ? { dist: process.env.BLKHEAT_WEB_DIST } : {}) });
const s = await launch({ width: 1400, height: 1000, colorScheme: process.argv[3] === 'light' ? 'light' : 'dark' });
try {
  await s.page.goto(`${agent.url}?live=60`);
  await s.page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().connection === 'live', undefined, {
    timeout: 20_000,
  });
  await idle(s.page);
  await s.page.waitForTimeout(1200);
  await idle(s.page);
  console.log(await screenshot(s.page, `${label}-1-spike-and-outage`, 'web-fixes'));
  // Close-up of the quiet disk's row (the spike and the outage) at 2× for the eye.
  const row = await s.page.locator('[data-testid="disk-row-loop0"]').boundingBox();
  if (row) {
    const path = join(artifactsDir('web-fixes'), `${label}-1b-loop0-closeup.png`);
    await s.page.screenshot({ path, clip: { x: row.x, y: row.y, width: Math.min(row.width, 1000), height: row.height }, scale: 'device' });
    console.log(path);
  }
  // Hover the middle of the outage on loop0, then of the spike.
  const hover = async (ts: number, name: string, file: string): Promise<void> => {
    const box = await s.page.locator(`[data-testid="heatmap-overlay-${name}"]`).boundingBox();
    const st = await hook(s.page).state();
    if (!box) return;
    const x = box.x + ((ts - st.view.from) / (st.view.to - st.view.from)) * box.width;
    await s.page.mouse.move(x, box.y + box.height * 0.5);
    await idle(s.page);
    console.log(await screenshot(s.page, file, 'web-fixes'));
  };
  await hover((outage.from + outage.to) / 2, 'loop0', `${label}-2-outage-tooltip`);
  await s.page.mouse.move(5, 5);
  // The queue view (every request dispatched straight from the plug would sit at ≤ 1 µs).
  await s.page.click('[data-testid=kind-queue]');
  await idle(s.page);
  console.log(await screenshot(s.page, `${label}-3-queue`, 'web-fixes'));
  await s.page.click('[data-testid=kind-device]');
  const shared = s.page.locator('[data-testid=norm-shared]');
  if ((await shared.count()) > 0) {
    await shared.click();
    await idle(s.page);
    console.log(await screenshot(s.page, `${label}-4-shared-scale`, 'web-fixes'));
  }
  console.log('errors:', s.errors);
} finally {
  await s.close();
  await agent.close();
}

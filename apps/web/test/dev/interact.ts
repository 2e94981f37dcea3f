/**
 * Development aid: drives the dashboard against the fake agent through the main gestures and
 * writes a screenshot per step (artifacts/web-dev/step-*.png).
 *   node --import tsx apps/web/test/dev/interact.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, hook, idle, launch, screenshot } from '@blkheat/testkit';
import { startFakeAgent } from '../fixtures/fakeAgent.ts';

const agent = await startFakeAgent();
const s = await launch({ colorScheme: 'dark' });
const page = s.page;
const H = () => hook(page).state();
try {
  await page.goto(agent.url);
  await idle(page);
  await page.waitForTimeout(1200);
  await idle(page);
  console.log('state', await H());
  const box = await page.locator('[data-testid=heatmap-overlay-loop0]').boundingBox();
  if (!box) throw new Error('no loop0');
  // Hover the spike
  const spike = await hook(page).hottestCell('7:0', 56);
  console.log('hottest loop0 cell above bucket 56', spike);
  if (spike) {
    const c = await hook(page).cellCenter('7:0', spike.from, spike.bucket);
    if (c) await page.mouse.move(c.x, c.y);
    await idle(page);
    await screenshot(page, 'step-1-hover', 'web-dev');
  }
  // Drag-zoom around the spike
  const before = await hook(page).counts();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * 0.4, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.55, y, { steps: 10 });
  await screenshot(page, 'step-2-brush', 'web-dev');
  await page.mouse.up();
  await idle(page);
  const st = await H();
  const after = await hook(page).counts();
  console.log('zoomed', st.view, st.summaryRange, st.step, 'counts before', before['7:0'], 'after', after['7:0']);
  await screenshot(page, 'step-3-zoomed', 'web-dev');
  // Click the spike cell
  const spike2 = await hook(page).hottestCell('7:0', 56);
  if (spike2) {
    const c = await hook(page).cellCenter('7:0', spike2.from, spike2.bucket);
    if (c) await page.mouse.click(c.x, c.y);
    await idle(page);
    console.log('selection', await hook(page).selection());
    console.log('samples', await hook(page).samples());
    await screenshot(page, 'step-4-samples', 'web-dev');
  }
  // Class filter
  await page.click('[data-testid=class-Write]');
  await idle(page);
  console.log('class filter', (await H()).classes, await hook(page).counts());
  await screenshot(page, 'step-5-class', 'web-dev');
  await page.click('[data-testid=class-all]');
  // Export
  const dl = page.waitForEvent('download');
  await page.click('[data-testid=export-json]');
  const file = await dl;
  const path = join(artifactsDir('web-dev'), 'export.json');
  await file.saveAs(path);
  console.log('exported', path);
  const dlp = page.waitForEvent('download');
  await page.click('[data-testid=export-png]');
  await (await dlp).saveAs(join(artifactsDir('web-dev'), 'export.png'));
  // Import the export
  const countsBefore = await hook(page).counts();
  await page.setInputFiles('[data-testid=import-input]', path);
  await idle(page);
  const countsImported = await hook(page).counts();
  console.log('imported', (await H()).mode, 'before', countsBefore['7:0'], 'imported', countsImported['7:0']);
  await screenshot(page, 'step-6-imported', 'web-dev');
  // Malformed import
  writeFileSync('/tmp/bad.json', '{"format":"blkheat-snapshot","version":1,"frames":[1,2,3]}');
  await page.setInputFiles('[data-testid=import-input]', '/tmp/bad.json');
  await idle(page);
  console.log('notices', await hook(page).notices());
  await screenshot(page, 'step-7-bad-import', 'web-dev');
  await page.click('[data-testid=close-snapshot]');
  await idle(page);
  // Reconnect
  agent.dropClients();
  await page.waitForTimeout(300);
  console.log('after drop', (await H()).connection);
  await page.waitForTimeout(3000);
  await idle(page);
  console.log('after reconnect', await H());
  await screenshot(page, 'step-8-reconnected', 'web-dev');
  console.log('errors', s.errors);
} finally {
  await s.close();
  await agent.close();
}

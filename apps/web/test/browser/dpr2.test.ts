// A heat map on a DPR 2 screen, in headless chromium with the fake agent: the cell canvas keeps
// one pixel per CSS pixel (render/heatLayers.ts, cellDpr) while the line canvas has the device's
// two, and what reaches the screen is the cells upscaled exactly: in a screenshot every CSS pixel
// of the heat map is a 2 × 2 block of one colour (no smoothing at cell edges), and a cell's
// colour on screen is the colour the page drew for it. Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Hooked, idle, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

const LOOP0 = '7:0';
/** Half the side of the square screenshotted around a cell, CSS px. */
const HALF = 8;

interface Decoded {
  readonly width: number;
  readonly height: number;
  readonly data: number[];
}

test('DPR 2: the cell canvas at CSS resolution, upscaled to the screen exactly', { timeout: 120_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const { agent, session, page } = await openFakeAgent(t, {}, { dpr: 2, colorScheme: 'light' });
  // A fixed minute of the past: the view holds still between reading a cell and its screenshot.
  const now = Math.floor(Date.now() / 1000);
  await page.goto(`${agent.url}?from=${now - 120}&to=${now - 60}`);
  await waitLive(page, 20_000);
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().summaryRange !== undefined, undefined, {
    timeout: 20_000,
  });
  // Lines off: only cells (and the page behind them) in the screenshot.
  await page.uncheck('[data-testid=percentiles]');
  await page.mouse.move(1, 1);
  await idle(page);

  // Backing stores: the cells one pixel per CSS pixel, the lines two.
  const sizes = await page.evaluate(() => {
    type C = { width: number; getBoundingClientRect(): { width: number } };
    const d = (globalThis as unknown as { document: { querySelector(q: string): C | null }; devicePixelRatio: number }).document;
    const heat = d.querySelector('[data-testid="heatmap-loop0"]');
    const lines =
      heat && (heat as unknown as { parentElement: { querySelector(q: string): C | null } }).parentElement.querySelector('canvas.lines');
    return {
      dpr: (globalThis as unknown as { devicePixelRatio: number }).devicePixelRatio,
      heat: heat ? { px: heat.width, css: heat.getBoundingClientRect().width } : undefined,
      lines: lines ? { px: lines.width, css: lines.getBoundingClientRect().width } : undefined,
    };
  });
  t.diagnostic(`devicePixelRatio ${sizes.dpr}; heat canvas ${JSON.stringify(sizes.heat)}, lines canvas ${JSON.stringify(sizes.lines)}`);
  assert.equal(sizes.dpr, 2);
  assert.ok(sizes.heat && sizes.lines, 'the heat and line canvases');
  assert.equal(sizes.heat.px, Math.round(sizes.heat.css), 'the cell canvas: one pixel per CSS pixel');
  assert.equal(sizes.lines.px, Math.round(sizes.lines.css * 2), 'the line canvas: two pixels per CSS pixel');

  // A square around the busiest cell, screenshotted at the device's resolution.
  const at = await page.evaluate((dev) => {
    const h = (globalThis as unknown as Hooked).__blkheat;
    const hot = h.hottestCell(dev);
    const c = hot ? h.cellCenter(dev, hot.from, hot.bucket) : undefined;
    return c ? { x: Math.round(c.x), y: Math.round(c.y), drawn: h.pixelAt(dev, Math.round(c.x), Math.round(c.y)) } : undefined;
  }, LOOP0);
  assert.ok(at?.drawn && at.drawn[3] === 255, `an opaque cell drawn: ${JSON.stringify(at)}`);
  const png = await page.screenshot({ clip: { x: at.x - HALF, y: at.y - HALF, width: 2 * HALF, height: 2 * HALF } });
  const img = await page.evaluate(async (b64): Promise<Decoded> => {
    type Img = { src: string; width: number; height: number; decode(): Promise<void> };
    type Ctx = {
      drawImage(i: Img, x: number, y: number): void;
      getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
    };
    const g = globalThis as unknown as {
      Image: new () => Img;
      OffscreenCanvas: new (w: number, h: number) => { getContext(k: '2d'): Ctx };
    };
    const i = new g.Image();
    i.src = `data:image/png;base64,${b64}`;
    await i.decode();
    const ctx = new g.OffscreenCanvas(i.width, i.height).getContext('2d');
    ctx.drawImage(i, 0, 0);
    return { width: i.width, height: i.height, data: Array.from(ctx.getImageData(0, 0, i.width, i.height).data) };
  }, png.toString('base64'));
  assert.equal(img.width, 4 * HALF, 'a device-pixel screenshot');
  const px = (x: number, y: number): string => {
    const o = (y * img.width + x) * 4;
    return img.data.slice(o, o + 4).join(',');
  };

  // Every CSS pixel a 2 × 2 block of one colour, on the grid of even or odd device pixels (the
  // canvases slide left by whole device pixels while live): no blend where two cells meet.
  const blocksAt = (ox: number): number => {
    let broken = 0;
    for (let y = 0; y + 1 < img.height; y += 2)
      for (let x = ox; x + 1 < img.width; x += 2) {
        const c = px(x, y);
        if (px(x + 1, y) !== c || px(x, y + 1) !== c || px(x + 1, y + 1) !== c) broken++;
      }
    return broken;
  };
  const colours = new Set<string>();
  for (let y = 0; y < img.height; y++) for (let x = 0; x < img.width; x++) colours.add(px(x, y));
  const broken = Math.min(blocksAt(0), blocksAt(1));
  t.diagnostic(
    `${2 * HALF} × ${2 * HALF} CSS px around the cell: ${colours.size} colours, ${broken} blocks of 2 × 2 device pixels not of one colour; ` +
      `the cell drawn ${at.drawn.join(',')}, on screen ${px(2 * HALF, 2 * HALF)}`,
  );
  assert.ok(colours.size >= 2, 'the square holds more than one colour (cell edges to check)');
  assert.equal(broken, 0, 'the cells are upscaled without smoothing');
  assert.equal(px(2 * HALF, 2 * HALF), at.drawn.join(','), 'the cell on screen is the colour drawn for it');
  assert.deepEqual(unexpectedErrors(session), []);
});

// A heat map on a DPR 2 screen, in headless chromium with the fake agent: the cell and line
// canvases keep one pixel per CSS pixel (render/heatLayers.ts, flatDpr), and what reaches the
// screen is them upscaled exactly: in a screenshot every CSS pixel of the heat map is a 2 × 2
// block of one colour (no smoothing at cell edges, a line one CSS pixel wide on the cells' grid),
// and a cell's colour on screen is the colour the page drew for it. Needs apps/web/dist and
// chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Hooked, idle, unexpectedErrors } from '@blkheat/testkit';
import { gotoSummed, openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';

const LOOP0 = '7:0';
/** Half the side of the square screenshotted around a cell, CSS px. */
const HALF = 8;

interface Decoded {
  readonly width: number;
  readonly height: number;
  readonly data: number[];
}

test('DPR 2: the cell and line canvases at CSS resolution, upscaled to the screen exactly', { timeout: 120_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const { agent, session, page } = await openFakeAgent(t, {}, { dpr: 2, colorScheme: 'light' });
  // A fixed minute of the past: the view holds still between reading a cell and its screenshot.
  const now = Math.floor(Date.now() / 1000);
  await gotoSummed(page, `${agent.url}?from=${now - 120}&to=${now - 60}`);
  // Lines off: only cells (and the page behind them) in the screenshot.
  await page.uncheck('[data-testid=percentiles]');
  await page.mouse.move(1, 1);
  await idle(page);

  // Backing stores: the cells and the lines one pixel per CSS pixel.
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
  assert.equal(sizes.lines.px, Math.round(sizes.lines.css), 'the line canvas: one pixel per CSS pixel');

  // A square around the busiest cell, screenshotted at the device's resolution.
  const at = await page.evaluate((dev) => {
    const h = (globalThis as unknown as Hooked).__blkheat;
    const hot = h.hottestCell(dev);
    const c = hot ? h.cellCenter(dev, hot.from, hot.bucket) : undefined;
    return c ? { x: Math.round(c.x), y: Math.round(c.y), drawn: h.pixelAt(dev, Math.round(c.x), Math.round(c.y)) } : undefined;
  }, LOOP0);
  assert.ok(at?.drawn && at.drawn[3] === 255, `an opaque cell drawn: ${JSON.stringify(at)}`);
  const img = await screenshotSquare(page, at.x, at.y);
  const px = (x: number, y: number): string => pixel(img, x, y);
  const broken = brokenBlocks(img);
  const colours = new Set<string>();
  for (let y = 0; y < img.height; y++) for (let x = 0; x < img.width; x++) colours.add(px(x, y));
  t.diagnostic(
    `${2 * HALF} × ${2 * HALF} CSS px around the cell: ${colours.size} colours, ${broken} blocks of 2 × 2 device pixels not of one colour; ` +
      `the cell drawn ${at.drawn.join(',')}, on screen ${px(2 * HALF, 2 * HALF)}`,
  );
  assert.ok(colours.size >= 2, 'the square holds more than one colour (cell edges to check)');
  assert.equal(broken, 0, 'the cells are upscaled without smoothing');
  assert.equal(px(2 * HALF, 2 * HALF), at.drawn.join(','), 'the cell on screen is the colour drawn for it');

  // Lines on: a pixel of loop0's line canvas inside the visible plot, and the screen around it
  // with and without the lines. Both are upscaled as whole CSS pixels, and the lines are there.
  await page.check('[data-testid=percentiles]');
  await page.mouse.move(1, 1);
  await idle(page);
  const line = await page.evaluate(
    ({ testId, half }) => {
      type Rect = { left: number; top: number; right: number; bottom: number; width: number; height: number };
      type C = {
        width: number;
        height: number;
        getBoundingClientRect(): Rect;
        getContext(k: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
      };
      type El = { parentElement: { getBoundingClientRect(): Rect; querySelector(q: string): C | null } };
      const g = globalThis as unknown as { document: { querySelector(q: string): El | null }; innerHeight: number };
      const plot = g.document.querySelector(`[data-testid="${testId}"]`)?.parentElement;
      const canvas = plot?.querySelector('canvas.lines');
      const data = canvas?.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data;
      if (!plot || !canvas || !data) return undefined;
      const box = plot.getBoundingClientRect();
      const r = canvas.getBoundingClientRect();
      const sx = r.width / canvas.width;
      const sy = r.height / canvas.height;
      let painted = 0;
      let found: { x: number; y: number } | undefined;
      for (let y = 0; y < canvas.height; y++)
        for (let x = 0; x < canvas.width; x++) {
          if ((data[(y * canvas.width + x) * 4 + 3] as number) === 0) continue;
          painted++;
          const cx = Math.floor(r.left + (x + 0.5) * sx);
          const cy = Math.floor(r.top + (y + 0.5) * sy);
          // The whole square around it on screen: inside the plot and the viewport.
          const inside =
            cx - half >= box.left &&
            cx + half <= box.right &&
            cy - half >= Math.max(0, box.top) &&
            cy + half <= Math.min(box.bottom, g.innerHeight);
          if (!found && inside) found = { x: cx, y: cy };
        }
      return { painted, found };
    },
    { testId: 'heatmap-loop0', half: HALF },
  );
  assert.ok(line?.found, `a line pixel inside the visible plot: ${JSON.stringify(line)}`);
  const withLines = await screenshotSquare(page, line.found.x, line.found.y);
  await page.uncheck('[data-testid=percentiles]');
  await page.mouse.move(1, 1);
  await idle(page);
  const withoutLines = await screenshotSquare(page, line.found.x, line.found.y);
  let changed = 0;
  for (let y = 0; y < withLines.height; y++)
    for (let x = 0; x < withLines.width; x++) if (pixel(withLines, x, y) !== pixel(withoutLines, x, y)) changed++;
  const lineBroken = brokenBlocks(withLines);
  t.diagnostic(
    `line canvas: ${line.painted} pixels painted; ${2 * HALF} × ${2 * HALF} CSS px around one at ${JSON.stringify(line.found)}: ` +
      `${changed} device pixels differ with the lines off, ${lineBroken} blocks of 2 × 2 not of one colour`,
  );
  assert.ok(changed >= 4, 'the lines are drawn in the square (at least one CSS pixel changes without them)');
  assert.equal(lineBroken, 0, 'the lines are upscaled without smoothing, one CSS pixel wide');
  assert.deepEqual(unexpectedErrors(session), []);
});

/** A square of 2·HALF CSS px centred on (x, y), screenshotted at the device's resolution and decoded. */
async function screenshotSquare(page: Page, x: number, y: number): Promise<Decoded> {
  const png = await page.screenshot({ clip: { x: x - HALF, y: y - HALF, width: 2 * HALF, height: 2 * HALF } });
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
  return img;
}

/** The RGBA of a screenshot's pixel, as text. */
function pixel(img: Decoded, x: number, y: number): string {
  const o = (y * img.width + x) * 4;
  return img.data.slice(o, o + 4).join(',');
}

/**
 * How many 2 × 2 blocks of device pixels are not of one colour, on the better of the grids of
 * even or odd device pixels (the canvases slide left by whole device pixels while live): 0 when
 * every CSS pixel is one colour, no blend where two cells meet.
 */
function brokenBlocks(img: Decoded): number {
  const blocksAt = (ox: number): number => {
    let broken = 0;
    for (let y = 0; y + 1 < img.height; y += 2)
      for (let x = ox; x + 1 < img.width; x += 2) {
        const c = pixel(img, x, y);
        if (pixel(img, x + 1, y) !== c || pixel(img, x, y + 1) !== c || pixel(img, x + 1, y + 1) !== c) broken++;
      }
    return broken;
  };
  return Math.min(blocksAt(0), blocksAt(1));
}

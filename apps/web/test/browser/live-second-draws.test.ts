// What a live second draws (issue 29 item 6), in headless chromium against the fake agent. Each
// canvas drawn is handed to the compositor again, so a second should touch only the canvases
// whose picture changed: each disk's histogram when its summary changes (a live second brings a
// frame and, moments later, the summary of the new range; both used to draw it), and the "no
// data" canvas not at all while no column of the heat map lacks data. An outage that begins
// while the page follows live is still drawn as "no data" on that canvas, at its seconds only.
// Counted by wrapping the 2D context's drawing calls in the page; read with the test hook.
// Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Hooked, idle, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { defaultDisks, syntheticSource } from '../fixtures/synthetic.ts';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';

/** Drawing calls of a 2D context: a canvas that gets one in a frame is handed over again. */
const DRAWING_CALLS = ['putImageData', 'drawImage', 'clearRect', 'fillRect', 'strokeRect', 'fillText', 'stroke', 'fill'];

/** What these page functions use of the DOM (the tests compile without its types). */
interface PageCanvas {
  readonly width: number;
  readonly height: number;
  getAttribute(name: string): string | null;
  readonly className: string;
  getBoundingClientRect(): { readonly left: number; readonly width: number };
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { readonly data: ArrayLike<number> } } | null;
}
interface PageGlobals {
  readonly __blkheat: Hooked['__blkheat'];
  readonly CanvasRenderingContext2D: { readonly prototype: object };
  requestAnimationFrame(cb: () => void): number;
  readonly document: { querySelector(q: string): PageCanvas | null };
}

interface Counted {
  /** Per canvas (its data-testid), the animation frames in which it was drawn. */
  readonly frames: Record<string, number>;
  /** Live seconds seen (distinct view ends). */
  readonly seconds: number;
  /**
   * Per histogram canvas, its draws that showed what its draw before showed: the same summary
   * range, latency window and percentiles (as the page shows them, exact where sampled).
   */
  readonly repeats: Record<string, number>;
}

test(
  'a live second draws each histogram for its summary only, an unchanged "no data" canvas never, and an outage as no data',
  { timeout: 120_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const start = Math.floor(Date.now() / 1000);
    // Four seconds without frames, a while after the page is following live (it takes a few
    // seconds to load; more under a loaded CI).
    const outage = { from: start + 30, to: start + 34 };
    const { agent, session, page } = await openFakeAgent(t, {
      source: syntheticSource({ disks: defaultDisks(start - 260), outages: [outage] }),
    });
    await page.goto(`${agent.url}?live=60`);
    await waitLive(page, 20_000);
    await idle(page);
    const shown = await page.evaluate(() => (globalThis as unknown as Hooked).__blkheat.state().shownDisks);
    const disks = agent.source.disks.filter((d) => shown.includes(d.dev)).map((d) => ({ dev: d.dev, name: d.name }));
    assert.ok(disks.length >= 2, `disks shown: ${JSON.stringify(disks)}`);
    const untilS = outage.from - 2;
    assert.ok(
      Date.now() / 1000 < untilS - 5,
      `the page followed live ${untilS - Date.now() / 1000} s before the outage (too late to count)`,
    );

    // 1. Until shortly before the outage: which canvases each live second drew into.
    const counted = await page.evaluate(
      async ({ calls, untilMs, devOf }): Promise<Counted> => {
        const g = globalThis as unknown as PageGlobals;
        const h = g.__blkheat;
        const proto = g.CanvasRenderingContext2D.prototype as Record<string, (...a: unknown[]) => unknown>;
        const originals = new Map(calls.map((m) => [m, proto[m] as (...a: unknown[]) => unknown]));
        const frames: Record<string, number> = {};
        const repeats: Record<string, number> = {};
        const lastFrame = new Map<string, number>();
        const lastShown = new Map<string, string>();
        let frame = 0;
        let ticking = true;
        const tick = (): void => {
          frame++;
          if (ticking) g.requestAnimationFrame(tick);
        };
        g.requestAnimationFrame(tick);
        for (const [m, original] of originals) {
          proto[m] = function (this: { readonly canvas: PageCanvas }, ...args: unknown[]) {
            const id = this.canvas.getAttribute('data-testid') ?? `(${this.canvas.className})`;
            if (lastFrame.get(id) !== frame) {
              lastFrame.set(id, frame);
              frames[id] = (frames[id] ?? 0) + 1;
              const dev = devOf[id];
              if (dev !== undefined) {
                // What this histogram shows now, from the model (read as it draws).
                const st = h.state();
                const shows = JSON.stringify([st.summaryRange, st.latencyWindow, h.percentiles(dev)]);
                if (lastShown.get(id) === shows) repeats[id] = (repeats[id] ?? 0) + 1;
                lastShown.set(id, shows);
              }
            }
            return original.apply(this, args);
          };
        }
        const ends = new Set<number>();
        while (Date.now() < untilMs) {
          ends.add(h.state().view.to);
          await new Promise((r) => setTimeout(r, 100));
        }
        await h.idle(10_000);
        ticking = false;
        for (const [m, original] of originals) proto[m] = original;
        // The first view end was there before counting began: the seconds that came while counting.
        return { frames, seconds: ends.size - 1, repeats };
      },
      { calls: DRAWING_CALLS, untilMs: untilS * 1000, devOf: Object.fromEntries(disks.map((d) => [`histogram-${d.name}`, d.dev])) },
    );
    t.diagnostic(
      `while counting: ${counted.seconds} live seconds; frames drawn per canvas ${JSON.stringify(counted.frames)}; ` +
        `histogram draws that repeated the picture before ${JSON.stringify(counted.repeats)}`,
    );
    assert.ok(counted.seconds >= 5, `live seconds while counting: ${counted.seconds}`);
    for (const d of disks) {
      const hist = counted.frames[`histogram-${d.name}`] ?? 0;
      // Drawn when what it shows changed: the summary of each second, and the exact latencies of the
      // I/Os at its percentiles when they come. Not for the frame before the summary too: that draw
      // showed the last summary again (every second, before).
      assert.equal(
        counted.repeats[`histogram-${d.name}`] ?? 0,
        0,
        `${d.name}'s histogram drawn again for the same summary (of ${hist} draws)`,
      );
      assert.ok(hist >= counted.seconds / 2, `${d.name}'s histogram still follows the summary: ${hist} frames over ${counted.seconds} s`);
      // The heat map itself draws every second (its new column): the count above is of a live page.
      assert.ok((counted.frames[`heatmap-${d.name}`] ?? 0) >= counted.seconds / 2, `${d.name}'s heat map drew its new columns`);
      assert.equal(counted.frames[`gaps-${d.name}`] ?? 0, 0, `${d.name}'s "no data" canvas: nothing lacked data, nothing was drawn on it`);
    }

    // 2. After the outage: its seconds are "no data" on the same canvas, the second before is not.
    await page.waitForFunction((to) => (globalThis as unknown as Hooked).__blkheat.state().view.to >= to + 3, outage.to, {
      timeout: 20_000,
    });
    await idle(page);
    const name = (disks[0] as { name: string }).name;
    const dev = (disks[0] as { dev: string }).dev;
    const read = await page.evaluate(
      ({ dev, name, outage }) => {
        const g = globalThis as unknown as PageGlobals;
        const h = g.__blkheat;
        const gaps = g.document.querySelector(`[data-testid="gaps-${name}"]`);
        const hot = h.hottestCell(dev);
        if (!gaps || !hot) return undefined;
        const r = gaps.getBoundingClientRect();
        const ctx = gaps.getContext('2d');
        // The alpha the "no data" canvas holds at the middle of second `ts`, half way up the plot.
        const alpha = (ts: number): number | undefined => {
          const c = h.cellCenter(dev, ts, hot.bucket);
          if (!c || !ctx) return undefined;
          const x = Math.floor(((c.x - r.left) * gaps.width) / r.width);
          return ctx.getImageData(x, Math.floor(gaps.height / 2), 1, 1).data[3] as number;
        };
        return {
          unrecorded: h.unrecorded(dev, outage.from - 5, outage.to + 2),
          inside: [outage.from, outage.from + 1, outage.to - 1].map(alpha),
          before: alpha(outage.from - 2),
          after: alpha(outage.to + 1),
        };
      },
      { dev, name, outage },
    );
    t.diagnostic(`after the outage ${JSON.stringify(outage)}: ${JSON.stringify(read)}`);
    assert.ok(read, 'the "no data" canvas and a cell were found');
    const want: number[] = [];
    for (let s = outage.from; s < outage.to; s++) want.push(s);
    assert.deepEqual(read.unrecorded, want, 'the model says the outage seconds were not recorded');
    for (const a of read.inside)
      assert.ok(a !== undefined && a > 0, `the outage is drawn as no data: alpha ${JSON.stringify(read.inside)}`);
    assert.equal(read.before, 0, 'the second before the outage is not drawn as no data');
    assert.equal(read.after, 0, 'the second after the outage is not drawn as no data');
    await screenshot(page, 'live-outage-no-data', 'web-browser');
    assert.deepEqual(unexpectedErrors(session), [], 'no page errors');
  },
);

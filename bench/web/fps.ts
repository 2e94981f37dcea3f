/** Frames per second of the dashboard while a gesture runs, with the render scheduler's draw times. */
import type { Page } from 'playwright-core';
import { hook, type Hooked } from '@blkheat/testkit';

/** What page.evaluate callbacks use from the page's globals (this file is type-checked without the DOM lib). */
export interface PageGlobals {
  requestAnimationFrame(cb: (t: number) => void): number;
  document: { title: string };
}

export interface Stats {
  runs: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

export interface FpsResult {
  fps: number;
  frames: number;
  seconds: number;
  worstGapMs: number;
  draws: Stats;
}

/** Counts animation frames the browser produces while `gesture` runs. */
export async function fps(page: Page, gesture: () => Promise<void>): Promise<FpsResult> {
  await page.evaluate(() => {
    const g = globalThis as unknown as PageGlobals & { __rec: { frames: number; t0: number; last: number; worst: number; on: boolean } };
    g.__rec = { frames: 0, t0: performance.now(), last: performance.now(), worst: 0, on: true };
    const tick = (t: number): void => {
      const r = g.__rec;
      if (!r.on) return;
      r.frames++;
      r.worst = Math.max(r.worst, t - r.last);
      r.last = t;
      g.requestAnimationFrame(tick);
    };
    g.requestAnimationFrame(tick);
  });
  const before = await page.evaluate(() => (globalThis as unknown as Hooked).__blkheat.renderStats().frames);
  await gesture();
  const r = await page.evaluate(() => {
    const g = globalThis as unknown as { __rec: { frames: number; t0: number; worst: number; on: boolean } };
    g.__rec.on = false;
    return { frames: g.__rec.frames, ms: performance.now() - g.__rec.t0, worst: g.__rec.worst };
  });
  const after = await hook(page).renderStats();
  // Per scheduler frame, the sum of the draws of every view.
  const drawn = after.frames - before;
  const keys = Object.keys(after.timings).filter((k) => k.startsWith('heat:') || k.startsWith('overlay:') || k === 'time-axis');
  const perView = keys.map((k) => (after.timings[k] ?? []).slice(-Math.max(1, drawn)));
  const heat = perView.flat().sort((a, b) => a - b);
  const at = (q: number): number => heat[Math.min(heat.length - 1, Math.floor(q * heat.length))] ?? 0;
  return {
    fps: (r.frames / r.ms) * 1000,
    frames: r.frames,
    seconds: r.ms / 1000,
    worstGapMs: r.worst,
    draws: { runs: heat.length, median: at(0.5), p95: at(0.95), min: heat[0] ?? 0, max: heat[heat.length - 1] ?? 0 },
  };
}

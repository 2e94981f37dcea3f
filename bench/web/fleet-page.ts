/**
 * The fleet page at scale, in chromium (issue 30: "the fleet page opens a 1-hour range in ≤ 2 s
 * and the ranked table puts the slow host first"; screenshots of the overview, the ranked table
 * and one host). Used by bench/fleet-scale.ts once its simulated fleet has scrapes.
 *
 * For each page opened (a fixed 1 h range, and live over 1 h: `?live=3600`; each `tries` times, a
 * fresh navigation each, the fixed range's end the time of its try after the first), from `goto`
 * on the page's own clock: when the heat maps first held the window (the hook's `window`), when the page
 * was idle (nothing fetching, summing or drawing), when the ranked table was ready, and the long
 * tasks over that time. The live page is then left following for `liveWatchS`: each move of its
 * view's end, and how far that end stood behind now when it moved (issue 30: "the live edge
 * advances at each scrape"). Then the ranked table's first row is clicked (that host's rows) and
 * timed the same way. Prints nothing itself; figures and screenshot paths are returned.
 */
import type { Page } from 'playwright-core';
import { type Hooked, hook, launch, screenshot } from '@blkheat/testkit';
import { describeLongTasks, longTasksBetween, pageNow, recordLongTasks } from './longtasks.js';

export interface FleetPageOpen {
  readonly what: string;
  /** ms from goto to the first state whose heat maps held a window. */
  readonly firstWindowMs: number;
  /** ms from goto to idle with the window held. */
  readonly idleMs: number;
  /** ms from goto to the ranked table's rows ('ready'). */
  readonly tableMs: number;
  readonly firstRow: string;
  /** Host and disk chips in the DOM (the pickers). */
  readonly chips: number;
  /** Heat-map rows in the DOM. */
  readonly rows: number;
  readonly longTasks: string;
  /** What the page asked over its WebSocket (the ranges) and when each answer came, ms from goto. */
  readonly asked: readonly string[];
}

/** The live page's view end while it followed, one entry per move. */
export interface LiveEdgeWatch {
  readonly watchedS: number;
  /** The view's end (s) when the watch began. */
  readonly firstTo: number;
  /** Each move: the new end, how far it moved (s), and how far it stood behind now (s) when seen. */
  readonly moves: readonly { readonly to: number; readonly by: number; readonly behindS: number }[];
  /** The page stopped following during the watch. */
  readonly leftLive: boolean;
}

export interface FleetPageFigures {
  readonly opens: readonly FleetPageOpen[];
  readonly liveEdge: LiveEdgeWatch;
  readonly click: { readonly host: string; readonly ms: number; readonly rows: number; readonly longTasks: string };
  readonly screenshots: readonly string[];
}

const SUB = 'fleet-scale';

/** The page's globals the waits and the host's shot read (this file is type-checked without the DOM library). */
interface PageDom {
  readonly document: {
    querySelector(q: string): { getAttribute(n: string): string | null; getBoundingClientRect(): { top: number; height: number } } | null;
  };
  readonly scrollY: number;
  scrollTo(x: number, y: number): void;
}

/** The heat maps hold a window (a function, not a string: the dashboard's CSP allows no eval). */
function hasWindow(): boolean {
  return (globalThis as unknown as Partial<Hooked>).__blkheat?.state().window !== undefined;
}

/** The ranked table is ready with a first row. */
function tableReady(): boolean {
  const d = (globalThis as unknown as PageDom).document;
  return (
    d.querySelector('[data-testid="fleet-ranking"]')?.getAttribute('data-status') === 'ready' &&
    d.querySelector('[data-testid="rank-row-0"]') !== null
  );
}

/** The heat-map rows of `host`. */
function hostRowSelector(host: string): string {
  return `[data-testid^="disk-row-${host}/"]`;
}

/** A heat-map row matching `selector` (hostRowSelector) is on the page. */
function hostRowShown(selector: string): boolean {
  return (globalThis as unknown as PageDom).document.querySelector(selector) !== null;
}

/** Waits (polling in the page) until `predicate` holds; ms since `t0` on the page's clock. */
async function until(page: Page, t0: number, predicate: () => boolean, timeoutMs: number): Promise<number> {
  await page.waitForFunction(predicate, undefined, { timeout: timeoutMs, polling: 20 });
  return (await pageNow(page)) - t0;
}

async function counts(page: Page): Promise<{ chips: number; rows: number; firstRow: string }> {
  return page.evaluate(() => {
    const d = (
      globalThis as unknown as {
        document: {
          querySelectorAll(q: string): { length: number };
          querySelector(q: string): { getAttribute(n: string): string | null } | null;
        };
      }
    ).document;
    return {
      chips: d.querySelectorAll('[data-testid^="host-chip-"], [data-testid^="disk-chip-"]').length,
      rows: d.querySelectorAll('[data-testid^="disk-row-"]').length,
      firstRow: d.querySelector('[data-testid="rank-row-0"]')?.getAttribute('data-instance') ?? 'none',
    };
  });
}

/**
 * Requests the page sends over its WebSocket and the answers' types and sizes, and its HTTP
 * requests to the fleet server's API (the ranked table, the stuck list), timed from `t0` (Date.now()).
 */
function watchSocket(page: Page, t0: number): string[] {
  const seen: string[] = [];
  const at = (): string => `${(Date.now() - t0).toFixed(0)} ms`;
  const api = (url: string): string | undefined => /\/api\/v1\/[^?]*/.exec(url)?.[0];
  page.on('request', (r) => {
    const path = api(r.url());
    if (path) seen.push(`${at()} asked ${path}`);
  });
  page.on('requestfinished', (r) => {
    const path = api(r.url());
    if (path) seen.push(`${at()} answered ${path}`);
  });
  page.on('websocket', (ws) => {
    seen.push(`${at()} opened its WebSocket`);
    ws.on('framesent', (f) => {
      const text = typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8');
      if (!text.includes('"hello"')) seen.push(`${at()} sent ${text.slice(0, 140)}`);
    });
    ws.on('framereceived', (f) => {
      const text = typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8');
      const type = /"t":"(\w+)"/.exec(text)?.[1] ?? '?';
      if (type !== 'frame' && type !== 'status') seen.push(`${at()} got ${type}, ${(text.length / 1024).toFixed(0)} KiB`);
    });
  });
  return seen;
}

async function open(page: Page, url: string, what: string, timeoutMs: number): Promise<FleetPageOpen> {
  await page.goto('about:blank');
  page.removeAllListeners('websocket');
  page.removeAllListeners('request');
  page.removeAllListeners('requestfinished');
  const asked = watchSocket(page, Date.now());
  await page.goto(url, { waitUntil: 'commit' });
  // The page's clock starts with its navigation: performance.now() is ms since then.
  const t0 = 0;
  const firstWindowMs = await until(page, t0, hasWindow, timeoutMs);
  await page.evaluate((t) => (globalThis as unknown as Hooked).__blkheat.idle(t), timeoutMs);
  const idleMs = (await pageNow(page)) - t0;
  const tableMs = await until(page, t0, tableReady, timeoutMs);
  const end = await pageNow(page);
  const c = await counts(page);
  // Where the page's boot went before it asked anything (page clock: ms from navigation start).
  const nav = await page.evaluate(() => {
    type Navigation = { responseEnd: number; domContentLoadedEventEnd: number };
    const timing = performance as unknown as { getEntriesByType(type: 'navigation'): Navigation[] };
    const n = timing.getEntriesByType('navigation')[0];
    return n === undefined ? undefined : { html: n.responseEnd, scripts: n.domContentLoadedEventEnd };
  });
  if (nav)
    asked.unshift(`navigation: the page's HTML in ${nav.html.toFixed(0)} ms, its scripts run by ${nav.scripts.toFixed(0)} ms (page clock)`);
  return { what, firstWindowMs, idleMs, tableMs, ...c, longTasks: describeLongTasks(await longTasksBetween(page, t0, end)), asked };
}

/** Reads the view's end every 100 ms for `seconds` while the page follows live. */
async function watchLiveEdge(page: Page, seconds: number): Promise<LiveEdgeWatch> {
  const h = hook(page);
  const firstTo = (await h.state()).view.to;
  const moves: { to: number; by: number; behindS: number }[] = [];
  let to = firstTo;
  let leftLive = false;
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const st = await h.state();
    leftLive ||= !st.following;
    if (st.view.to !== to) {
      moves.push({ to: st.view.to, by: st.view.to - to, behindS: Date.now() / 1000 - st.view.to });
      to = st.view.to;
    }
    await page.waitForTimeout(100);
  }
  return { watchedS: seconds, firstTo, moves, leftLive };
}

/**
 * The page scrolled to `host`'s first row, just under the sticky header, as the window shows it:
 * a whole-page shot of a thousand hosts' page is mostly other panels, and the header, drawn where
 * the window stood, covered that row's head.
 */
async function hostShot(page: Page, host: string): Promise<string> {
  await page.evaluate((selector) => {
    const g = globalThis as unknown as PageDom;
    const row = g.document.querySelector(selector);
    const header = g.document.querySelector('.app-header')?.getBoundingClientRect().height ?? 0;
    if (row) g.scrollTo(0, row.getBoundingClientRect().top + g.scrollY - header - 8);
  }, hostRowSelector(host));
  return screenshot(page, 'fleet-1000-one-host', SUB, { fullPage: false });
}

/**
 * Opens the fleet page of `fleetUrl` over the hour to `nowS`, then live (watched following for
 * `liveWatchS`), each `tries` times (one try of a page is one sample of a machine whose speed
 * varies: the twenty-sixth session read a hello 1,566 ms after the WebSocket opened in one try and
 * 160 ms in another); screenshots the overview and the ranked table (the first try); clicks the
 * first ranked row and screenshots that host.
 */
export async function fleetPageFigures(
  fleetUrl: string,
  nowS: number,
  liveWatchS: number,
  tries = 1,
  timeoutMs = 120_000,
): Promise<FleetPageFigures> {
  const s = await launch({ width: 1400, height: 1000, colorScheme: 'light' });
  try {
    await recordLongTasks(s.context);
    const page = s.page;
    const opens = [await open(page, `${fleetUrl}?from=${nowS - 3600}&to=${nowS}`, '1 h range (fixed)', timeoutMs)];
    const shots = [await screenshot(page, 'fleet-1000-overview', SUB)];
    const table = page.locator('[data-testid="fleet-ranking"]');
    const tablePath = shots[0]?.replace(/overview\.png$/, 'ranked-table.png') ?? '';
    await table.screenshot({ path: tablePath });
    shots.push(tablePath);
    for (let t = 2; t <= tries; t++) {
      const at = Math.floor(Date.now() / 1000);
      opens.push(await open(page, `${fleetUrl}?from=${at - 3600}&to=${at}`, `1 h range (fixed), try ${t} of ${tries}`, timeoutMs));
    }
    for (let t = 1; t < tries; t++)
      opens.push(await open(page, `${fleetUrl}?live=3600`, `live, 1 h (?live=3600), try ${t} of ${tries}`, timeoutMs));
    opens.push(
      await open(
        page,
        `${fleetUrl}?live=3600`,
        `live, 1 h (?live=3600, following)${tries > 1 ? `, try ${tries} of ${tries}` : ''}`,
        timeoutMs,
      ),
    );
    const liveEdge = await watchLiveEdge(page, liveWatchS);

    // One host: the ranked table's first row, clicked; done when the host's rows are drawn.
    const before = await counts(page);
    const host = before.firstRow;
    const t0 = await pageNow(page);
    await page.click('[data-testid="rank-row-0"]');
    await page.waitForFunction(hostRowShown, hostRowSelector(host), { timeout: timeoutMs, polling: 20 });
    await page.evaluate((t) => (globalThis as unknown as Hooked).__blkheat.idle(t), timeoutMs);
    const t1 = await pageNow(page);
    const after = await counts(page);
    shots.push(await hostShot(page, host));
    return {
      opens,
      liveEdge,
      click: { host, ms: t1 - t0, rows: after.rows, longTasks: describeLongTasks(await longTasksBetween(page, t0, t1)) },
      screenshots: shots,
    };
  } finally {
    await s.close();
  }
}

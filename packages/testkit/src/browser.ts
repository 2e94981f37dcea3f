/**
 * Headless Debian chromium through playwright-core, with fixed flags (reproducible
 * screenshots, no background traffic) and a fresh profile per launch; screenshots go to the
 * artifacts directory CI keeps. playwright-core is loaded on the first launch, so the tests
 * that import this package without a browser do not pay for it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { CleanupContext } from './loop.js';

export const CHROMIUM = process.env.BLKHEAT_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--headless=new',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--hide-scrollbars',
  '--font-render-hinting=none',
];

/** `$BLKHEAT_ARTIFACTS/<sub...>` (default: artifacts/ at the repository root), created if missing. */
export function artifactsDir(...sub: string[]): string {
  const dir = resolve(process.env.BLKHEAT_ARTIFACTS ?? join(import.meta.dirname, '../../../artifacts'), ...sub);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface BrowserSession {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors and page errors seen so far. */
  readonly errors: string[];
  close(): Promise<void>;
}

export interface LaunchOptions {
  width?: number;
  height?: number;
  colorScheme?: 'light' | 'dark';
  downloads?: boolean;
  /** Device pixels per CSS pixel (1 unless a test is about high-DPI screens). */
  dpr?: number;
}

/** A persistent context on a fresh profile directory (removed on close). */
export async function launch(opts: LaunchOptions = {}): Promise<BrowserSession> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'blkheat-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    headless: true,
    viewport: { width: opts.width ?? 1400, height: opts.height ?? 1000 },
    deviceScaleFactor: opts.dpr ?? 1,
    colorScheme: opts.colorScheme ?? 'dark',
    acceptDownloads: opts.downloads ?? true,
    timezoneId: 'UTC',
    locale: 'en-US',
  });
  // tsx (esbuild keepNames) wraps named functions in callbacks we pass to page.evaluate in
  // __name(...): give the page a no-op one. Init scripts come through CDP, so CSP allows them.
  await context.addInitScript('globalThis.__name = globalThis.__name || ((f) => f);');
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return {
    context,
    page,
    errors,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A session for one test, closed after it (even when the test fails). */
export async function launchFor(t: CleanupContext, opts: LaunchOptions = {}): Promise<BrowserSession> {
  const s = await launch(opts);
  t.after(() => s.close());
  return s;
}

/** A plain browser (for benchmarks that open several pages). */
export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/**
 * Skips a test that drives the built dashboard in chromium when it cannot run here: no chromium,
 * or no build at `webIndex` (its index.html). True when it skipped.
 */
export function skipWithoutBrowser(t: { skip(message: string): void }, webIndex: string): boolean {
  const why = !existsSync(CHROMIUM)
    ? `no chromium at ${CHROMIUM}`
    : !existsSync(webIndex)
      ? 'apps/web is not built (pnpm --filter @blkheat/web build)'
      : undefined;
  if (why) t.skip(why);
  return why !== undefined;
}

/** The page's errors, less those of an agent connection coming and going (which the page handles). */
export function unexpectedErrors(s: BrowserSession): string[] {
  return s.errors.filter((e) => !/WebSocket|Failed to load resource/.test(e));
}

/**
 * Screenshot into the artifacts dir, of the whole page (default) or, with `fullPage: false`, of
 * the window where it is scrolled to; returns its path.
 */
export async function screenshot(page: Page, name: string, sub = 'screenshots', { fullPage = true } = {}): Promise<string> {
  const path = join(artifactsDir(sub), `${name}.png`);
  await page.screenshot({ path, fullPage });
  return path;
}

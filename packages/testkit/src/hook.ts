/**
 * The dashboard's test hook (`window.__blkheat`, typed by BlkheatHook in @blkheat/shared-types)
 * from a browser test: `hook(page)` calls one accessor per page.evaluate, typed from the hook's
 * interface; `Hooked` types the hook inside callbacks that run in the page; and the waits every
 * suite needs (idle, live, a frame, a snapshot imported).
 */
import type { Page } from 'playwright-core';
import type { BlkheatHook } from '@blkheat/shared-types';

/**
 * `globalThis` as seen from page.evaluate callbacks that read several accessors in one turn of
 * the page, or poll in page.waitForFunction: `(globalThis as unknown as Hooked).__blkheat`.
 * (Callbacks are serialized into the page, so they cannot call helpers defined here.) For one
 * accessor, `hook(page)` does it.
 */
export interface Hooked {
  readonly __blkheat: BlkheatHook;
}

/** The hook's accessors: every member but `version`. */
type HookAccessor = { [K in keyof BlkheatHook]: BlkheatHook[K] extends (...args: never[]) => unknown ? K : never }[keyof BlkheatHook];

/** The hook seen from Node: each accessor resolves to what it returned in the page. */
export type PageHook = {
  readonly [K in HookAccessor]: (...args: Parameters<BlkheatHook[K]>) => Promise<Awaited<ReturnType<BlkheatHook[K]>>>;
};

/**
 * The page's test hook, one page.evaluate per accessor call: `await hook(page).counts()`.
 * `idle()` first waits for the hook to be installed (see `idle` below), so it also serves a page
 * that is still loading; the other accessors expect the hook to be there.
 */
export function hook(page: Page): PageHook {
  return new Proxy({} as PageHook, {
    get(_target, name) {
      // Not a thenable (so `await hook(page)` is the proxy itself), and no symbol accessors.
      if (typeof name !== 'string' || name === 'then') return undefined;
      if (name === 'idle') return (timeoutMs?: number) => idle(page, timeoutMs);
      return (...args: unknown[]) =>
        page.evaluate(
          ({ n, a }) => {
            const h = (globalThis as unknown as Hooked).__blkheat as unknown as Record<string, (...x: unknown[]) => unknown>;
            return (h[n] as (...x: unknown[]) => unknown)(...a);
          },
          { n: name, a: args },
        );
    },
  });
}

/** Waits for the dashboard's test hook, then until it is idle (nothing fetching, summing or drawing). */
export async function idle(page: Page, timeoutMs = 30_000): Promise<void> {
  await page.waitForFunction(() => (globalThis as { __blkheat?: unknown }).__blkheat !== undefined, undefined, { timeout: timeoutMs });
  await page.evaluate((t) => (globalThis as unknown as Hooked).__blkheat.idle(t), timeoutMs);
}

/** Waits until the dashboard says it is live (connected, backfilled, following the agent). */
export async function waitLive(page: Page, timeoutMs = 20_000): Promise<void> {
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().connection === 'live', undefined, {
    timeout: timeoutMs,
  });
}

/** Waits until the dashboard has received the live frame of second `ts` or a later one. */
export async function waitFrame(page: Page, ts: number, timeoutMs = 10_000): Promise<void> {
  await page.waitForFunction((s) => ((globalThis as unknown as Hooked).__blkheat.state().lastFrameTs ?? 0) >= s, ts, {
    timeout: timeoutMs,
  });
}

/** Imports a snapshot file through the page's file input and waits until the page shows it. */
export async function importSnapshot(page: Page, file: string, timeoutMs = 20_000): Promise<void> {
  await page.setInputFiles('[data-testid=import-input]', file);
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().mode === 'snapshot', undefined, {
    timeout: timeoutMs,
  });
}

/**
 * The drill's bookkeeping: named steps (node:test subtests, so the report lists them and a
 * failure names its step), one screenshot per step in $BLKHEAT_ARTIFACTS/drill/NN-name.png
 * (NN-name-FAILED.png when the step failed), per-step timings, and a cleanup stack that tears
 * down in reverse order of setup whatever happens.
 */
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { artifactsDir, type CleanupContext } from '@blkheat/testkit';

/** Cleanups run last-in first-out (agent, then workloads, then devices), each at most once. */
export class CleanupStack implements CleanupContext {
  private readonly fns: (() => void | Promise<void>)[] = [];

  after(fn: () => void | Promise<void>): void {
    this.fns.push(fn);
  }

  async run(log: (line: string) => void): Promise<void> {
    while (this.fns.length > 0) {
      const fn = this.fns.pop() as () => void | Promise<void>;
      try {
        await fn();
      } catch (e) {
        log(`cleanup: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}

export const SHOTS = 'drill';

export class Drill {
  /** The page screenshots are taken of (the drill restarts the browser). */
  page: Page | undefined;
  readonly timings: { step: string; ms: number }[] = [];
  private n = 0;
  private failed: string | undefined;

  constructor(private readonly t: TestContext) {
    const dir = artifactsDir(SHOTS);
    for (const f of readdirSync(dir)) if (f.endsWith('.png')) rmSync(join(dir, f));
  }

  /**
   * Runs one step as a subtest. Once a step failed the following ones are skipped (they would
   * only fail for its reason). The error is rethrown prefixed with the step's number and name,
   * also when the step runs out of time (our own timer, so the message names the step).
   */
  async step(slug: string, title: string, fn: (st: TestContext) => Promise<void>, timeoutMs = 120_000): Promise<void> {
    const n = ++this.n;
    const id = `${String(n).padStart(2, '0')}-${slug}`;
    const label = `step ${n} "${title}"`;
    let settled = false;
    await this.t.test(`${String(n).padStart(2, '0')} ${title}`, { timeout: timeoutMs + 30_000 }, async (st) => {
      if (this.failed) {
        settled = true;
        st.skip(`not run: ${this.failed} failed`);
        return;
      }
      const t0 = Date.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const path = join(artifactsDir(SHOTS), `${id}.png`);
      try {
        await Promise.race([
          fn(st),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
          }),
        ]);
        const page = this.page;
        assert.ok(page && !page.isClosed(), 'no page to take the step screenshot of');
        await page.screenshot({ path, fullPage: true, timeout: 15_000 });
      } catch (e) {
        this.failed = label;
        settled = true;
        await this.shot(`${id}-FAILED`);
        const message = e instanceof Error ? e.message : String(e);
        throw new Error(`incident drill, ${label} failed: ${message}`, { cause: e });
      } finally {
        clearTimeout(timer);
        this.timings.push({ step: id, ms: Date.now() - t0 });
      }
      settled = true;
      st.diagnostic(`${id}: ${((Date.now() - t0) / 1000).toFixed(1)} s, screenshot ${path}`);
    });
    // The runner's own timeout (a hung screenshot, say) ends the subtest without our catch.
    if (!settled && !this.failed) this.failed = label;
  }

  /** A named screenshot of the current page (for moments inside a step, and failures): best effort. */
  async shot(name: string): Promise<string | undefined> {
    const page = this.page;
    if (!page || page.isClosed()) return undefined;
    const path = join(artifactsDir(SHOTS), `${name}.png`);
    try {
      await page.screenshot({ path, fullPage: true, timeout: 15_000 });
      return path;
    } catch {
      return undefined;
    }
  }
}

/** Polls `ok` every 200 ms until it holds; fails naming what it waited for and the last state seen. */
export async function pollUntil(what: string, ok: () => Promise<boolean | string>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const r = await ok();
    if (r === true) return;
    if (typeof r === 'string') last = r;
    if (Date.now() > end)
      throw new Error(`timed out after ${(timeoutMs / 1000).toFixed(0)} s waiting for ${what}${last ? ` (${last})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Helpers for the dashboard's browser tests against the real agent: start the agent the way a
 * user does, open the page in chromium, drive gestures, read heat map columns, run background
 * I/O. The browser and the test hook (`hook(page)`) come from @blkheat/testkit. Everything
 * started here is stopped in t.after().
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import type { Page } from 'playwright-core';
import { bucketCount, samplePhaseNs, type LatencyKind } from '@blkheat/shared-types';
import {
  type AgentProcess,
  type BrowserSession,
  type CleanupContext,
  fuseUnavailable,
  hook,
  type Hooked,
  idle,
  launchFor,
  screenshot,
  startAgentInTempDir,
  startFio,
} from '@blkheat/testkit';

export interface TestContextLike extends CleanupContext {
  skip(message?: string): void;
  diagnostic(message: string): void;
}

/** Skips unless root (BPF, loop devices) and, when asked, FUSE and fio are available. */
export function canRun(t: TestContextLike, needs: { fuse?: boolean; fio?: boolean } = {}): boolean {
  if (process.getuid?.() !== 0) {
    t.skip('needs root: the agent loads BPF programs; tests create loop devices');
    return false;
  }
  if (needs.fuse) {
    const why = fuseUnavailable();
    if (why) {
      t.skip(`needs FUSE: ${why}`);
      return false;
    }
  }
  if (needs.fio && spawnSync('fio', ['--version']).status !== 0) {
    t.skip('needs fio (apt-get install fio)');
    return false;
  }
  return true;
}

/** The real agent (`blkheat serve`) on a free port with a temporary data directory. */
export function startAgent(t: CleanupContext, args: readonly string[] = []): Promise<AgentProcess> {
  return startAgentInTempDir(t, args, 'blkheat-e2e-web-');
}

/**
 * Opens the dashboard served by `url` and waits until it is connected and idle. `onPage` runs
 * before the page loads (e.g. to listen to its WebSocket traffic from the first message).
 */
export async function openDashboard(
  t: CleanupContext,
  url: string,
  opts: { live?: boolean; onPage?: (page: Page) => void } = {},
): Promise<BrowserSession> {
  const s = await launchFor(t, { width: 1400, height: 1000, colorScheme: 'dark' });
  opts.onPage?.(s.page);
  await s.page.goto(url);
  if (opts.live !== false)
    await waitFor(
      s.page,
      'the dashboard to connect',
      () =>
        hook(s.page)
          .state()
          .then((st) => st.connection === 'live'),
      30_000,
    );
  await idle(s.page);
  return s;
}

/** A row of the samples table, with its latency in the phase the page shows (samplePhaseNs). */
export interface ListedSample {
  readonly dev: string | null;
  readonly ts: number;
  readonly pid: number;
  readonly comm: string | null;
  /** Its latency in `phase`; null where the sample has none (e.g. its submission not seen). */
  readonly ns: number | null;
}

/** The rows of the samples table as the page lists them. */
export async function listedSamples(page: Page, phase: LatencyKind): Promise<ListedSample[]> {
  const rows = await page.locator('[data-testid=samples-table] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => {
      const num = (name: string): number | null => {
        const v = tr.getAttribute(name);
        return v === null || v === '' ? null : Number(v);
      };
      return {
        dev: tr.getAttribute('data-dev'),
        ts: num('data-ts-us') ?? NaN,
        pid: num('data-pid') ?? NaN,
        comm: tr.getAttribute('data-comm'),
        d_ns: num('data-d-ns') ?? NaN,
        q_ns: num('data-q-ns'),
        w_ns: num('data-w-ns'),
      };
    }),
  );
  return rows.map(({ d_ns, q_ns, w_ns, ...r }) => ({ ...r, ns: samplePhaseNs({ d_ns, q_ns, w_ns }, phase) }));
}

/** Polls `ok` until it holds; fails naming what it waited for. */
export async function waitFor(page: Page, what: string, ok: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await ok()) return;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await page.waitForTimeout(250);
  }
}

/** Drags across a disk's heat map from one fraction of its width to another, at mid height. */
export async function dragAcross(page: Page, diskName: string, from: number, to: number): Promise<void> {
  const overlay = page.locator(`[data-testid="heatmap-overlay-${diskName}"]`);
  await overlay.scrollIntoViewIfNeeded(); // a lower disk's heat map may be below the fold
  const box = await overlay.boundingBox();
  if (!box) throw new Error(`no heat map for ${diskName}`);
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * from, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * to, y, { steps: 12 });
  await page.mouse.up();
}

/**
 * fio in the background until the test ends (direct I/O: every request reaches the device).
 * Returns the fio process (with `--thread` in `args` its pid is the one submitting the I/O).
 */
export function backgroundFio(t: CleanupContext, device: string, args: readonly string[]): ChildProcess {
  // Raw fio options come last, so they override the job's defaults (fio keeps the last value).
  return startFio({ filename: device, rw: 'read', runtimeS: 600, extra: args }, t).child;
}

/** One heat map column as drawn: its start second and its count over the asked buckets. */
export interface DrawnColumn {
  readonly ts: number;
  /** Sum of the cells' counts, or null when the column is not on screen. */
  readonly count: number | null;
}

/**
 * What a disk's heat map shows, column by column, for the columns starting in [from, to),
 * summed over buckets [lo, hi]: read through the hook's cellCenter → cellAt (the cell under
 * each cell centre, scrolled into the viewport), so it sees exactly what a pointer would.
 * Buckets outside the drawn latency range are not on screen and count as nothing.
 */
export async function heatmapColumns(
  page: Page,
  dev: string,
  from: number,
  to: number,
  lo = 0,
  hi = bucketCount() - 1,
): Promise<DrawnColumn[]> {
  return page.evaluate(
    ({ dev, from, to, lo, hi }) => {
      const h = (globalThis as unknown as Hooked).__blkheat;
      const step = h.state().step ?? 1;
      const out: { ts: number; count: number | null }[] = [];
      for (let ts = Math.floor(from / step) * step; ts < to; ts += step) {
        let count = 0;
        let seen = false;
        for (let b = lo; b <= hi; b++) {
          const at = h.cellCenter(dev, ts, b);
          if (!at) continue;
          const cell = h.cellAt(at.x, at.y);
          if (!cell || cell.dev !== dev) continue;
          seen = true;
          count += cell.count;
        }
        out.push({ ts, count: seen ? count : null });
      }
      return out;
    },
    { dev, from, to, lo, hi },
  );
}

export async function shot(page: Page, name: string): Promise<string> {
  return screenshot(page, name, 'dashboard');
}

/**
 * Time-range click latency, measured in the page: from the click event's timeStamp (when the
 * browser received the input, so the time the event waited behind a busy main thread counts)
 * to the end of the first frame the dashboard's render scheduler drew after the click, with the
 * view at the new span. That frame's paint is what the person sees change; "the end" is taken
 * from a MessageChannel message posted from a requestAnimationFrame callback of that frame,
 * which runs once the frame's rendering (the scheduler's draws and the paint) is done.
 *
 * The scheduler starts views in a frame for a few ms (FRAME_BUDGET_MS), so a redraw of every disk
 * may span a few frames: the click → idle figure (every fetch answered, every view drawn; idle()
 * waits for two quiet frames, ~33 ms of it) gives the whole cost beside the first paint.
 */
import type { Page } from 'playwright-core';
import { hook, type Hooked } from '@blkheat/testkit';

/** One click as the page timed it (ms from the click event's timeStamp). */
export interface ClickTiming {
  readonly label: string;
  /** Until the click handler ran (input delay). */
  readonly handlerMs: number;
  /** Until the first painted frame with the new span. */
  readonly paintMs: number;
  /** Until the page was idle again (undefined: not within 30 s). */
  readonly idleMs: number | undefined;
}

interface ClickRecord {
  label: string;
  eventTs: number;
  handlerAt: number;
  paintAt?: number;
  idleAt?: number;
  idleError?: string;
}

/** The page globals used here (this file is type-checked without the DOM library). */
interface ClickGlobals {
  __bhClicks?: ClickRecord[];
  document: { addEventListener(type: string, cb: (ev: ClickEvent) => void, capture: boolean): void };
  requestAnimationFrame(cb: () => void): number;
  MessageChannel: new () => { port1: { onmessage: (() => void) | null }; port2: { postMessage(v: unknown): void } };
}

interface ClickEvent {
  readonly timeStamp: number;
  readonly target: { closest?(selector: string): { getAttribute(name: string): string | null } | null } | null;
}

/**
 * Installs the page's click timer for the span buttons (data-testid "span-<label>", whose span
 * in seconds `spans` gives). Idempotent per document.
 */
export async function installClickTimer(page: Page, spans: Readonly<Record<string, number>>): Promise<void> {
  await page.evaluate((spanOf) => {
    const g = globalThis as unknown as ClickGlobals & Hooked;
    if (g.__bhClicks) return;
    const records: ClickRecord[] = [];
    g.__bhClicks = records;
    // Capture phase on the document: runs before React's handler (on the root), in the same
    // dispatch, so the scheduler frame count read here is from before the view changed.
    g.document.addEventListener(
      'click',
      (ev) => {
        const button = ev.target?.closest?.('[data-testid^="span-"]');
        const label = button?.getAttribute('data-testid')?.slice('span-'.length);
        if (label === undefined) return;
        const span = spanOf[label];
        const h = g.__blkheat;
        const rec: ClickRecord = { label, eventTs: ev.timeStamp, handlerAt: performance.now() };
        records.push(rec);
        const framesBefore = h.renderStats().frames;
        const channel = new g.MessageChannel();
        const shown = (): boolean => {
          const st = h.state();
          return st.following && Math.round(st.view.to - st.view.from) === span;
        };
        channel.port1.onmessage = () => {
          // After the frame's rendering: did the scheduler draw since the click, with the new span?
          if (h.renderStats().frames > framesBefore && shown()) {
            rec.paintAt = performance.now();
            h.idle(30_000).then(
              () => (rec.idleAt = performance.now()),
              (e: unknown) => (rec.idleError = String(e)),
            );
            return;
          }
          g.requestAnimationFrame(() => channel.port2.postMessage(0));
        };
        g.requestAnimationFrame(() => channel.port2.postMessage(0));
      },
      true,
    );
  }, spans);
}

/** Clicks the span button `label` and returns the page's timing of it (after the page is idle again). */
export async function timeClick(page: Page, label: string): Promise<ClickTiming> {
  const button = page.locator(`[data-testid="span-${label}"]`);
  const box = await button.boundingBox();
  if (!box) throw new Error(`no span button ${label} on the page`);
  const index = await page.evaluate(() => (globalThis as unknown as ClickGlobals).__bhClicks?.length ?? 0);
  // A plain mouse click at the button (no actionability round trips between press and release).
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForFunction(
    (i) => {
      const r = (globalThis as unknown as ClickGlobals).__bhClicks?.[i];
      return r !== undefined && (r.idleAt !== undefined || r.idleError !== undefined);
    },
    index,
    { timeout: 45_000, polling: 100 },
  );
  const r = await page.evaluate((i) => (globalThis as unknown as ClickGlobals).__bhClicks?.[i], index);
  if (!r || r.paintAt === undefined) throw new Error(`the click on ${label} was not timed`);
  return {
    label,
    handlerMs: r.handlerAt - r.eventTs,
    paintMs: r.paintAt - r.eventTs,
    idleMs: r.idleAt === undefined ? undefined : r.idleAt - r.eventTs,
  };
}

/** Waits for the page to be idle, tolerating a page that stays busy (a loaded machine): returns whether it was. */
export async function settle(page: Page, timeoutMs: number): Promise<boolean> {
  try {
    await hook(page).idle(timeoutMs);
    return true;
  } catch {
    return false;
  }
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

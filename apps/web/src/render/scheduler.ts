/**
 * Coalesces every redraw into one requestAnimationFrame (speedscope/Perfetto): views call
 * `invalidate(key)` as often as they like (a store change, a mouse move, a live frame) and
 * each dirty view draws once per frame, in registration order. A frame stops starting views
 * once FRAME_BUDGET_MS has gone by and draws the rest first in the next frame: a new window
 * (an imported snapshot, a zoom) redraws every panel of every disk, which together can hold the
 * main thread for a few hundred ms on a slow machine, and the page must stay responsive while
 * it does. Also keeps timings per view, which the test hook and the benchmark read, and what
 * each view drew last (the one registry of what is on the page's canvases, which the test hook
 * and a panel's own hit-testing read back).
 */

/**
 * A kind of drawing a view records: `T` is what it drew (its viewport, scales, data), `C` the
 * canvas it drew it on (typed by the views: this file knows no DOM). Compared by identity, so
 * each kind is one constant, next to the view that records it.
 */
export class DrawnKind<T, C extends object = object> {
  /** Type only (nothing is emitted): ties the kind to the types of its records. */
  declare private readonly record?: Drawn<T, C>;
  constructor(readonly name: string) {}
}

/** What a view drew last of one kind, and on which canvas. */
export interface Drawn<T, C extends object = object> {
  readonly canvas: C;
  readonly value: T;
}

/** How a view's draw says what it drew: the latest record of a kind replaces the one before. */
export type RecordDrawn = <T, C extends object>(kind: DrawnKind<T, C>, canvas: C, value: T) => void;

/** A view's draw; `record` keeps what it drew for the test hook (views with nothing to read back ignore it). */
export type DrawFn = (record: RecordDrawn) => void;

interface Entry {
  readonly draw: () => void;
  readonly order: number;
}

/** Where frames come from (the page's animation frames and clock unless a test says otherwise). */
export interface FrameClock {
  requestFrame(cb: () => void): number;
  now(): number;
}

const TIMING_WINDOW = 240;
/**
 * Views drawn in one frame start within this many ms of its start (at least one view per
 * frame, so every view gets drawn): the slowest frame's script is about this plus one view's
 * draw. The frame's task also carries the browser's layout, paint and commit, and the commit
 * hands over every canvas drawn in the frame (0.5-8 ms each in chromium without a GPU; only
 * those drawn since pageContext, render/contract.ts): with 24 ms, the first frames of an
 * imported snapshot's window committed up to 30 canvases each and ran over 50 ms.
 *
 * On a loaded machine a task's wall time is its CPU time several times over: under bench/web's
 * live load (fio and the loop devices' kernel threads on both CPUs) the page's main thread
 * waited in the run queue 2.5-4 times as long as it ran, and a frame of 3 ms of CPU took up to
 * 143 ms. So a frame must hold little CPU, not just little wall time. At 12 ms, a live second's
 * redraw came in about four frames of 6-14 ms of CPU each; in three runs of the live section, 11,
 * 8 and 8 tasks took over 50 ms in 30 s (and 1 in a profiled run). At 4 ms it comes in more,
 * smaller frames: 3, 7, 5 and 4 over 50 ms in four runs, for the same CPU in all (1.0-1.1 s of
 * 30 s; the canvases handed over are the same, only spread), and the time-range click's first
 * paint median fell from ~60 to ~30 ms. At 2 ms: 2 and 9, and more CPU (1.3 s in one run).
 */
export const FRAME_BUDGET_MS = 4;

/** The page's animation frames, typed here: this file is also compiled without the DOM library, for its unit test. */
const page = globalThis as unknown as { requestAnimationFrame(cb: () => void): number };

const pageClock: FrameClock = {
  requestFrame: (cb) => page.requestAnimationFrame(cb),
  now: () => performance.now(),
};

export class FrameScheduler {
  private readonly views = new Map<string, Entry>();
  private readonly dirty = new Set<string>();
  private handle: number | undefined;
  private order = 0;
  private readonly timings = new Map<string, number[]>();
  /** Draws of each view since start (its timings keep the last TIMING_WINDOW only). */
  private readonly draws = new Map<string, number>();
  /** Views the last frame had no time for, in the order they go next. */
  private leftOver: string[] = [];
  /** Frames drawn since start (for fps measurements). */
  frames = 0;

  constructor(
    private readonly clock: FrameClock = pageClock,
    private readonly budgetMs = FRAME_BUDGET_MS,
  ) {}

  /**
   * What each view drew last: per view, one record per kind (the canvas and what is on it). Made
   * by the view's own draw and dropped with the view when it unregisters (its canvases unmount),
   * so no canvas is held longer than the page holds it, and nothing stale is read back.
   */
  private readonly drawnBy = new Map<string, Map<DrawnKind<unknown>, Drawn<unknown>>>();

  register(key: string, draw: DrawFn): () => void {
    const record: RecordDrawn = (kind, canvas, value) => {
      let kinds = this.drawnBy.get(key);
      if (!kinds) this.drawnBy.set(key, (kinds = new Map()));
      kinds.set(kind, { canvas, value });
    };
    this.views.set(key, { draw: () => draw(record), order: this.order++ });
    this.invalidate(key);
    return () => {
      this.views.delete(key);
      this.dirty.delete(key);
      this.drawnBy.delete(key);
    };
  }

  /** What view `key` drew last of `kind` (undefined: none since it registered, or it is gone). */
  drawn<T, C extends object>(key: string, kind: DrawnKind<T, C>): Drawn<T, C> | undefined {
    // Recorded under this very kind (the map's key), so the record has its types.
    return this.drawnBy.get(key)?.get(kind) as Drawn<T, C> | undefined;
  }

  invalidate(key: string): void {
    if (!this.views.has(key)) return;
    this.dirty.add(key);
    this.schedule();
  }

  /** Invalidates every view whose key starts with `prefix` (all views for ''). */
  invalidateMatching(prefix = ''): void {
    for (const key of this.views.keys()) if (key.startsWith(prefix)) this.dirty.add(key);
    if (this.dirty.size > 0) this.schedule();
  }

  /** True while a frame is scheduled or views are dirty. */
  get busy(): boolean {
    return this.handle !== undefined || this.dirty.size > 0;
  }

  /** Recent draw durations (ms) of one view. */
  timingsOf(key: string): readonly number[] {
    return this.timings.get(key) ?? [];
  }

  /** How many times one view was drawn since start: the newest draws' durations are the last of timingsOf. */
  drawsOf(key: string): number {
    return this.draws.get(key) ?? 0;
  }

  private schedule(): void {
    if (this.handle === undefined) this.handle = this.clock.requestFrame(this.onFrame);
  }

  private readonly onFrame = (): void => {
    this.handle = undefined;
    this.run();
  };

  private run(): void {
    // Views left over by the last frame first (still in order), then the rest: a view dirtied
    // again every frame (a hover) cannot keep the ones after it from ever drawing.
    const byOrder = (a: string, b: string): number => (this.views.get(a)?.order ?? 0) - (this.views.get(b)?.order ?? 0);
    const waiting = this.leftOver.filter((key) => this.dirty.has(key));
    const rest = [...this.dirty].filter((key) => !waiting.includes(key)).sort(byOrder);
    const keys = [...waiting, ...rest];
    this.leftOver = [];
    const start = this.clock.now();
    for (const [i, key] of keys.entries()) {
      // Over budget: the views not started yet draw in the next frame, first.
      if (i > 0 && this.clock.now() - start >= this.budgetMs) {
        this.leftOver = keys.slice(i);
        break;
      }
      // Taken off before drawing: a view that invalidates itself while it draws goes again next frame.
      this.dirty.delete(key);
      const entry = this.views.get(key);
      if (!entry) continue;
      const t0 = this.clock.now();
      try {
        entry.draw();
      } catch (e) {
        // One broken view must not stop the others (or the next frame) from drawing.
        console.error(`blkheat: drawing ${key} failed`, e);
      }
      let list = this.timings.get(key);
      if (!list) this.timings.set(key, (list = []));
      list.push(this.clock.now() - t0);
      this.draws.set(key, (this.draws.get(key) ?? 0) + 1);
      if (list.length > TIMING_WINDOW) list.splice(0, list.length - TIMING_WINDOW);
    }
    this.frames++;
    if (this.dirty.size > 0) this.schedule();
  }
}

export const scheduler = new FrameScheduler();

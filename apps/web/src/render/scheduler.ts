/**
 * Coalesces every redraw into one requestAnimationFrame (speedscope/Perfetto): views call
 * `invalidate(key)` as often as they like (a store change, a mouse move, a live frame) and
 * each dirty view draws once per frame, in registration order. Also keeps timings per view,
 * which the test hook and the benchmark read.
 */

export type DrawFn = () => void;

interface Entry {
  readonly draw: DrawFn;
  readonly order: number;
}

const TIMING_WINDOW = 240;

export class FrameScheduler {
  private readonly views = new Map<string, Entry>();
  private readonly dirty = new Set<string>();
  private handle: number | undefined;
  private order = 0;
  private readonly timings = new Map<string, number[]>();
  private readonly afterFrame = new Set<() => void>();
  /** Frames drawn since start (for fps measurements). */
  frames = 0;

  register(key: string, draw: DrawFn): () => void {
    this.views.set(key, { draw, order: this.order++ });
    this.invalidate(key);
    return () => {
      this.views.delete(key);
      this.dirty.delete(key);
    };
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

  /** Calls `fn` after the next frame has drawn (once). */
  onAfterFrame(fn: () => void): void {
    this.afterFrame.add(fn);
  }

  /** Recent draw durations (ms) of one view. */
  timingsOf(key: string): readonly number[] {
    return this.timings.get(key) ?? [];
  }

  /** Draws every dirty view now (tests, exports); normally the animation frame does it. */
  flush(): void {
    if (this.handle !== undefined) {
      cancelAnimationFrame(this.handle);
      this.handle = undefined;
    }
    this.run();
  }

  private schedule(): void {
    if (this.handle === undefined) this.handle = requestAnimationFrame(this.onFrame);
  }

  private readonly onFrame = (): void => {
    this.handle = undefined;
    this.run();
  };

  private run(): void {
    const keys = [...this.dirty].sort((a, b) => (this.views.get(a)?.order ?? 0) - (this.views.get(b)?.order ?? 0));
    this.dirty.clear();
    for (const key of keys) {
      const entry = this.views.get(key);
      if (!entry) continue;
      const t0 = performance.now();
      try {
        entry.draw();
      } catch (e) {
        // One broken view must not stop the others (or the next frame) from drawing.
        console.error(`blkheat: drawing ${key} failed`, e);
      }
      let list = this.timings.get(key);
      if (!list) this.timings.set(key, (list = []));
      list.push(performance.now() - t0);
      if (list.length > TIMING_WINDOW) list.splice(0, list.length - TIMING_WINDOW);
    }
    this.frames++;
    const after = [...this.afterFrame];
    this.afterFrame.clear();
    for (const fn of after) fn();
  }
}

export const scheduler = new FrameScheduler();

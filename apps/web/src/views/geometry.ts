/**
 * Where drawings are on the page. A heat map's geometry maps client points to cells and back,
 * from its canvas's client rect and a render context: the one in force now for pointer gestures
 * (useDiskDrawing binds them), the one it was drawn with for the test hook. `placed` reads what
 * a view drew (the scheduler's registry) with where its canvas is now (after any scroll).
 */
import { apply, invert } from '../model/coords.js';
import type { RenderContext } from '../render/contract.js';
import { type Drawn, type DrawnKind, scheduler } from '../render/scheduler.js';

export interface HeatGeometry {
  /** The cell at a client point, or undefined outside the plot. */
  hit(clientX: number, clientY: number): { col: number; bucket: number; t: number; u: number } | undefined;
  /** Client point at the centre of the cell holding (ts, bucket). */
  centre(ts: number, bucket: number): { x: number; y: number } | undefined;
}

/** A heat map's client rect and render context (its step is the columns'), read at each use; undefined: none. */
export type GeometrySource = () => { rect: DOMRect; rc: RenderContext } | undefined;

export function heatGeometry(source: GeometrySource): HeatGeometry {
  return {
    hit(clientX, clientY) {
      const g = source();
      if (!g) return undefined;
      const x = clientX - g.rect.left;
      const y = clientY - g.rect.top;
      if (x < 0 || y < 0 || x >= g.rect.width || y >= g.rect.height) return undefined;
      const t = apply(invert(g.rc.time), x);
      const u = apply(invert(g.rc.bucket), y);
      return { t, u, col: Math.floor(t / g.rc.step), bucket: Math.floor(u) };
    },
    centre(ts, bucket) {
      const g = source();
      if (!g) return undefined;
      const col = Math.floor(ts / g.rc.step);
      const x = apply(g.rc.time, (col + 0.5) * g.rc.step);
      const y = apply(g.rc.bucket, bucket + 0.5);
      if (x < 0 || x > g.rect.width || y < 0 || y > g.rect.height) return undefined;
      return { x: g.rect.left + x, y: g.rect.top + y };
    },
  };
}

/** What view `key` drew last of `kind`, and where its canvas is now (undefined: not drawn, or gone). */
export function placed<T>(
  key: string,
  kind: DrawnKind<T, HTMLCanvasElement>,
): (Drawn<T, HTMLCanvasElement> & { rect: DOMRect }) | undefined {
  const d = scheduler.drawn(key, kind);
  return d && { ...d, rect: d.canvas.getBoundingClientRect() };
}

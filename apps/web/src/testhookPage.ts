/**
 * How the test hook (testhook.ts) reads the page: where a heat map cell is in the viewport
 * (scrolling it into view), and the colour of a canvas's pixel under a point.
 */
import { useData } from './store/dataStore.js';
import { heatmapGeometry } from './views/geometry.js';

export type Rgba = [number, number, number, number];

/** The pointer-event layer of a disk's heat map. */
function overlayOf(dev: string): HTMLElement | null {
  return document.querySelector<HTMLElement>(`section.disk-row[data-dev="${CSS.escape(dev)}"] canvas.overlay`);
}

export function inViewport(p: { x: number; y: number }): boolean {
  return p.x >= 0 && p.y >= 0 && p.x < window.innerWidth && p.y < window.innerHeight;
}

/**
 * The centre of a drawn cell in viewport coordinates, scrolling the page as needed: first the
 * heat map into view, then (if the cell is still off screen, or under something else such as
 * a notice) the cell to the middle of the viewport.
 */
export function cellInViewport(dev: string, ts: number, bucket: number): { x: number; y: number } | undefined {
  const g = heatmapGeometry(dev);
  const el = overlayOf(dev);
  if (!g || !el) return undefined;
  let p = g.centre(ts, bucket);
  if (!p) return undefined; // not drawn: outside the time window or the latency range
  if (!inViewport(p)) {
    el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    p = g.centre(ts, bucket);
  }
  const covered = (q: { x: number; y: number }): boolean => document.elementFromPoint(q.x, q.y) !== el;
  if (p && (!inViewport(p) || covered(p))) {
    const dx = p.x < 0 || p.x >= window.innerWidth ? p.x - window.innerWidth / 2 : 0;
    window.scrollBy(dx, p.y - window.innerHeight / 2);
    p = g.centre(ts, bucket);
  }
  return p && inViewport(p) ? p : undefined;
}

/** RGBA at a client point of a disk's canvas `<prefix>-<name>` (device pixels), or undefined outside it. */
export function canvasPixel(prefix: string, dev: string, x: number, y: number): Rgba | undefined {
  const name = useData.getState().disks.find((d) => d.dev === dev)?.name ?? dev;
  return pixelOf(document.querySelector<HTMLCanvasElement>(`[data-testid="${prefix}-${CSS.escape(name)}"]`), x, y);
}

/** RGBA of the device pixel under css point (x, y) of a canvas drawn in a `width` × `height` css box. */
export function pixelInBox(canvas: HTMLCanvasElement, x: number, y: number, width: number, height: number): Rgba | undefined {
  const px = Math.floor((x / width) * canvas.width);
  const py = Math.floor((y / height) * canvas.height);
  const d = canvas.getContext('2d')?.getImageData(px, py, 1, 1).data;
  return d ? [d[0] ?? 0, d[1] ?? 0, d[2] ?? 0, d[3] ?? 0] : undefined;
}

/** RGBA at a client point of a canvas (device pixels), or undefined outside it. */
export function pixelOf(canvas: HTMLCanvasElement | null, x: number, y: number): Rgba | undefined {
  if (!canvas) return undefined;
  const r = canvas.getBoundingClientRect();
  if (x < r.left || y < r.top || x >= r.right || y >= r.bottom) return undefined;
  return pixelInBox(canvas, x - r.left, y - r.top, r.width, r.height);
}

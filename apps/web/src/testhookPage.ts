/**
 * How the test hook (testhook*.ts) reads the page: whether a point is in the viewport, and the
 * colour of a canvas's pixel under a point.
 */
import { pageContext } from './render/contract.js';
import { useData } from './store/pipelineStore.js';

export type Rgba = [number, number, number, number];

export function inViewport(p: { x: number; y: number }): boolean {
  return p.x >= 0 && p.y >= 0 && p.x < window.innerWidth && p.y < window.innerHeight;
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
  const d = pageContext(canvas)?.getImageData(px, py, 1, 1).data;
  return d ? [d[0] ?? 0, d[1] ?? 0, d[2] ?? 0, d[3] ?? 0] : undefined;
}

/** RGBA at a client point of a canvas (device pixels), or undefined outside it. */
export function pixelOf(canvas: HTMLCanvasElement | null, x: number, y: number): Rgba | undefined {
  if (!canvas) return undefined;
  const r = canvas.getBoundingClientRect();
  if (x < r.left || y < r.top || x >= r.right || y >= r.bottom) return undefined;
  return pixelInBox(canvas, x - r.left, y - r.top, r.width, r.height);
}

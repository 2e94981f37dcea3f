/**
 * Where each disk's heat map is on the page, so pointer positions map to cells (and tests can
 * find a cell to click). Each heat map registers a function returning its current geometry.
 */
import { apply, invert } from '../model/coords.js';
import type { RenderContext } from '../render/contract.js';

export interface HeatGeometry {
  /** The cell at a client point, or undefined outside the plot. */
  hit(clientX: number, clientY: number): { col: number; bucket: number; t: number; u: number } | undefined;
  /** Client point at the centre of the cell holding (ts, bucket). */
  centre(ts: number, bucket: number): { x: number; y: number } | undefined;
}

type Source = () => { rect: DOMRect; rc: RenderContext; step: number } | undefined;

const registry = new Map<string, Source>();

export function registerGeometry(dev: string, source: Source): () => void {
  registry.set(dev, source);
  return () => {
    if (registry.get(dev) === source) registry.delete(dev);
  };
}

export function heatmapGeometry(dev: string): HeatGeometry | undefined {
  const source = registry.get(dev);
  if (!source) return undefined;
  return {
    hit(clientX, clientY) {
      const g = source();
      if (!g) return undefined;
      const x = clientX - g.rect.left;
      const y = clientY - g.rect.top;
      if (x < 0 || y < 0 || x >= g.rect.width || y >= g.rect.height) return undefined;
      const t = apply(invert(g.rc.time), x);
      const u = apply(invert(g.rc.bucket), y);
      return { t, u, col: Math.floor(t / g.step), bucket: Math.floor(u) };
    },
    centre(ts, bucket) {
      const g = source();
      if (!g) return undefined;
      const col = Math.floor(ts / g.step);
      const x = apply(g.rc.time, (col + 0.5) * g.step);
      const y = apply(g.rc.bucket, bucket + 0.5);
      if (x < 0 || x > g.rect.width || y < 0 || y > g.rect.height) return undefined;
      return { x: g.rect.left + x, y: g.rect.top + y };
    },
  };
}

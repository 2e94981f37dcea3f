/**
 * Keeps the compare charts of one disk and class drawn (render/compare.ts) through the
 * scheduler: registered as `compare:<dev>:<class>`, which app.ts invalidates when the compare
 * state changes (and every view on a theme change). Each chart records what it drew (its
 * viewport and the top of its scale) in the scheduler's registry, for the test hook, which
 * reads pixels where the page put them.
 */
import { type RefObject, useEffect } from 'react';
import type { Viewport } from '../model/coords.js';
import type { CompareDisk, CompareRow } from '../model/compare.js';
import { paintCompareDifference, paintCompareOverlay } from '../render/compare.js';
import { type DrawFn, DrawnKind, scheduler } from '../render/scheduler.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { renderTheme, resolvedTheme } from './theme.js';
import type { Size } from './useElementSize.js';

export const OVERLAY_HEIGHT = 56;
export const DIFFERENCE_HEIGHT = 50;

/** A compare chart as drawn: its viewport and the top of its scale (the overlay's share, the difference's ±share). */
export interface DrawnCompareChart {
  readonly vp: Viewport;
  readonly max: number;
}

export const COMPARE_OVERLAY_DRAWN = new DrawnKind<DrawnCompareChart, HTMLCanvasElement>('compare-overlay');
export const COMPARE_DIFFERENCE_DRAWN = new DrawnKind<DrawnCompareChart, HTMLCanvasElement>('compare-difference');

/** The scheduler key of the charts of `dev` and class `c` (or ALL_CLASSES). */
export const compareViewKey = (dev: string, c: string): string => `compare:${dev}:${c}`;

/** The disk and row of the compare state now. */
function current(dev: string, c: string): { disk: CompareDisk; row: CompareRow } | undefined {
  const disk = useData.getState().compare?.disks.find((d) => d.dev === dev);
  const row = disk?.rows.find((r) => r.c === c);
  return disk && row ? { disk, row } : undefined;
}

/** Registers the two charts of a row; `width()` is their CSS width (kept by the row as it is laid out). */
export function useCompareCharts(
  dev: string,
  c: string,
  overlay: RefObject<HTMLCanvasElement | null>,
  difference: RefObject<HTMLCanvasElement | null>,
  size: RefObject<Size>,
): void {
  useEffect(() => {
    const draw: DrawFn = (record) => {
      const a = overlay.current;
      const b = difference.current;
      const got = current(dev, c);
      const schema = useData.getState().compare?.schema;
      const width = size.current.width;
      if (!a || !b || !got || !schema || width <= 0) return;
      const ui = useUi.getState();
      const theme = renderTheme(resolvedTheme(ui.theme));
      const { disk, row } = got;
      // Half a bucket of room either side, so the outermost bars are not cut by the edge.
      const axis = { from: 0, to: 1, uLo: disk.lo - 0.5, uHi: Math.max(disk.hi, disk.lo + 1) + 0.5, width, dpr: ui.dpr };
      const vpA = { ...axis, height: OVERLAY_HEIGHT };
      const vpB = { ...axis, height: DIFFERENCE_HEIGHT };
      const p50 = row.deltas.find((d) => d.label === 'p50');
      paintCompareOverlay(
        a,
        vpA,
        {
          baseline: row.baseline,
          comparison: row.comparison,
          baselineP50: p50?.baseline?.seconds,
          comparisonP50: p50?.comparison?.seconds,
          maxShare: disk.maxShare,
          schema,
        },
        theme,
      );
      paintCompareDifference(b, vpB, { difference: row.difference, maxDiff: disk.maxDiff, schema }, theme);
      record(COMPARE_OVERLAY_DRAWN, a, { vp: vpA, max: disk.maxShare });
      record(COMPARE_DIFFERENCE_DRAWN, b, { vp: vpB, max: disk.maxDiff });
    };
    return scheduler.register(compareViewKey(dev, c), draw);
  }, [dev, c, overlay, difference, size]);
}

/**
 * The test hook's per-panel readers over the scheduler's registry of what was drawn (each view
 * records it as it draws, render/scheduler.ts): the size × latency panel, the offset scatter,
 * the throughput strips, the I/O pressure strip and the compare charts, and the pixels drawn on them.
 */
import { ALL_CLASSES } from './model/compare.js';
import { apply, bucketToCssX } from './model/coords.js';
import { differenceToCss, overlayShareToCss } from './render/compare.js';
import { scheduler } from './render/scheduler.js';
import { useData } from './store/pipelineStore.js';
import type { BlkheatHook } from './testhookApi.js';
import { canvasPixel, inViewport, pixelInBox, pixelOf } from './testhookPage.js';
import { COMPARE_DIFFERENCE_DRAWN, COMPARE_OVERLAY_DRAWN, compareViewKey } from './views/compareCharts.js';
import { placed } from './views/geometry.js';
import { OFFSET_SCATTER_DRAWN, OFFSET_SCATTER_VIEW } from './views/OffsetScatterPanel.js';
import { CGROUP_PRESSURE_VIEW, PRESSURE_DRAWN, PRESSURE_VIEW } from './views/PressureStrip.js';
import { SIZE_LATENCY_DRAWN, SIZE_LATENCY_VIEW, sizeCellCentre } from './views/SizeLatencyPanel.js';
import { THROUGHPUT_DRAWN } from './views/throughputStrip.js';
import { diskViews } from './views/useDiskDrawing.js';

/** A panel's canvas by its test id (null: not on the page). */
const panelCanvas = (testId: string): HTMLCanvasElement | null => document.querySelector<HTMLCanvasElement>(`[data-testid="${testId}"]`);

/** The offset scatter's latency legend ends as shown (null: no latency legend on the page). */
function legendEnds(): { lo: string; hi: string } | null {
  const text = (end: string): string | null | undefined => document.querySelector(`[data-testid="offset-legend-${end}"]`)?.textContent;
  const lo = text('lo');
  const hi = text('hi');
  return typeof lo === 'string' && typeof hi === 'string' ? { lo, hi } : null;
}

/** Scrolls a panel's canvas to the middle of the viewport (the accessors that answer client points do). */
function scrollToPanel(testId: string): void {
  panelCanvas(testId)?.scrollIntoView({ block: 'center', inline: 'nearest' });
}

export function panelReads(): Pick<
  BlkheatHook,
  | 'sizePanel'
  | 'sizeCellCenter'
  | 'sizePixelAt'
  | 'offsetScatter'
  | 'offsetPixelAt'
  | 'throughput'
  | 'throughputPixelAt'
  | 'pressure'
  | 'pressurePixelAt'
  | 'comparePixel'
> {
  return {
    sizePanel() {
      const v = scheduler.drawn(SIZE_LATENCY_VIEW, SIZE_LATENCY_DRAWN)?.value.view;
      return v ? { dev: v.dev, lo: v.uLo, hi: v.uHi, max: v.scale.max } : undefined;
    },
    sizeCellCenter(s, bucket) {
      scrollToPanel('size-heatmap');
      const p = sizeCellCentre(s, bucket);
      return p && inViewport(p) ? p : undefined;
    },
    sizePixelAt(x, y) {
      return pixelOf(panelCanvas('size-heatmap'), x, y);
    },
    offsetScatter() {
      scrollToPanel('offset-canvas');
      const d = placed(OFFSET_SCATTER_VIEW, OFFSET_SCATTER_DRAWN);
      const offset = useData.getState().offset;
      if (!d) return undefined;
      const { vp, colouring: c, rows } = d.value;
      return {
        dev: offset?.dev ?? '',
        from: vp.from,
        to: vp.to,
        sectorLo: vp.sectorLo,
        sectorHi: vp.sectorHi,
        left: d.rect.left,
        top: d.rect.top,
        width: vp.width,
        height: vp.height,
        dpr: vp.dpr,
        by: c.by,
        ...(c.by === 'latency' ? { uLo: c.uLo, uHi: c.uHi } : { classColours: Object.fromEntries(c.colours) }),
        truncated: offset?.truncated ?? false,
        pick: offset?.pick ?? 'spread',
        ...(offset?.matched !== undefined ? { matched: offset.matched } : {}),
        samples: [...rows],
        legend: legendEnds(),
      };
    },
    offsetPixelAt(x, y) {
      return pixelOf(panelCanvas('offset-canvas'), x, y);
    },
    throughput(dev) {
      const t = scheduler.drawn(diskViews(dev).tput, THROUGHPUT_DRAWN)?.value;
      if (!t) return undefined;
      const list = (a: Float64Array): (number | null)[] => Array.from(a, (v) => (Number.isNaN(v) ? null : v));
      const s = t.series;
      return {
        from: s.col0 * s.step,
        step: s.step,
        iops: list(s.iops),
        mbps: list(s.mbps),
        queue: list(s.queue),
        oldest: list(s.oldest),
        scales: { ...t.scales },
        captions: { ...t.captions },
        painted: t.painted,
      };
    },
    throughputPixelAt(dev, x, y) {
      return canvasPixel('throughput', dev, x, y);
    },
    pressure(cgroup) {
      const p = scheduler.drawn(cgroup ? CGROUP_PRESSURE_VIEW : PRESSURE_VIEW, PRESSURE_DRAWN)?.value;
      if (!p) return undefined;
      const list = (a: Float64Array): (number | null)[] => Array.from(a, (v) => (Number.isNaN(v) ? null : v));
      const s = p.series;
      return { from: s.col0 * s.step, step: s.step, some: list(s.some), full: list(s.full), scale: p.scale };
    },
    pressurePixelAt(x, y) {
      return pixelOf(panelCanvas('pressure'), x, y);
    },
    comparePixel(dev, c, chart, bucket, value) {
      const key = compareViewKey(dev, c === 'all' ? ALL_CLASSES : c);
      const got = scheduler.drawn(key, chart === 'overlay' ? COMPARE_OVERLAY_DRAWN : COMPARE_DIFFERENCE_DRAWN);
      if (!got) return undefined;
      const { vp, max } = got.value;
      const x = apply(bucketToCssX(vp), bucket + 0.5);
      const y = (chart === 'overlay' ? overlayShareToCss : differenceToCss)(vp, max)(value);
      if (!(x >= 0 && x < vp.width && y >= 0 && y < vp.height)) return undefined;
      return pixelInBox(got.canvas, x, y, vp.width, vp.height);
    },
  };
}

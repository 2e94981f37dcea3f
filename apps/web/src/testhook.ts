/**
 * Installs `window.__blkheat` (see testhookApi.ts). Read-only: it never changes the view (only
 * `cellCenter` may scroll the page, to bring the cell it names into the viewport).
 */
import { unrecordedRuns } from './model/gaps.js';
import { resolvedTheme } from './views/theme.js';
import { scheduler } from './render/scheduler.js';
import type { DataLayer } from './store/data.js';
import { useData } from './store/dataStore.js';
import { windowKnown, windowScale } from './store/dataWindow.js';
import { useNotices } from './store/notices.js';
import { useUi } from './store/store.js';
import type { BlkheatHook, HookCell, HookCompareRow } from './testhookApi.js';
import type { AgentClient } from './net/client.js';
import { heatmapGeometry } from './views/geometry.js';
import { canvasPixel, cellInViewport, inViewport, pixelInBox, pixelOf } from './testhookPage.js';
import { incidentMarks, stuckOf } from './views/incidents.js';
import { drawnThroughput } from './views/throughputStrip.js';
import { ALL_CLASSES } from './model/compare.js';
import { apply, bucketToCssX } from './model/coords.js';
import { differenceToCss, overlayShareToCss } from './render/compare.js';
import { drawnCompare } from './views/compareCharts.js';
import { drawnOffsetScatter } from './views/OffsetScatterPanel.js';
import { drawnSizeLatency, sizeCellCentre } from './views/SizeLatencyPanel.js';

declare global {
  interface Window {
    __blkheat?: BlkheatHook;
  }
}

function frame(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => r()));
}

function cellOf(dev: string, col: number, bucket: number): HookCell | undefined {
  const cur = useData.getState().window;
  const m = cur?.matrices.get(dev);
  if (!cur || !m) return undefined;
  return { dev, col, from: col * m.step, to: (col + 1) * m.step, bucket, count: m.count(col, bucket) };
}

/** What the hook reads besides the stores, from app.ts. */
export interface TestHookSources {
  /** The agent client app.ts started (for its gap and reconnect counters). */
  readonly connection: Pick<AgentClient, 'gaps' | 'reconnects'>;
  /** The data layer (for the work under way and the live log's coverage). */
  readonly data: Pick<DataLayer, 'pending' | 'live'>;
}

export function installTestHook({ connection, data }: TestHookSources): void {
  const hook: BlkheatHook = {
    version: 1,
    async idle(timeoutMs = 30_000) {
      const t0 = performance.now();
      let quiet = 0;
      // Two consecutive quiet frames: React commits and the redraws they cause settle too.
      while (quiet < 2) {
        await frame();
        const busy = data.pending > 0 || scheduler.busy;
        quiet = busy ? 0 : quiet + 1;
        if (performance.now() - t0 > timeoutMs) throw new Error(`blkheat: not idle after ${timeoutMs} ms (pending ${data.pending})`);
      }
    },
    state() {
      const s = useUi.getState();
      const d = useData.getState();
      const sum = d.summary;
      const cur = d.window;
      return {
        mode: d.mode,
        connection: s.connection,
        following: d.visible.following,
        view: { from: d.visible.from, to: d.visible.to },
        summaryRange: sum ? { from: sum.from, to: sum.to } : undefined,
        step: cur?.step,
        schema: cur ? { ...cur.schema } : undefined,
        latencyWindow: cur ? { lo: cur.yLo, hi: cur.yHi } : undefined,
        window: cur ? { from: cur.from, to: cur.to } : undefined,
        shownDisks: [...d.shownDevs],
        classes: [...s.classes],
        cgroup: s.cgroup,
        kind: s.kind,
        colour: s.colour,
        norm: s.norm,
        lastFrameTs: d.lastFrameTs,
        liveCovered:
          data.live.coveredFrom !== undefined && data.live.coveredTo !== undefined
            ? { from: data.live.coveredFrom, to: data.live.coveredTo }
            : undefined,
        gaps: connection.gaps,
        reconnects: connection.reconnects,
        theme: resolvedTheme(s.theme),
      };
    },
    counts() {
      const s = useData.getState();
      const sum = s.summary;
      const out: Record<string, ReturnType<BlkheatHook['counts']>[string]> = {};
      if (!sum) return out;
      for (const dev of s.shownDevs) {
        const h = sum.perDisk.get(dev);
        const d = sum.disks.get(dev);
        out[dev] = {
          name: s.disks.find((x) => x.dev === dev)?.name ?? dev,
          histogram: h?.total ?? 0,
          completed: d?.n ?? 0,
          byClass: { ...(d?.byClass ?? {}) },
          dropped: d?.dropped ?? 0,
        };
      }
      return out;
    },
    histogram(dev) {
      const h = useData.getState().summary?.perDisk.get(dev);
      return h ? [...h.hist] : [];
    },
    percentiles(dev) {
      const h = useData.getState().summary?.perDisk.get(dev);
      const out: Record<string, number> = {};
      if (h) for (const q of h.quantiles) out[q.label] = q.seconds;
      return out;
    },
    classCounts() {
      const out: Record<string, number> = {};
      for (const c of useData.getState().summary?.classes ?? []) out[c.c] = c.n;
      return out;
    },
    cgroups(dev) {
      return (useData.getState().summary?.cgroups.get(dev)?.rows ?? []).map((r) => ({ g: r.g, n: r.n }));
    },
    sizeLatency(dev) {
      const m = useData.getState().summary?.sizes.get(dev);
      if (!m) return undefined;
      const cells: { s: number; bucket: number; count: number }[] = [];
      m.sizes.forEach((s, i) => {
        const h = m.hists[i] as Float64Array;
        for (let b = 0; b < h.length; b++) if ((h[b] as number) > 0) cells.push({ s, bucket: b, count: h[b] as number });
      });
      return { sizes: m.sizes.map((s, i) => ({ s, n: m.counts[i] ?? 0 })), cells };
    },
    sizePanel() {
      const d = drawnSizeLatency();
      return d ? { dev: d.view.dev, lo: d.view.uLo, hi: d.view.uHi, max: d.view.scale.max } : undefined;
    },
    sizeCellCenter(s, bucket) {
      document.querySelector('[data-testid="size-heatmap"]')?.scrollIntoView({ block: 'center', inline: 'nearest' });
      const p = sizeCellCentre(s, bucket);
      return p && inViewport(p) ? p : undefined;
    },
    offsetScatter() {
      document.querySelector('[data-testid="offset-canvas"]')?.scrollIntoView({ block: 'center', inline: 'nearest' });
      const d = drawnOffsetScatter();
      const offset = useData.getState().offset;
      if (!d) return undefined;
      const c = d.colouring;
      return {
        dev: offset?.dev ?? '',
        from: d.vp.from,
        to: d.vp.to,
        sectorLo: d.vp.sectorLo,
        sectorHi: d.vp.sectorHi,
        left: d.rect.left,
        top: d.rect.top,
        width: d.vp.width,
        height: d.vp.height,
        dpr: d.vp.dpr,
        by: c.by,
        ...(c.by === 'latency' ? { uLo: c.uLo, uHi: c.uHi } : { classColours: Object.fromEntries(c.colours) }),
        truncated: offset?.truncated ?? false,
        samples: [...d.rows],
      };
    },
    offsetPixelAt(x, y) {
      return pixelOf(document.querySelector<HTMLCanvasElement>('[data-testid="offset-canvas"]'), x, y);
    },
    sizePixelAt(x, y) {
      return pixelOf(document.querySelector<HTMLCanvasElement>('[data-testid="size-heatmap"]'), x, y);
    },
    cellAt(x, y) {
      for (const dev of useData.getState().shownDevs) {
        const g = heatmapGeometry(dev);
        const hit = g?.hit(x, y);
        if (hit) return cellOf(dev, hit.col, hit.bucket);
      }
      return undefined;
    },
    cellCenter(dev, ts, bucket) {
      return cellInViewport(dev, ts, bucket);
    },
    scale(dev) {
      const norm = useUi.getState().norm;
      const sc = windowScale(useData.getState().window, dev, norm);
      return sc ? { max: sc.max, kind: sc.kind, shared: norm === 'shared' } : undefined;
    },
    unrecorded(dev, from, to) {
      const cur = useData.getState().window;
      const m = cur?.matrices.get(dev);
      if (!cur || !m) return [];
      const out: number[] = [];
      for (const [a, b] of unrecordedRuns(
        m,
        Math.floor(from / m.step),
        Math.ceil(to / m.step),
        windowKnown(cur, useUi.getState().agent?.historyFrom),
      )) {
        for (let c = a; c < b; c++) out.push(c * m.step);
      }
      return out;
    },
    hottestCell(dev, minBucket = 0, maxBucket = Infinity) {
      const d = useData.getState();
      const m = d.window?.matrices.get(dev);
      if (!m) return undefined;
      const c0 = Math.max(m.start, Math.floor(d.visible.from / m.step));
      const c1 = Math.min(m.end, Math.ceil(d.visible.to / m.step));
      let best: HookCell | undefined;
      for (let c = c0; c < c1; c++) {
        for (let r = Math.max(0, minBucket); r <= Math.min(m.rows - 1, maxBucket); r++) {
          const n = m.count(c, r);
          if (n > 0 && (!best || n > best.count)) best = { dev, col: c, from: c * m.step, to: (c + 1) * m.step, bucket: r, count: n };
        }
      }
      return best;
    },
    pixelAt(dev, x, y) {
      return canvasPixel('heatmap', dev, x, y);
    },
    throughput(dev) {
      const t = drawnThroughput(dev);
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
      };
    },
    stuck(dev) {
      const d = useData.getState();
      const thresholdS = useUi.getState().stuck;
      const now = stuckOf(d.lastFrame, d.mode, dev, thresholdS);
      return {
        thresholdS,
        frameTs: d.mode === 'live' ? d.lastFrame?.ts : undefined,
        count: now?.count ?? 0,
        atLeast: now?.atLeast ?? false,
        oldestS: now?.oldestS ?? 0,
        ios: now?.ios.map((io) => ({ ...io })) ?? [],
        spans: (incidentMarks(dev)?.stuck ?? []).map((x) => ({ start: x.start, end: x.end, ageS: x.ageS, pid: x.pid })),
      };
    },
    faults(dev) {
      const step = useData.getState().window?.step ?? 1;
      return (incidentMarks(dev)?.faults ?? []).map((f) => ({
        ts: f.col * step,
        failed: f.failed,
        byStatus: { ...f.byStatus },
        requeues: f.requeues,
      }));
    },
    overlayPixelAt(dev, x, y) {
      return canvasPixel('heatmap-overlay', dev, x, y);
    },
    throughputPixelAt(dev, x, y) {
      return canvasPixel('throughput', dev, x, y);
    },
    compare() {
      const st = useData.getState().compare;
      if (!st) return undefined;
      const disks: Record<string, Record<string, HookCompareRow>> = {};
      for (const d of st.disks) {
        const rows: Record<string, HookCompareRow> = {};
        for (const r of d.rows) {
          const percentiles: Record<string, { baseline: number | null; comparison: number | null; delta: number | null }> = {};
          for (const p of r.deltas)
            percentiles[p.label] = { baseline: p.baseline ?? null, comparison: p.comparison ?? null, delta: p.delta ?? null };
          rows[r.c === ALL_CLASSES ? 'all' : r.c] = {
            baseline: [...r.baseline.hist],
            comparison: [...r.comparison.hist],
            baselineTotal: r.baseline.total,
            comparisonTotal: r.comparison.total,
            percentiles,
            difference: r.difference ? [...r.difference] : null,
          };
        }
        disks[d.dev] = rows;
      }
      return {
        status: st.status,
        error: st.error,
        followsView: st.choice.comparison === undefined,
        baseline: st.baseline ? { ...st.baseline } : undefined,
        comparison: st.comparison ? { ...st.comparison } : undefined,
        disks,
      };
    },
    comparePixel(dev, c, chart, bucket, value) {
      const got = drawnCompare(dev, c === 'all' ? ALL_CLASSES : c);
      if (!got) return undefined;
      const part = chart === 'overlay' ? got.overlay : got.difference;
      const vp = part.vp;
      const x = apply(bucketToCssX(vp), bucket + 0.5);
      const y =
        chart === 'overlay' ? overlayShareToCss(vp, got.overlay.maxShare)(value) : differenceToCss(vp, got.difference.maxDiff)(value);
      if (!(x >= 0 && x < vp.width && y >= 0 && y < vp.height)) return undefined;
      return pixelInBox(part.canvas, x, y, vp.width, vp.height);
    },
    selection() {
      const sel = useData.getState().selection;
      return sel
        ? {
            dev: sel.dev,
            from: sel.from,
            to: sel.to,
            bucketLo: sel.bucketLo,
            bucketHi: sel.bucketHi,
            sizeClass: sel.sizeClass,
            cgroup: sel.cgroup,
          }
        : undefined;
    },
    samples() {
      const s = useData.getState().samples;
      return { status: s.status, count: s.rows.length, truncated: s.truncated, error: s.error };
    },
    notices() {
      return useNotices.getState().notices.map((n) => ({ kind: n.kind, text: n.text }));
    },
    renderStats() {
      const timings: Record<string, readonly number[]> = {};
      for (const key of [
        'time-axis',
        ...useData.getState().shownDevs.flatMap((d) => [`heat:${d}`, `hist:${d}`, `overlay:${d}`, `tput:${d}`]),
      ]) {
        timings[key] = scheduler.timingsOf(key);
      }
      return { frames: scheduler.frames, timings };
    },
  };
  Object.defineProperty(window, '__blkheat', { value: Object.freeze(hook), configurable: false, writable: false });
}

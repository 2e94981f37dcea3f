/**
 * The test hook's reads of the summary of the visible range (the pipeline store's): per disk
 * counts, histogram, percentiles, cgroups and size × latency cells, and counts per class.
 */
import { useData } from './store/pipelineStore.js';
import { shownQuantiles } from './store/shownWindow.js';
import type { BlkheatHook } from './testhookApi.js';

export function summaryReads(): Pick<BlkheatHook, 'counts' | 'histogram' | 'percentiles' | 'classCounts' | 'cgroups' | 'sizeLatency'> {
  return {
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
      // As the page shows them: bounds, or exact from sampled I/Os (store/shownWindow.ts).
      const out: Record<string, number> = {};
      for (const q of shownQuantiles(useData.getState(), dev)) out[q.label] = q.seconds;
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
  };
}

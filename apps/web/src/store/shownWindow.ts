/**
 * The data window as the pipeline store publishes it (`window`): read-only, and what views, the
 * test hook and the summary ask of it and of its summary (which seconds are known to be recorded,
 * which colour scale a disk is drawn with, a disk's percentiles as shown). In store/ with the
 * store that publishes it, so a view reads the window without importing the pipeline; the mutable
 * window and its owners are in pipeline/bufferedWindow.ts.
 */
import type { BucketSchema, Frame } from '@blkheat/shared-types';
import type { ColourNorm, CountScale } from '../model/colour.js';
import { type Known, NOTHING_KNOWN } from '../model/gaps.js';
import type { QuantileValue } from '../model/percentiles.js';
import { type SummaryRankSamples, withSampledRanks } from '../model/sampledRanks.js';
import type { Summary } from '../model/summary.js';
import type { DataWindow } from '../pipeline/bufferedWindow.js';

/** The window as everyone but its two owners sees it: read-only. */
export type ShownWindow = {
  readonly [K in keyof DataWindow]: DataWindow[K] extends Map<infer A, infer B>
    ? ReadonlyMap<A, B>
    : DataWindow[K] extends Frame[]
      ? readonly Frame[]
      : DataWindow[K];
};

/**
 * What the window knows about which seconds were recorded (see model/gaps.ts); `historyFrom`:
 * the agent's oldest second, when live.
 */
export function windowKnown(w: ShownWindow | undefined, historyFrom: number | undefined): Known {
  if (!w || !(w.knownFrom < w.coveredTo)) return NOTHING_KNOWN;
  // Before the agent's oldest second nothing was recorded, by definition: when what we know
  // reaches back to it, the seconds before it are "no data" too, not a quiet disk.
  const from = historyFrom !== undefined && w.knownFrom <= historyFrom ? -Infinity : w.knownFrom;
  return { from, to: w.coveredTo };
}

/** The colour scale a disk's heat map is drawn with (its own, or the shared one). */
export function windowScale(w: ShownWindow | undefined, dev: string, norm: ColourNorm): CountScale | undefined {
  if (!w) return undefined;
  return norm === 'shared' ? w.scale : (w.scales.get(dev) ?? w.scale);
}

/**
 * A disk's percentiles of the visible range as the page shows them: the summary's (bounds from its
 * histogram) made exact where sampled I/Os give the latency at the rank (model/sampledRanks.ts;
 * pipeline/rankSamples.ts asks for them, for that summary only). One function, so the row head,
 * the histogram's marks, the worst-disk line, the PNG and the test hook show the same values.
 */
export function shownQuantiles(
  s: { readonly summary: Summary | undefined; readonly rankSamples: SummaryRankSamples | undefined; readonly schema: BucketSchema },
  dev: string,
): QuantileValue[] {
  const h = s.summary?.perDisk.get(dev);
  if (!h) return [];
  const sampled = s.rankSamples && s.rankSamples.summary === s.summary ? s.rankSamples.byDev.get(dev) : undefined;
  return withSampledRanks(h.quantiles, h.hist, sampled, s.schema);
}

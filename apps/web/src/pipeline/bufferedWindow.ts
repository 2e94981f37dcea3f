/**
 * The buffered data window: frames for a range [from, to) at one step, ~3× the visible span
 * (Perfetto's buffered window), and what is derived from them per shown disk (heat map,
 * percentile track, colour scale). In pipeline/ because only two parts of the pipeline touch it
 * as it is (mutable): the window loader (windowLoader.ts) makes it and grows it while live, the
 * heat maps part (heatMaps.ts) derives the rest. Everyone else reads it as published in the
 * pipeline store, read-only: store/shownWindow.ts.
 */
import { type BucketSchema, bucketCount, type Frame, type LatencyKind } from '@blkheat/shared-types';
import type { CountScale } from '../model/colour.js';
import { buildMatrix, type HeatMatrix, type MatrixFilter } from '../model/heatmatrix.js';
import type { PercentileTrack } from '../model/percentiles.js';

export interface DataWindow {
  readonly id: number;
  /** The bucket schema of the frames (the source's when the window was made): one matrix row per bucket. */
  readonly schema: BucketSchema;
  /** The step asked for (the agent may answer with a coarser `step`). */
  readonly requestedStep: number;
  readonly step: number;
  from: number;
  to: number;
  /** Grows with live frames (ring expires the oldest columns). */
  following: boolean;
  frames: Frame[];
  /** Frames for every second before this are in `frames`. */
  coveredTo: number;
  /**
   * From here to `coveredTo`, a second without a frame was not recorded (Infinity: nothing is
   * known that way, as in a snapshot, whose idle steps are simply left out).
   */
  knownFrom: number;
  /** Made before the source could answer (not connected yet, or the fetch failed): load again once it can. */
  provisional: boolean;
  // ---- derived (heatMaps.ts) ----
  filterKey: string;
  devs: readonly string[];
  matrices: Map<string, HeatMatrix>;
  tracks: Map<string, PercentileTrack>;
  yLo: number;
  yHi: number;
  /** One colour scale for every disk (the 'shared' choice), fitted to the busiest cell. */
  scale: CountScale;
  /** Each disk's own colour scale, fitted to its visible cells (the default, 'disk'). */
  scales: Map<string, CountScale>;
}

/** What a window is made from (the rest of DataWindow is derived). */
export type WindowSource = Pick<
  DataWindow,
  'schema' | 'step' | 'requestedStep' | 'from' | 'to' | 'following' | 'frames' | 'coveredTo' | 'knownFrom' | 'provisional'
>;

/** The filter a window's heat maps were built for, as a key (kind, classes and the cgroup applied). */
export function filterKey(kind: LatencyKind, classes: readonly string[], cgroup?: string): string {
  return `${kind}|${[...classes].sort().join(',')}|${cgroup === undefined ? '' : JSON.stringify(cgroup)}`;
}

/** One disk's heat map of a window. */
export function matrixOf(w: WindowSource, filter: MatrixFilter): HeatMatrix {
  const rows = bucketCount(w.schema);
  return buildMatrix(w.frames, { from: w.from, to: w.to, step: w.step, rows, filter, extraColumns: w.following ? 2 : 0 });
}

export function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

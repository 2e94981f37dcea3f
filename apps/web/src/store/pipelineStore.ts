/**
 * The pipeline store (zustand): what the data pipeline's parts (pipeline/) derive from the source
 * and the UI store, one slice per part, each written only by its owner (a part gets the store
 * typed as its own `SliceStore`, so it cannot set another slice's fields). Views and the test
 * hook read it (useData); nobody else writes it. The bulk data (frames, matrices) stays in the
 * published window object (shownWindow.ts); version counters tell React and the renderers to look
 * again. In store/, not pipeline/, so that views read what the pipeline made without importing it.
 */
import { create } from 'zustand';
import type { StoreApi } from 'zustand';
import {
  BUCKET_SCHEMA,
  type BucketSchema,
  type DiskInfo,
  type FleetRanking,
  type FleetStuck,
  type Frame,
  type HostInfo,
  type IoSample,
  type LatencyKind,
  type SamplePick,
  type SamplesKept,
} from '@blkheat/shared-types';
import type { CellSelection } from '../model/samples.js';
import type { SummaryRankSamples } from '../model/sampledRanks.js';
import type { Summary } from '../model/summary.js';
import type { CompareChoice, CompareDisk, TimeRange } from '../model/compare.js';
import { DEFAULT_SPAN } from '../model/urlstate.js';
import { liveView, type ViewState } from '../model/view.js';
import type { ShownWindow } from './shownWindow.js';

export interface SnapshotInfo {
  readonly name: string;
  /** The snapshot format version (4 and later may carry submit-wait timing). */
  readonly version: number;
  readonly host: HostInfo;
  readonly agent: string;
  readonly createdAt: string;
  readonly note?: string | undefined;
  readonly range: { readonly from: number; readonly to: number; readonly step: number };
  readonly samples: number;
}

export interface SamplesState {
  readonly status: 'idle' | 'loading' | 'done' | 'error';
  readonly rows: readonly IoSample[];
  readonly truncated: boolean;
  readonly error?: string | undefined;
  /** Which samples the agent keeps for those seconds (protocol 5; absent from a snapshot or an older agent). */
  readonly kept?: SamplesKept | undefined;
}

/** The source (pipeline/source.ts): live or an imported snapshot. */
export interface SourceSlice {
  mode: 'live' | 'snapshot';
  snapshot: SnapshotInfo | undefined;
  /** Disks the agent (or the snapshot) knows, in device order. */
  disks: readonly DiskInfo[];
  /** The bucket schema of the source on screen (BUCKET_SCHEMA before the agent's first hello). */
  schema: BucketSchema;
  /** Newest second received live. */
  lastFrameTs: number | undefined;
  /** The newest live frame (what is in flight now: stuck I/O is judged on it). */
  lastFrame: Frame | undefined;
  /**
   * Some frame of the source carries submit-wait timing (protocol 4 `t`/`w`): the total and
   * submit phases can be shown (model/phase.ts; app.ts resolves the phase on screen from it).
   */
  submitTiming: boolean;
  /**
   * The phases besides device latency some frame of the source splits by cgroup (protocol 4: its
   * `cg` carries `q`, `w`, `t`): the cgroup filter applies to them too (model/cgroups.ts).
   */
  cgroupPhases: readonly LatencyKind[];
}

/** The window loader (pipeline/windowLoader.ts). */
export interface WindowSlice {
  /** The data window on screen (mutated in place while live: `dataVersion` says when). */
  window: ShownWindow | undefined;
  /** The time window on screen: the UI's view, following the source's edge while live. */
  visible: ViewState;
}

/** The heat maps part (pipeline/heatMaps.ts): matrices, latency window and colour scales of the window. */
export interface HeatMapSlice {
  /** Disks drawn ("MAJ:MIN", in display order): the user's choice, else every disk with I/O. */
  shownDevs: readonly string[];
  /** Latency buckets the heat maps show (their height follows it). */
  latencyRows: number;
  /** Bumped when frames, matrices or colour scales change (renderers redraw). */
  dataVersion: number;
}

/** The summary of the visible range (pipeline/visibleSummary.ts). */
export interface SummarySlice {
  /** Histograms, percentiles and breakdowns of the visible range (the last computed one while a new one is summed). */
  summary: Summary | undefined;
  /** Bumped when a summary run finished (panels re-render, colour scales were refitted). */
  summaryVersion: number;
}

/**
 * Sampled I/Os at the visible range's percentile ranks (pipeline/rankSamples.ts): what makes a
 * percentile exact (model/sampledRanks.ts). For the summary they were asked for only.
 */
export interface RankSamplesSlice {
  rankSamples: SummaryRankSamples | undefined;
}

/** The cells the user selected and their sampled I/Os (pipeline/selectedSamples.ts). */
export interface SamplesSlice {
  selection: CellSelection | undefined;
  samples: SamplesState;
}

/** The offset scatter's samples (pipeline/offsetSamples.ts): one disk, the visible range in whole seconds. */
export interface OffsetSamplesState extends SamplesState {
  readonly dev: string;
  readonly from: number;
  readonly to: number;
  readonly kind: LatencyKind;
  /** How the rows were chosen when more matched (`truncated`): spread over the range, or the oldest (an agent before `pick`). */
  readonly pick: SamplePick;
  /** How many matched in all, when known (a spread answer says). */
  readonly matched?: number | undefined;
}

export interface OffsetSamplesSlice {
  offset: OffsetSamplesState | undefined;
}

/** A range as summed: aligned to the step of its frames. */
export interface ComparedRange extends TimeRange {
  readonly step: number;
}

export interface CompareState {
  /** 'loading': a range is being fetched, or waits for the agent; 'error': it could not be read. */
  readonly status: 'loading' | 'ready' | 'error';
  readonly error?: string | undefined;
  /** While loading, what it waits for (the agent, when a range is not in the page and it is not connected). */
  readonly waitingFor?: string | undefined;
  /** What the user chose (`comparison` undefined: the visible range). */
  readonly choice: CompareChoice;
  /** The ranges summed (whole steps); undefined while loading. */
  readonly baseline: ComparedRange | undefined;
  readonly comparison: ComparedRange | undefined;
  readonly kind: LatencyKind;
  readonly schema: BucketSchema;
  /** Per disk (the shown ones, in order): its classes compared. */
  readonly disks: readonly CompareDisk[];
}

/** The compare (A/B) view (pipeline/comparison.ts). */
export interface CompareSlice {
  /** The two ranges compared and their distributions; undefined when no baseline is set. */
  compare: CompareState | undefined;
}

/** A fleet view's ranked table (pipeline/fleetRanking.ts), as the fleet server answered it. */
export interface FleetRankingState {
  /** 'loading': asked (the last answer, if any, stays in `ranking` meanwhile). */
  readonly status: 'loading' | 'ready' | 'error';
  readonly error?: string | undefined;
  /** The range and filters asked, as the route's parameters (what the page asked, to compare). */
  readonly params: Readonly<Record<string, string | number>>;
  readonly ranking: FleetRanking | undefined;
}

export interface FleetRankingSlice {
  /** Undefined: not a fleet view, or a snapshot on screen. */
  fleetRanking: FleetRankingState | undefined;
}

/** A fleet view's "Stuck now" list (pipeline/fleetStuck.ts), as the fleet server last answered it. */
export interface FleetStuckState {
  /** 'loading': asked again (the last answer, if any, stays meanwhile). */
  readonly status: 'loading' | 'ready' | 'error';
  readonly error?: string | undefined;
  readonly answer: FleetStuck | undefined;
  /** This page's clock (ms) when `answer` arrived: ages grow from it. */
  readonly receivedAtMs: number;
}

export interface FleetStuckSlice {
  /** Undefined: not a fleet view, or a snapshot on screen. */
  fleetStuck: FleetStuckState | undefined;
}

export type DataState = SourceSlice &
  WindowSlice &
  HeatMapSlice &
  SummarySlice &
  RankSamplesSlice &
  SamplesSlice &
  OffsetSamplesSlice &
  CompareSlice &
  FleetRankingSlice &
  FleetStuckSlice;

/** What one part of the pipeline may do with the pipeline store: read all of it, write its own slice. */
export interface SliceStore<Slice> {
  getState(): DataState;
  setState(partial: Partial<Slice> | ((s: DataState) => Partial<Slice>)): void;
}

export type DataStore = StoreApi<DataState>;

export const NO_SAMPLES: SamplesState = Object.freeze({ status: 'idle', rows: [], truncated: false });

export function createDataStore() {
  return create<DataState>()(() => ({
    mode: 'live',
    snapshot: undefined,
    disks: [],
    schema: BUCKET_SCHEMA,
    lastFrameTs: undefined,
    lastFrame: undefined,
    submitTiming: false,
    cgroupPhases: [],
    window: undefined,
    visible: liveView(Math.floor(Date.now() / 1000), DEFAULT_SPAN),
    shownDevs: [],
    latencyRows: 24,
    dataVersion: 0,
    summary: undefined,
    summaryVersion: 0,
    rankSamples: undefined,
    selection: undefined,
    samples: NO_SAMPLES,
    offset: undefined,
    compare: undefined,
    fleetRanking: undefined,
    fleetStuck: undefined,
  }));
}

export const useData = createDataStore();

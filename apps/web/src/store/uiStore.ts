/**
 * The UI store (zustand): what the user chose (the view, filters, colours, tool), what the
 * agent said about itself, and the page's layout (plot width, device pixel ratio); and the hover
 * store (where the pointer is). Only actions (actions.ts) and app.ts write it; the pipeline's
 * parts (pipeline/) read it and never write it. What they derive from it (the window on screen,
 * matrices, summaries, samples) is in the pipeline store (pipelineStore.ts), and app.ts is the
 * one place that wires a change here to the pipeline. In store/ with the other stores views read.
 */
import { create } from 'zustand';
import type { StoreApi } from 'zustand';
import type { AgentStatus, FleetInfo, HostInfo, LatencyKind } from '@blkheat/shared-types';
import type { ColourNorm, ColourScaleKind } from '../model/colour.js';
import type { CompareChoice } from '../model/compare.js';
import type { RankFilter } from '../model/fleetRanking.js';
import type { SampleSortKey } from '../model/samples.js';
import { DEFAULT_STUCK_SECONDS } from '../model/stuck.js';
import { DEFAULT_SPAN } from '../model/urlstate.js';
import { type ViewState, liveView } from '../model/view.js';
import type { ConnectionState } from '../net/client.js';

export type ThemeChoice = 'system' | 'light' | 'dark';
export type Tool = 'zoom' | 'select';

export interface AgentInfo {
  readonly version: string;
  /** The protocol version the agent speaks (its hello's). */
  readonly protocol: number;
  readonly host: HostInfo;
  readonly tiers: readonly number[];
  readonly historyFrom: number;
  /** Set when the server is a fleet view (`blkheat fleet`): where its data comes from. */
  readonly fleet?: FleetInfo | undefined;
}

export interface UiState {
  connection: ConnectionState;
  connectionDetail: string | undefined;
  agent: AgentInfo | undefined;
  /** What the agent last said about itself (a history fault shows as a banner while it lasts). */
  agentStatus: AgentStatus | undefined;
  /**
   * The view the user asked for: following live (the last `span` seconds; `from`/`to` are where
   * the edge was when it was set) or a fixed range. The window on screen is the pipeline store's
   * `visible` (it follows the source's edge).
   */
  view: ViewState;
  /** Span to use when going back to live. */
  liveSpan: number;
  /** Disks the user chose (names or MAJ:MIN); undefined = automatic (every disk with I/O). */
  diskChoice: readonly string[] | undefined;
  classes: readonly string[];
  /**
   * Cgroup filter (a path of DiskFrame.cg): heat maps, histograms and percentiles draw its
   * device latency, samples are kept by their `cg`. Never set together with `classes` (the
   * data has no class split of cgroups).
   */
  cgroup: string | undefined;
  /** The disk the cgroup and size panels show (undefined: the first shown disk). */
  panelDisk: string | undefined;
  /** What colours the offset scatter's points: their latency (the heat map palette) or their class. */
  offsetColour: 'latency' | 'class';
  /** The latency phase the user (or the link) chose; undefined: the default (total when the data has it, else device). */
  kindChoice: LatencyKind | undefined;
  /**
   * The latency phase on screen: the choice, resolved against the data (model/phase.ts:
   * resolvePhase; total and submit wait fall back to device for data before protocol 4). Every
   * view and pipeline part reads this one; actions and app.ts keep it resolved.
   */
  kind: LatencyKind;
  colour: ColourScaleKind;
  /** Colour scale per disk (default) or shared by every disk. */
  norm: ColourNorm;
  percentiles: boolean;
  /** I/O in flight longer than this (seconds) is stuck: its disk's row head turns loud. */
  stuck: number;
  /** The disk ("MAJ:MIN") whose stuck I/Os are listed under its row head, if any. */
  stuckListOf: string | undefined;
  theme: ThemeChoice;
  /** The `?` help (every key and gesture) is open. */
  helpOpen: boolean;
  tool: Tool;
  sampleSort: { key: SampleSortKey; dir: 'asc' | 'desc' };
  /** Compare (A/B): the baseline and, if pinned, the comparison range; undefined = no comparison. */
  compare: CompareChoice | undefined;
  /** A fleet view's ranked table: its label filters (empty: the whole fleet). */
  rankFilter: RankFilter;
  /** Width of the heat map plot area, CSS px (drives the resolution). */
  plotWidth: number;
  /** Device pixel ratio of the screen (drives the resolution and canvas backing stores). */
  dpr: number;
}

/** What a data part may do with the UI store: read it (it never writes it). */
export type UiReader = Pick<StoreApi<UiState>, 'getState'>;

export function createUiStore() {
  const now = Math.floor(Date.now() / 1000);
  return create<UiState>()(() => ({
    connection: 'connecting',
    connectionDetail: undefined,
    agent: undefined,
    agentStatus: undefined,
    view: liveView(now, DEFAULT_SPAN),
    liveSpan: DEFAULT_SPAN,
    diskChoice: undefined,
    classes: [],
    cgroup: undefined,
    panelDisk: undefined,
    offsetColour: 'latency',
    kindChoice: undefined,
    kind: 'device',
    colour: 'log',
    norm: 'disk',
    percentiles: true,
    stuck: DEFAULT_STUCK_SECONDS,
    stuckListOf: undefined,
    theme: 'system',
    helpOpen: false,
    tool: 'zoom',
    sampleSort: { key: 'd_ns', dir: 'desc' },
    compare: undefined,
    rankFilter: {},
    plotWidth: 800,
    dpr: 1,
  }));
}

export const useUi = createUiStore();

/** Where the pointer is over a heat map (its own store: it changes at mouse rate). */
export interface HoverState {
  /** Time under the pointer (synced across every disk's heat map as the cursor). */
  t: number | undefined;
  dev: string | undefined;
  /** Column (absolute) and bucket under the pointer. */
  col: number | undefined;
  bucket: number | undefined;
  /** Pointer position in client coordinates (tooltip placement). */
  clientX: number;
  clientY: number;
  /** Gesture in progress: a zoom band or a selection box, in time × bucket. */
  drag:
    | { kind: 'zoom' | 'box' | 'baseline'; dev: string; t0: number; t1: number; u0: number; u1: number }
    | { kind: 'pan'; dev: string; t0: number; t1: number; u0: number; u1: number }
    | undefined;
}

export const useHover = create<HoverState>()(() => ({
  t: undefined,
  dev: undefined,
  col: undefined,
  bucket: undefined,
  clientX: 0,
  clientY: 0,
  drag: undefined,
}));

/**
 * UI state (zustand): what the user chose and what the agent told us, but not the bulk data.
 * Frames, matrices and bitmaps live in the data manager (`data.ts`) as mutable typed arrays;
 * the store only carries version counters that tell React and the renderers to look again.
 */
import { create } from 'zustand';
import type { AgentStatus, DiskInfo, HostInfo, IoSample, LatencyKind } from '@blkheat/shared-types';
import type { ColourNorm, ColourScaleKind } from '../model/colour.js';
import type { CellSelection, SampleSortKey } from '../model/samples.js';
import { DEFAULT_SPAN } from '../model/urlstate.js';
import { type ViewState, liveView } from '../model/view.js';
import type { ConnectionState } from '../net/client.js';

export type ThemeChoice = 'system' | 'light' | 'dark';
export type Tool = 'zoom' | 'select';

export interface AgentInfo {
  readonly version: string;
  readonly host: HostInfo;
  readonly tiers: readonly number[];
  readonly historyFrom: number;
}

export interface SnapshotInfo {
  readonly name: string;
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
}

export interface Notice {
  readonly id: number;
  readonly kind: 'error' | 'info';
  readonly text: string;
  /** Notices about one thing (e.g. 'snapshot') go away together when it ends. */
  readonly tag?: string | undefined;
}

export interface UiState {
  connection: ConnectionState;
  connectionDetail: string | undefined;
  agent: AgentInfo | undefined;
  /** What the agent last said about itself (a history fault shows as a banner while it lasts). */
  agentStatus: AgentStatus | undefined;
  /** Disks the agent (or the snapshot) knows, in device order. */
  disks: readonly DiskInfo[];
  mode: 'live' | 'snapshot';
  snapshot: SnapshotInfo | undefined;
  view: ViewState;
  /** Span to use when going back to live. */
  liveSpan: number;
  /** Disks the user chose (names or MAJ:MIN); undefined = automatic (every disk with I/O). */
  diskChoice: readonly string[] | undefined;
  /** Disks drawn, resolved by the data manager ("MAJ:MIN", in display order). */
  shownDevs: readonly string[];
  classes: readonly string[];
  kind: LatencyKind;
  colour: ColourScaleKind;
  /** Colour scale per disk (default) or shared by every disk. */
  norm: ColourNorm;
  percentiles: boolean;
  theme: ThemeChoice;
  tool: Tool;
  selection: CellSelection | undefined;
  samples: SamplesState;
  sampleSort: { key: SampleSortKey; dir: 'asc' | 'desc' };
  notices: readonly Notice[];
  /** Bumped when frames/matrices change (renderers redraw). */
  dataVersion: number;
  /** Bumped when histograms/breakdowns were recomputed (React panels re-render). */
  summaryVersion: number;
  /** Newest second received live. */
  lastFrameTs: number | undefined;
  /** Width of the heat map plot area, CSS px (drives the resolution). */
  plotWidth: number;
  /** Latency buckets the heat maps show (their height follows it). */
  latencyRows: number;
}

const now = Math.floor(Date.now() / 1000);

export const useUi = create<UiState>()(() => ({
  connection: 'connecting',
  connectionDetail: undefined,
  agent: undefined,
  agentStatus: undefined,
  disks: [],
  mode: 'live',
  snapshot: undefined,
  view: liveView(now, DEFAULT_SPAN),
  liveSpan: DEFAULT_SPAN,
  diskChoice: undefined,
  shownDevs: [],
  classes: [],
  kind: 'device',
  colour: 'log',
  norm: 'disk',
  percentiles: true,
  theme: 'system',
  tool: 'zoom',
  selection: undefined,
  samples: { status: 'idle', rows: [], truncated: false },
  sampleSort: { key: 'd_ns', dir: 'desc' },
  notices: [],
  dataVersion: 0,
  summaryVersion: 0,
  lastFrameTs: undefined,
  plotWidth: 800,
  latencyRows: 24,
}));

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
    | { kind: 'zoom' | 'box'; dev: string; t0: number; t1: number; u0: number; u1: number }
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

let noticeId = 0;
/** Shows a notice; a `tag` replaces earlier notices with the same tag. */
export function notify(kind: Notice['kind'], text: string, tag?: string): void {
  const id = ++noticeId;
  useUi.setState((s) => ({
    notices: [...s.notices.filter((n) => tag === undefined || n.tag !== tag).slice(-3), { id, kind, text, tag }],
  }));
  if (kind === 'info') setTimeout(() => dismissNotice(id), 6000);
}

export function dismissNotice(id: number): void {
  useUi.setState((s) => ({ notices: s.notices.filter((n) => n.id !== id) }));
}

/** Removes every notice with `tag` (what they were about has ended). */
export function dismissTagged(tag: string): void {
  useUi.setState((s) => (s.notices.some((n) => n.tag === tag) ? { notices: s.notices.filter((n) => n.tag !== tag) } : s));
}

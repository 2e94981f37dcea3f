/**
 * The data pipeline's front: the parts that own the bulk data outside React, composed into one
 * DataLayer (app.ts makes it and routes to it; actions call it). Each part gets the stores and
 * the agent client through its constructor and owns one thing:
 *
 *   source.ts           live frames (frameLog.ts) or an imported snapshot; its schema, disks, edge
 *   windowLoader.ts     the buffered window on screen (bufferedWindow.ts; which one: windowWant.ts):
 *                       taken from the live log, fetched (fetchRange.ts), or sliced
 *   heatMaps.ts         the window's matrices, percentile tracks, latency window, colour scales
 *   visibleSummary.ts   histograms, percentiles and breakdowns of the visible range
 *   rankSamples.ts      sampled I/Os at those percentiles' ranks (exact values where they are all in hand)
 *   offsetSamples.ts    the offset scatter's samples of the panel disk in the visible range
 *   selectedSamples.ts  the selected cells and their sampled I/Os
 *   comparison.ts       compare (A/B): the baseline and comparison ranges' distributions
 *   fleetRanking.ts     a fleet view's ranked table of the visible range (the fleet server's answer)
 *   fleetStuck.ts       a fleet view's "Stuck now" list, asked every scrape interval (the fleet server's answer)
 *   busy.ts             the work under way, which the test hook's idle() waits out
 *
 * They read the UI store (store/uiStore.ts: what the user chose) and publish what they derive
 * into their slices of the pipeline store (store/pipelineStore.ts); none writes the UI store.
 * The pipeline is its own folder, apart from the stores, so that views, which read the stores and
 * call actions, cannot import it (eslint.config.js).
 */
import type { BucketSchema, DiskInfo, Frame, IoSample, Snapshot } from '@blkheat/shared-types';
import type { SourceActivity } from '../model/activity.js';
import type { CellSelection } from '../model/samples.js';
import type { Summary } from '../model/summary.js';
import type { ViewLimits } from '../model/view.js';
import type { DataStore } from '../store/pipelineStore.js';
import type { Notify } from '../store/notices.js';
import type { UiReader } from '../store/uiStore.js';
import { Busy } from './busy.js';
import { Comparison } from './comparison.js';
import { FleetRankingPart, type RankingFetcher } from './fleetRanking.js';
import { FleetStuckPart, type StuckFetcher } from './fleetStuck.js';
import { HeatMaps } from './heatMaps.js';
import { OffsetSamples, type OffsetRequest } from './offsetSamples.js';
import { RankSamples } from './rankSamples.js';
import { SelectedSamples } from './selectedSamples.js';
import { type AgentSource, DataSource, type LiveClock, type LiveLog } from './source.js';
import { VisibleSummary } from './visibleSummary.js';
import { WindowLoader } from './windowLoader.js';

export interface DataLayerOptions {
  /** The UI store: read, never written. */
  readonly ui: UiReader;
  /** The pipeline store the parts publish into. */
  readonly store: DataStore;
  /** The agent connection (none: only the live log and snapshots answer). */
  readonly client?: AgentSource | undefined;
  /** Says what went wrong (a history fetch that failed). */
  readonly notify?: Notify | undefined;
  /** Called when live frames name a disk the agent has not described (yet). */
  readonly onUnknownDisk?: ((dev: string) => void) | undefined;
  /** How a fleet view's ranked table is asked for (app.ts: the fleet server's route); none: no table. */
  readonly fetchRanking?: RankingFetcher | undefined;
  /** How a fleet view's "Stuck now" list is asked for (app.ts: the fleet server's route); none: no list. */
  readonly fetchStuck?: StuckFetcher | undefined;
}

export class DataLayer {
  private readonly ui: UiReader;
  private readonly busy = new Busy();
  /** Live frames and covers not drawn yet while a file is read (whileReadingFile), in order. */
  private held:
    ({ readonly added: readonly Frame[]; readonly newDisk: boolean } | { readonly from: number; readonly to: number })[] | undefined;
  private readonly source: DataSource;
  private readonly heatMaps: HeatMaps;
  private readonly summary: VisibleSummary;
  private readonly windows: WindowLoader;
  private readonly samples: SelectedSamples;
  private readonly comparison: Comparison;
  private readonly offsets: OffsetSamples;
  private readonly ranks: RankSamples;
  private readonly ranking: FleetRankingPart;
  private readonly stuck: FleetStuckPart;

  constructor(o: DataLayerOptions) {
    const { ui, store, client } = o;
    this.ui = ui;
    const busy = this.busy;
    // A fleet's clock moves the live view on, live frames or not (a big fleet sends none).
    this.source = new DataSource({ ui, store, onUnknownDisk: o.onUnknownDisk, onEdgeMoved: () => this.refresh() });
    this.heatMaps = new HeatMaps({ ui, store, source: this.source });
    this.summary = new VisibleSummary({
      ui,
      store,
      source: this.source,
      onSettled: () => this.windows.refitScales(),
      onPublished: (summary) => void this.ranks.update(summary),
    });
    this.windows = new WindowLoader({
      ui,
      store,
      client,
      busy,
      source: this.source,
      heatMaps: this.heatMaps,
      summary: this.summary,
      notify: o.notify,
    });
    this.samples = new SelectedSamples({ store, client, busy, source: this.source });
    this.comparison = new Comparison({ ui, store, client, busy, source: this.source });
    this.offsets = new OffsetSamples({ store, client, busy, source: this.source });
    this.ranks = new RankSamples({ ui, store, client, busy, source: this.source });
    this.ranking = new FleetRankingPart({ ui, store, busy, fetch: o.fetchRanking });
    this.stuck = new FleetStuckPart({ ui, store, fetch: o.fetchStuck });
  }

  // ---------------------------------------------------------------- from the agent client

  /**
   * The agent named its bucket schema and live step (every hello does); a different one drops the
   * live data held and rebuilds everything at the new size. Returns why it cannot be drawn, if it cannot.
   */
  setLiveSchema(schema: BucketSchema, step = 1): string | undefined {
    const { problem, reset } = this.source.setLiveSchema(schema, step);
    if (reset) {
      this.newSource();
      this.windows.bump();
    }
    return problem;
  }

  /** Where the source's live data ends, from its hello (source.ts helloClock): where a live view stands (DataSource.edge). */
  setAgentClock(clock: LiveClock): void {
    this.source.setAgentClock(clock);
  }

  setAgentDisks(disks: readonly DiskInfo[]): void {
    if (this.source.setAgentDisks(disks)) this.windows.refresh();
  }

  /** The agent's disks (kept while a snapshot replaces them on screen). */
  get agentDisks(): readonly DiskInfo[] {
    return this.source.agentDisks;
  }

  /** Live frames from the stream (or a gap fill). */
  onFrames(frames: readonly Frame[]): void {
    const { added, newDisk } = this.source.insertLive(frames);
    if (added.length === 0) return;
    if (this.held) this.held.push({ added, newDisk });
    else this.showLive(added, newDisk);
  }

  /** The agent says every second of [from, to) was sent. */
  onCovered(from: number, to: number): void {
    this.source.coverLive(from, to);
    if (this.held) this.held.push({ from, to });
    else this.windows.coverLive(from, to);
  }

  private showLive(added: readonly Frame[], newDisk: boolean): void {
    this.windows.appendLive(added, newDisk);
    this.comparison.framesArrived();
  }

  /**
   * Runs `work` (a snapshot file being read) with the live view held: live frames are kept as
   * always, but not drawn until it ends, then drawn in the order they came (nothing, when the
   * file became the source: the snapshot is on screen). Reading a big file keeps a worker and
   * its garbage collector busy for a second or two; on a two-CPU machine a live redraw then waits
   * on the compositor, and its commit held the main thread for 200 ms (class-limit.test.ts).
   */
  async whileReadingFile<T>(work: () => Promise<T>): Promise<T> {
    if (this.held) return this.busy.during(work);
    this.held = [];
    try {
      return await this.busy.during(work);
    } finally {
      const held = this.held;
      this.held = undefined;
      for (const h of held) {
        if ('added' in h) this.showLive(h.added, h.newDisk);
        else this.windows.coverLive(h.from, h.to);
      }
    }
  }

  // ---------------------------------------------------------------- from the UI store (app.ts) and actions

  /** Re-evaluates what to show after a change of view, filters, disks, size or source (coalesced). */
  refresh(): void {
    // A fleet's frames asked without queue latency are asked again with it once it is shown.
    if (this.ui.getState().kind === 'queue' && this.source.askQueue()) this.newSource();
    this.windows.refresh();
    this.comparison.refresh();
  }

  /** A fleet view's ranked table follows the visible range, the ranking filters and the source. */
  refreshRanking(): void {
    this.ranking.refresh();
  }

  /** A fleet view's "Stuck now" list polls while the source is a live fleet (its scrape interval). */
  refreshStuck(): void {
    this.stuck.refresh();
  }

  /** A new data window or other disks shown: a comparison following the view is summed again. */
  refreshCompare(): void {
    this.comparison.refresh();
  }

  /** The colour scale kind changed. */
  recolour(): void {
    this.windows.recolour();
  }

  /** Shows a snapshot instead of live data (live frames are still kept); `activity`: see DataSource.loadSnapshot. */
  loadSnapshot(snapshot: Snapshot, name: string, activity?: SourceActivity): void {
    this.source.loadSnapshot(snapshot, name, activity);
    this.newSource();
  }

  /** Back to live; false when no snapshot was open. */
  closeSnapshot(): boolean {
    if (!this.source.closeSnapshot()) return false;
    this.newSource();
    return true;
  }

  /** Nothing of the previous source stays: its window, summary and selection go, and a new window is loaded. */
  private newSource(): void {
    this.windows.reset();
    this.summary.reset();
    this.samples.clear();
    this.offsets.reset();
    this.ranks.reset();
    this.windows.refresh();
    this.comparison.reset();
  }

  selectCells(sel: CellSelection): Promise<void> {
    return this.samples.select(sel);
  }

  /** Shows samples in hand as the selection (a box brushed on the offset scatter). */
  showSamples(sel: CellSelection, rows: readonly IoSample[], truncated: boolean): void {
    this.samples.show(sel, rows, truncated);
  }

  /** Loads the offset scatter's samples (nothing when the same query was asked last). */
  loadOffsetSamples(r: OffsetRequest): Promise<void> {
    return this.offsets.load(r);
  }

  clearSelection(): void {
    this.samples.clear();
  }

  /** Counts `work` as under way (idle() waits for it): an import or export. */
  whileBusy<T>(work: () => Promise<T>): Promise<T> {
    return this.busy.during(work);
  }

  // ---------------------------------------------------------------- reads

  /** Work under way: fetches, debounced loads, heat maps being built, a summary being computed. */
  get pending(): number {
    return this.busy.pending + (this.summary.pending ? 1 : 0);
  }

  /** End of the newest complete second (live) or the snapshot's end. */
  edge(): number {
    return this.source.edge();
  }

  /**
   * The frames held leave a latency phase out: a fleet's, asked for device latency alone until the
   * page shows queue latency (source.ts rangePhases). A snapshot built of them would read as no
   * queue latency.
   */
  get heldWithoutQueue(): boolean {
    return this.source.rangePhases() !== undefined;
  }

  /** How far a view may zoom and pan in this source. */
  limits(): ViewLimits {
    return this.source.limits();
  }

  schema(): BucketSchema {
    return this.source.schema();
  }

  get snapshot(): Snapshot | undefined {
    return this.source.snapshot;
  }

  get live(): LiveLog {
    return this.source.live;
  }

  /** Histograms and breakdowns of the visible range right now (whole columns), computed at once (exports, tests). */
  freshSummary(): Summary | undefined {
    return this.summary.fresh();
  }
}

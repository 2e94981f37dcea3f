/**
 * The compare (A/B) part: the frames of the baseline and comparison ranges the user chose (UI
 * store `compare`; without a pinned comparison, the visible range) and their distributions set
 * against each other (model/compare.ts). Each range is read where its frames are: the imported
 * snapshot (its step), the live log (1 s frames, the last hour), or the agent's history (a
 * `range` request; older tiers answer in coarser, exactly merged steps). A range is summed over
 * the whole steps holding it, and the state says which: that is what the page shows.
 * Recomputed once changes pause; a range reaching the live edge follows the new seconds.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import type { Frame } from '@blkheat/shared-types';
import { alignRange, type CompareChoice, compareDistributions, rangeHistograms, type TimeRange } from '../model/compare.js';
import { diskKinds } from '../model/phase.js';
import { MAX_WINDOW_COLUMNS } from '../model/resolution.js';
import type { ComparedRange, CompareSlice, SliceStore } from '../store/pipelineStore.js';
import type { UiReader } from '../store/uiStore.js';
import type { Busy } from './busy.js';
import type { AgentSource, DataSource } from './source.js';
import { fetchRange } from './fetchRange.js';

/** Changes (view, live seconds) are summed once they pause this long. */
const COMPARE_DELAY = 100;

export interface ComparisonOptions {
  readonly ui: UiReader;
  readonly store: SliceStore<CompareSlice>;
  readonly client?: AgentSource | undefined;
  readonly source: DataSource;
  readonly busy: Busy;
}

type Loaded = { readonly range: ComparedRange; readonly frames: readonly Frame[] } | { readonly error: string } | 'waiting';

export class Comparison {
  private readonly ui: UiReader;
  private readonly store: SliceStore<CompareSlice>;
  private readonly client: AgentSource | undefined;
  private readonly source: DataSource;
  private readonly busy: Busy;
  private timer: { readonly timer: ReturnType<typeof setTimeout>; readonly done: () => void } | undefined;
  /** Bumped to drop a fetch under way (a newer computation started, or the source changed). */
  private gen = 0;
  /** What the published state was computed from; a refresh with the same key and no live edge in it does nothing. */
  private key = '';
  private touchesEdge = false;

  constructor(options: ComparisonOptions) {
    this.ui = options.ui;
    this.store = options.store;
    this.client = options.client;
    this.source = options.source;
    this.busy = options.busy;
  }

  /** The source changed (snapshot opened or closed, new schema): nothing of the old one is kept. */
  reset(): void {
    this.gen++;
    this.key = '';
    this.refresh();
  }

  /** Live frames arrived: a range reaching the edge (or one still waiting for data) is summed again. */
  framesArrived(): void {
    const st = this.store.getState().compare;
    if (st && (this.touchesEdge || st.status !== 'ready')) this.schedule(true);
  }

  /** The choice, the view, the filters or the disks may have changed: recompute once they pause. */
  refresh(): void {
    if (!this.ui.getState().compare) {
      if (this.timer) this.cancelTimer();
      this.gen++;
      this.key = '';
      if (this.store.getState().compare !== undefined) this.store.setState({ compare: undefined });
      return;
    }
    this.schedule(false);
  }

  private cancelTimer(): void {
    if (!this.timer) return;
    clearTimeout(this.timer.timer);
    this.timer.done();
    this.timer = undefined;
  }

  private schedule(force: boolean): void {
    if (this.timer) return; // the pending run reads the state as it is then
    const done = this.busy.start();
    this.timer = {
      done,
      timer: setTimeout(() => {
        this.timer = undefined;
        done();
        void this.run(force);
      }, COMPARE_DELAY),
    };
  }

  /** The comparison range: the pinned one, else the visible range in whole columns of the window (as its summary). */
  private comparisonRange(choice: CompareChoice): TimeRange {
    if (choice.comparison) return choice.comparison;
    const d = this.store.getState();
    // The view the page shows (published with the window), as the summary reads it.
    const v = d.visible;
    return alignRange({ from: v.from, to: v.to }, d.window?.step ?? 1);
  }

  private async run(force: boolean): Promise<void> {
    const ui = this.ui.getState();
    const choice = ui.compare;
    if (!choice) return;
    const comparisonWanted = this.comparisonRange(choice);
    const schema = this.source.schema();
    const devs = this.store.getState().shownDevs;
    const diskKind = diskKinds(this.store.getState().disks);
    const bio = devs.filter((d) => diskKind(d) === 'bio');
    const key = JSON.stringify([choice, comparisonWanted, ui.kind, ui.classes, devs, bio, schema, this.source.snapshot?.range]);
    if (!force && key === this.key && this.store.getState().compare?.status === 'ready') return;
    this.key = key;
    const gen = ++this.gen;
    const pending = { choice, baseline: undefined, comparison: undefined, kind: ui.kind, schema, disks: [] };
    const prev = this.store.getState().compare;
    // Keep what is shown while the same choice is re-summed (live seconds), say "loading" otherwise.
    if (!prev || prev.choice !== choice || prev.kind !== ui.kind) this.store.setState({ compare: { ...pending, status: 'loading' } });
    const [a, b] = await Promise.all([this.load(choice.baseline, gen), this.load(comparisonWanted, gen)]);
    if (gen !== this.gen) return;
    if (a === 'waiting' || b === 'waiting') {
      // Retried when live frames arrive (framesArrived): they come once the agent is back.
      this.store.setState({ compare: { ...pending, status: 'loading', waitingFor: 'the agent (a range is not in this page)' } });
      return;
    }
    if ('error' in a || 'error' in b) {
      const error =
        'error' in a ? `the baseline could not be read (${a.error})` : 'error' in b ? `the comparison could not be read (${b.error})` : '';
      this.store.setState({ compare: { ...pending, status: 'error', error } });
      return;
    }
    const opts = { kind: ui.kind, classes: ui.classes, schema, diskKind };
    const disks = compareDistributions(rangeHistograms(a.frames, a.range, opts), rangeHistograms(b.frames, b.range, opts), devs, schema);
    const edge = this.source.edge();
    this.touchesEdge = !this.source.snapshot && (a.range.to >= edge || b.range.to >= edge);
    this.store.setState({
      compare: { status: 'ready', choice, baseline: a.range, comparison: b.range, kind: ui.kind, schema, disks },
    });
  }

  /** The frames of `r`, from wherever the source holds them, and the whole steps they cover. */
  private async load(r: TimeRange, gen: number): Promise<Loaded> {
    const snapshot = this.source.snapshot;
    if (snapshot) {
      const range = { ...alignRange(r, snapshot.range.step), step: snapshot.range.step };
      return { range, frames: this.source.snapshotFrames(range.from, range.to) };
    }
    const live = this.source.live;
    const edge = this.source.edge();
    const to = Math.min(r.to, edge);
    if (to > r.from && live.covers(r.from, to)) {
      return { range: { from: r.from, to: r.to, step: 1 }, frames: live.range(r.from, r.to) };
    }
    const client = this.client;
    if (!client?.connected) return 'waiting';
    // History the page does not hold: one answer's worth of columns at most, as a window.
    const step = Math.max(1, Math.ceil((r.to - r.from) / MAX_WINDOW_COLUMNS));
    try {
      // The phases the window is asked for: a fleet's queue latency once shown (the source is then new, and so is this).
      const phases = this.source.rangePhases();
      const got = await this.busy.during(() => fetchRange(client, { from: r.from, to, step, phases }, () => gen === this.gen));
      if (!got) return 'waiting';
      const range = { ...alignRange(r, got.step), step: got.step };
      return { range, frames: got.frames.filter((f) => f.ts >= range.from && f.ts < range.to) };
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }
}

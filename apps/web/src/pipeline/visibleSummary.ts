/**
 * The summary of the visible range (whole columns): histograms, percentiles and class/disk
 * breakdowns (model/summary.ts), recomputed once changes pause (at most every SUMMARY_DELAY ms)
 * in tasks of about SUMMARY_TASK_MS, so a big snapshot never holds the page in one long task;
 * colour scales are refitted to the visible cells then too. Publishes the summary to show: a
 * small range's is summed as soon as the data changes, a big one's when its run ends (the last
 * one of this source is shown meanwhile). A live window's new seconds are added to the running
 * summary of the same range (model/summary.ts RunningSummary) instead of summing it again.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import type { DiskInfo } from '@blkheat/shared-types';
import { diskKinds, type DiskKindOf } from '../model/phase.js';
import { alignCeil, alignFloor } from '../model/resolution.js';
import { RunningSummary, type Summary, type SummaryInput, summaryWeight } from '../model/summary.js';
import type { SliceStore, SummarySlice } from '../store/pipelineStore.js';
import { windowKnown } from '../store/shownWindow.js';
import type { UiReader } from '../store/uiStore.js';
import type { DataSource } from './source.js';
import { stepFor } from './steps.js';

/** Summaries wait for changes to pause this long, but never longer than SUMMARY_MAX_WAIT. */
const SUMMARY_DELAY = 80;
const SUMMARY_MAX_WAIT = 400;
/** Most disk-frames summed on the spot (a few ms); a bigger range waits for the sliced run. */
const SUMMARY_NOW_WEIGHT = 4000;
/**
 * How long one task of a run sums before letting the page draw and take input. The last one
 * also publishes the summary, and React renders the panels in the same task (5-15 ms for an
 * imported hour): at 25 that task came near the 50 ms of a long task.
 */
const SUMMARY_TASK_MS = 12;

export interface VisibleSummaryOptions {
  readonly ui: UiReader;
  readonly store: SliceStore<SummarySlice>;
  readonly source: DataSource;
  /** Called when a run ends, before its summary is published (the colour scales refit to the visible cells). */
  readonly onSettled?: (() => void) | undefined;
  /** Called with each summary published (the samples at its percentiles' ranks are asked for). */
  readonly onPublished?: ((summary: Summary | undefined) => void) | undefined;
}

export class VisibleSummary {
  private readonly ui: UiReader;
  private readonly store: SliceStore<SummarySlice>;
  private readonly source: DataSource;
  private readonly onSettled: (() => void) | undefined;
  private readonly onPublished: ((summary: Summary | undefined) => void) | undefined;
  /** The summary of the data as it is (undefined once the data changed). */
  private cache: Summary | undefined;
  /** The last summary of this source, shown while a big one is computed. */
  private shown: Summary | undefined;
  /** The tallies behind the last summary computed, for a live window to add its new seconds to. */
  private tallies: RunningSummary | undefined;
  /** diskKinds() of the bio-based disks it was made for (comma-separated), so that a running summary sees the same input. */
  private kinds: { readonly bio: string; readonly of: DiskKindOf } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private since = 0;
  /** Bumped to abandon a summary being computed in slices (the data changed, or a newer run started). */
  private run = 0;
  private running = false;
  private publishQueued = false;

  constructor(options: VisibleSummaryOptions) {
    this.ui = options.ui;
    this.store = options.store;
    this.source = options.source;
    this.onSettled = options.onSettled;
    this.onPublished = options.onPublished;
  }

  /** A run is waiting out its delay or under way. */
  get pending(): boolean {
    return this.timer !== undefined || this.running;
  }

  /** The source changed: nothing of the old one is shown. */
  reset(): void {
    this.cache = undefined;
    this.shown = undefined;
    this.tallies = undefined;
    this.publish();
  }

  /** Frames or matrices changed: recompute (a run in progress is dropped). */
  dataChanged(): void {
    this.cache = undefined;
    this.schedule(true);
    this.publishSoon();
  }

  /**
   * The view changed: recompute once it settles. A run in progress finishes (the next one
   * catches up), or a long gesture over a big range would never see one end.
   */
  viewChanged(): void {
    this.schedule(false);
  }

  /** Histograms and breakdowns of the visible range right now (whole columns), memoised; computed at once. */
  fresh(): Summary | undefined {
    const input = this.input();
    if (!input) return undefined;
    const c = this.cache;
    if (c && c.from === input.from && c.to === input.to && c.step === input.step) return c;
    const running = this.runningFor(input);
    const steps = running.catchUp(Infinity);
    let r = steps.next();
    while (!r.done) r = steps.next();
    return this.keep(r.value, running);
  }

  /**
   * The running summary to continue for `input`: the last one where the live window only gained
   * seconds at its end since (frames are then added, not summed again), else a new one. Live
   * summaries are detached (model/summary.ts): those of a snapshot are summed once.
   */
  private runningFor(input: SummaryInput): RunningSummary {
    const r = this.tallies;
    if (r?.follows(input)) return r.retarget(input);
    return new RunningSummary(input, this.source.snapshot === undefined);
  }

  /**
   * The summary to show: the last computed one, even if the view moved since (the debounced
   * recompute catches up). When the data changed, a small range is summed now; a big one is
   * left to the sliced run and the previous summary of this source (or none) is shown meanwhile.
   */
  private current(): Summary | undefined {
    if (this.cache) return this.cache;
    const cur = this.store.getState().window;
    if (cur && (this.followsRunning() || summaryWeight(cur.frames, SUMMARY_NOW_WEIGHT) <= SUMMARY_NOW_WEIGHT)) return this.fresh();
    return this.shown;
  }

  /** The visible range is the running summary's, with only new seconds to add: cheap to sum now. */
  private followsRunning(): boolean {
    const input = this.tallies && this.input();
    return input !== undefined && this.tallies?.follows(input) === true;
  }

  private publish(extra: Partial<SummarySlice> = {}): void {
    const summary = this.current();
    const changed = summary !== this.store.getState().summary;
    if (changed || Object.keys(extra).length > 0) this.store.setState({ summary, ...extra });
    if (changed) this.onPublished?.(summary);
  }

  /** Publishes once the task's changes are in (a backfill appends several batches in one task). */
  private publishSoon(): void {
    if (this.publishQueued) return;
    this.publishQueued = true;
    queueMicrotask(() => {
      this.publishQueued = false;
      this.publish();
    });
  }

  /** Recomputes once changes pause (debounced; at most SUMMARY_MAX_WAIT late). */
  private schedule(dataChanged: boolean): void {
    if (dataChanged) {
      this.run++;
      this.running = false;
    }
    const now = performance.now();
    if (this.timer !== undefined) {
      if (now - this.since >= SUMMARY_MAX_WAIT) return; // let the pending one fire
      clearTimeout(this.timer);
    } else {
      this.since = now;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, SUMMARY_DELAY);
  }

  /**
   * Computes the summary in tasks of about SUMMARY_TASK_MS (a whole imported snapshot takes a
   * few hundred ms in all, more than one task may hold the page), then refits the colours.
   */
  private start(): void {
    const run = ++this.run; // one run at a time: this one replaces any still going
    this.running = false;
    const input = this.input();
    const cached = this.cache;
    if (!input || (cached && cached.from === input.from && cached.to === input.to && cached.step === input.step)) {
      this.done();
      return;
    }
    const running = this.runningFor(input);
    const steps = running.catchUp();
    this.running = true;
    const next = (): void => {
      if (run !== this.run) return;
      const r = stepFor(steps, SUMMARY_TASK_MS);
      if (!r.done) {
        setTimeout(next, 0);
        return;
      }
      this.running = false;
      this.keep(r.value, running);
      this.done();
    };
    next();
  }

  /** The view settled and its summary is ready: colours follow what is visible now (they may narrow, too). */
  private done(): void {
    this.onSettled?.();
    this.publish({ summaryVersion: this.store.getState().summaryVersion + 1 });
  }

  /**
   * What a summary of the visible range right now (whole columns) is computed from. The view is
   * the one published to the page (`visible`), not the source's own: a live source's edge moves
   * with the agent's clock between refreshes, and a summary of it read a second the heat maps and
   * time axis did not show yet (e2e live-first-paint, under load).
   */
  private input(): SummaryInput | undefined {
    const cur = this.store.getState().window;
    if (!cur) return undefined;
    const view = this.store.getState().visible;
    const from = Math.max(cur.from, alignFloor(view.from, cur.step));
    const to = Math.max(from, Math.min(cur.to, alignCeil(view.to, cur.step)));
    return {
      from,
      to,
      step: cur.step,
      frames: cur.frames,
      matrices: cur.matrices,
      devs: new Set(cur.devs),
      kind: this.ui.getState().kind,
      diskKind: this.diskKindOf(this.store.getState().disks),
      classes: this.ui.getState().classes.length > 0 ? new Set(this.ui.getState().classes) : undefined,
      schema: cur.schema,
      snapshotRange: this.source.snapshot?.range,
      reach: { from: this.source.lowest(), to: this.source.edge() },
      known: windowKnown(cur, this.ui.getState().agent?.historyFrom),
    };
  }

  /** One function while the bio-based disks stay the same (the disk list itself is new with every change of activity). */
  private diskKindOf(disks: readonly DiskInfo[]): DiskKindOf {
    const bio = disks
      .filter((d) => d.kind === 'bio')
      .map((d) => d.dev)
      .join();
    if (this.kinds?.bio !== bio) this.kinds = { bio, of: diskKinds(disks) };
    return this.kinds.of;
  }

  private keep(s: Summary, running: RunningSummary): Summary {
    this.cache = s;
    this.shown = s;
    this.tallies = running;
    return s;
  }
}

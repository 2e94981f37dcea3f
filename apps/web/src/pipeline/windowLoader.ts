/**
 * (Over 400 lines: loading a window (debounce, fetch, build, install) and growing it live are one lifecycle of the window on screen, sharing every field; what only a fleet view needs is in fleetWindow.ts.)
 * The window loader: which frames are on screen. A data window holds the frames of [from, to)
 * at one step, ~3× the visible span (Perfetto's buffered window): taken from the live log,
 * fetched from the agent for history the page does not hold, or sliced from a snapshot, when
 * the visible window leaves it or the resolution changes (frames stay unfiltered). While live
 * it grows with each frame and its oldest columns expire. Publishes the window and the visible
 * time window; the heat maps part (heatMaps.ts) derives the rest of the window.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import { bucketCount, type Frame, sameSchema } from '@blkheat/shared-types';
import { CountScale } from '../model/colour.js';
import { alignCeil, alignFloor, MAX_WINDOW_COLUMNS } from '../model/resolution.js';
import type { SliceStore, WindowSlice } from '../store/pipelineStore.js';
import type { Notify } from '../store/notices.js';
import type { UiReader } from '../store/uiStore.js';
import type { Busy } from './busy.js';
import type { DataWindow, WindowSource } from './bufferedWindow.js';
import type { Built, HeatMaps } from './heatMaps.js';
import type { AgentSource, DataSource } from './source.js';
import type { VisibleSummary } from './visibleSummary.js';
import { fetchRange } from './fetchRange.js';
import { disksKey, fleetColumnsLate, fleetRangeDisks } from './fleetWindow.js';
import { continues, holdsVisible, reachTo, type Want, wantedWindow } from './windowWant.js';

const LOAD_DEBOUNCE = 120;

export interface WindowLoaderOptions {
  readonly ui: UiReader;
  readonly store: SliceStore<WindowSlice>;
  readonly client?: AgentSource | undefined;
  readonly source: DataSource;
  readonly heatMaps: HeatMaps;
  readonly summary: VisibleSummary;
  readonly busy: Busy;
  /** Says why history could not be fetched. */
  readonly notify?: Notify | undefined;
}

export class WindowLoader {
  private readonly ui: UiReader;
  private readonly store: SliceStore<WindowSlice>;
  private readonly client: AgentSource | undefined;
  private readonly source: DataSource;
  private readonly heatMaps: HeatMaps;
  private readonly summary: VisibleSummary;
  private readonly busy: Busy;
  private readonly notify: Notify | undefined;
  private current: DataWindow | undefined;
  private windowId = 0;
  /** Bumped to drop a load under way (a newer one started, or the source changed). */
  private loadGen = 0;
  private fetchTimer: { readonly timer: ReturnType<typeof setTimeout>; readonly done: () => void } | undefined;
  /** What the load under way (waiting, fetching or building) will install; undefined when none is. */
  private pending: Want | undefined;
  /** The disks the pending load asks for (disksKey). */
  private pendingDisks = '';
  private refreshQueued = false;
  /** A following window's newest columns are being asked for (extendFollowing). */
  private extending = false;
  /** The disks the window on screen was asked for (rangeDisks, as a key). */
  private currentDisks = '';

  constructor(options: WindowLoaderOptions) {
    this.ui = options.ui;
    this.store = options.store;
    this.client = options.client;
    this.source = options.source;
    this.heatMaps = options.heatMaps;
    this.summary = options.summary;
    this.busy = options.busy;
    this.notify = options.notify;
  }

  private setCurrent(w: DataWindow | undefined): void {
    this.current = w;
    this.store.setState({ window: w });
  }

  /** The source changed: the window goes, a load under way is dropped. */
  reset(): void {
    this.setCurrent(undefined);
    this.loadGen++;
    this.pending = undefined;
  }

  /** Frames or matrices changed: renderers redraw, the summary is recomputed. */
  bump(): void {
    this.heatMaps.bump();
    this.summary.dataChanged();
  }

  private publishVisible(): void {
    const v = this.source.visible();
    const p = this.store.getState().visible;
    if (v.following !== p.following || v.span !== p.span || v.from !== p.from || v.to !== p.to) this.store.setState({ visible: v });
  }

  /** Re-evaluates what to show after any change of view, filters, size or source (coalesced). */
  refresh(): void {
    this.publishVisible();
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    queueMicrotask(() => {
      this.refreshQueued = false;
      this.refreshNow();
    });
  }

  /** The colour scale kind changed. */
  recolour(): void {
    const cur = this.current;
    if (!cur) return;
    this.heatMaps.recolour(cur);
    this.bump();
  }

  /** A summary run ended: the colour scales refit to the visible cells (they may narrow). */
  refitScales(): void {
    const cur = this.current;
    if (cur && this.heatMaps.fitScales(cur)) this.heatMaps.bump();
  }

  /** Live frames new to the log (`newDisk`: a disk showed I/O for the first time). */
  appendLive(added: readonly Frame[], newDisk: boolean): void {
    if (this.source.snapshot) return; // stored for later; the snapshot is on screen
    const ui = this.ui.getState();
    const cur = this.current;
    let rebuild = false;
    let newFrom = Infinity;
    if (cur) {
      const add = this.heatMaps.appender(cur);
      for (const f of added) {
        if (f.ts < cur.coveredTo) {
          // A second we had already drawn as missing (gap fill): keep it, re-derive.
          if (f.ts >= cur.from && f.ts < cur.to) {
            let i = cur.frames.length;
            while (i > 0 && (cur.frames[i - 1] as Frame).ts > f.ts) i--;
            if ((cur.frames[i - 1] as Frame | undefined)?.ts !== f.ts) cur.frames.splice(i, 0, f);
            rebuild = true;
          }
          continue;
        }
        if (!cur.following && f.ts >= cur.to) continue;
        if (cur.following) cur.to = Math.max(cur.to, alignCeil(f.ts + f.step, cur.step));
        cur.frames.push(f);
        add(f);
        cur.coveredTo = f.ts + f.step;
        if (cur.knownFrom === Infinity) cur.knownFrom = f.ts;
        newFrom = Math.min(newFrom, f.ts);
      }
      if (cur.following) this.expire(cur);
      if (!rebuild && Number.isFinite(newFrom)) this.heatMaps.widen(cur, newFrom);
    }
    if (rebuild || (newDisk && ui.diskChoice === undefined)) {
      if (cur) this.heatMaps.derive(cur);
    }
    if (ui.view.following) this.refresh(); // the live edge moved
    this.bump();
  }

  /** The agent says [from, to) is complete (the source's log is already told). */
  coverLive(from: number, to: number): void {
    const cur = this.current;
    if (!cur || this.source.snapshot) return;
    if (cur.provisional) {
      // The page now holds (or can fetch) what the placeholder window lacked.
      this.setCurrent(undefined);
      this.refresh();
      return;
    }
    if (cur.following && to > cur.coveredTo) {
      // Seconds the agent says are complete but sent no frame for: not recorded (it was down).
      // Advance the window over them anyway (the live edge moves, and they draw as "no data").
      this.heatMaps.extendTo(cur, to);
      cur.to = Math.max(cur.to, alignCeil(to, cur.step));
      if (cur.knownFrom === Infinity) cur.knownFrom = Math.max(cur.from, from);
      cur.coveredTo = to;
      this.expire(cur);
      if (this.ui.getState().view.following) this.refresh();
      this.bump();
    }
  }

  private expire(cur: DataWindow): void {
    let start = this.heatMaps.startTime(cur);
    if (cur.matrices.size === 0) start = Math.max(start, cur.to - MAX_WINDOW_COLUMNS * cur.step);
    if (start > cur.from) {
      cur.from = start;
      let i = 0;
      while (i < cur.frames.length && (cur.frames[i] as Frame).ts < start) i++;
      if (i > 0) cur.frames.splice(0, i);
    }
  }

  private refreshNow(): void {
    const want = wantedWindow(this.ui, this.source);
    const cur = this.current;
    const step = want.step;
    const lowest = this.source.lowest();
    const floor = lowest === undefined ? -Infinity : alignFloor(lowest, step);
    const disks = disksKey(this.rangeDisks());
    const edge = this.source.edge();
    // A placeholder drawn before the agent could answer is replaced as soon as it can (the hello):
    // kept until the backfill landed, a page opened on a past range idled on it, with the numbers
    // of no data and the phases of none (phase-split.test.ts read device latency under `lat=total`
    // in a loaded CI run). An agent at step 1 in the page's own schema changed nothing else the
    // window was made for.
    const fits =
      cur !== undefined &&
      !(cur.provisional && this.client?.connected === true) &&
      sameSchema(cur.schema, this.source.schema()) &&
      cur.requestedStep === step &&
      this.currentDisks === disks &&
      (want.following
        ? // A following window still short of the visible range (the backfill brings the seconds
          // before it, oldest first) is loaded afresh: what is visible is asked for at once.
          cur.from <= Math.max(want.visible.from, floor) &&
          cur.following &&
          (cur.coveredTo >= want.visible.from || this.client?.connected !== true)
        : holdsVisible(cur, want, floor, edge));
    if (cur && !want.following && cur.following) {
      // Paused: stop growing, so the ring never expires what the user is looking at.
      cur.following = false;
    }
    if (!fits) {
      if (!(this.pending && this.pendingDisks === disks && continues(this.pending, want, floor, edge))) this.load(want);
    } else if (cur && want.following && this.lateLive(cur)) {
      void this.busy.during(() => this.extendFollowing(cur));
    } else if (cur && this.heatMaps.stale(cur)) {
      this.heatMaps.derive(cur);
      this.bump();
    } else {
      this.summary.viewChanged();
    }
  }

  /** The disks a window is asked for (fleetRangeDisks): undefined, every disk, but on a fleet. */
  private rangeDisks(): readonly string[] | undefined {
    return fleetRangeDisks(this.ui.getState(), () => this.heatMaps.resolveDevs());
  }

  /** A fleet view's following window lacks closed columns (fleetColumnsLate) and none is being asked for. */
  private lateLive(cur: DataWindow): boolean {
    if (!this.ui.getState().agent?.fleet || this.extending || this.client?.connected !== true) return false;
    return fleetColumnsLate(cur, this.source.edge(), this.source.minStep());
  }

  /** Asks for the columns a following window lacks (lateLive) and adds them as live frames are. */
  private async extendFollowing(cur: DataWindow): Promise<void> {
    const client = this.client;
    if (!client) return;
    const gen = this.loadGen;
    const from = cur.coveredTo;
    const to = alignFloor(this.source.edge(), cur.step);
    this.extending = true;
    try {
      const wanted = (): boolean => gen === this.loadGen && this.current === cur;
      const got = await fetchRange(
        client,
        { from: alignFloor(from, cur.step), to, step: cur.step, disks: this.rangeDisks(), phases: this.source.rangePhases() },
        wanted,
      );
      if (!got) return;
      this.appendLive(
        got.frames.filter((f) => f.step === cur.step && f.ts + f.step <= to),
        false,
      );
      this.coverLive(from, to);
    } catch (e) {
      this.notify?.('error', `could not fetch the newest columns: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.extending = false;
    }
  }

  private load(want: Want): void {
    const gen = ++this.loadGen;
    this.pending = want;
    this.pendingDisks = disksKey(this.rangeDisks());
    if (this.fetchTimer !== undefined) {
      clearTimeout(this.fetchTimer.timer);
      this.fetchTimer.done();
      this.fetchTimer = undefined;
    }
    // While something is on screen, wait for the gesture to settle (the old window is drawn
    // at the new scale meanwhile): one load at the end of a wheel zoom, not one per event.
    // With nothing on screen yet, or only the placeholder drawn before the agent could answer,
    // load now (a big fleet's disk list follows its hello, and a timer would fire after the
    // page has read it); but a snapshot's first window in a task of its own (timeout 0): the
    // task that received the file also holds its last part and React's switch to snapshot
    // mode, and a big file's heat maps take tens of ms more.
    const delay = this.current && !this.current.provisional ? LOAD_DEBOUNCE : this.source.snapshot ? 0 : undefined;
    const run = (): void => {
      if (gen !== this.loadGen) return;
      this.loadNow(gen, want);
    };
    if (delay === undefined) {
      run();
      return;
    }
    const done = this.busy.start();
    this.fetchTimer = {
      done,
      timer: setTimeout(() => {
        this.fetchTimer = undefined;
        done();
        run();
      }, delay),
    };
  }

  private loadNow(gen: number, want: Want): void {
    const snapshot = this.source.snapshot;
    if (snapshot) {
      this.buildThenInstall(gen, {
        ...want,
        schema: snapshot.schema,
        requestedStep: want.step,
        frames: this.source.snapshotFrames(want.from, want.to),
        coveredTo: want.to,
        // A snapshot leaves idle steps out: a missing frame there is not a gap.
        knownFrom: Infinity,
        provisional: false,
      });
      return;
    }
    const live = this.source.live;
    const edge = this.source.edge();
    const connected = this.client?.connected === true;
    // Seconds before the agent's oldest hold nothing to fetch: the buffer need not cover them.
    const oldest = this.source.lowest();
    const inLive = live.covers(oldest === undefined ? want.from : Math.max(want.from, oldest), Math.min(want.to, edge));
    if (inLive || !connected) {
      const to = reachTo(want, want.step, live.coveredTo);
      this.install({
        ...want,
        to,
        schema: this.source.schema(),
        requestedStep: want.step,
        frames: live.range(want.from, to),
        coveredTo: Math.min(to, live.coveredTo ?? want.from),
        knownFrom: live.coveredFrom !== undefined ? Math.max(want.from, live.coveredFrom) : Infinity,
        // Not connected and not in the live buffer: what we show is a placeholder.
        provisional: !inLive,
      });
      return;
    }
    // History the browser does not hold: ask the agent.
    void this.busy.during(() => this.fetchWindow(gen, want));
  }

  private async fetchWindow(gen: number, want: Want): Promise<void> {
    const client = this.client;
    const live = this.source.live;
    // The agent answers in its schema; a new one (a new hello) bumps loadGen, dropping this answer.
    const schema = this.source.schema();
    const edge = this.source.edge();
    const fetchTo = Math.max(want.from, Math.min(want.to, alignFloor(edge, want.step)));
    const disks = this.rangeDisks();
    let frames: Frame[] = [];
    let step = want.step;
    let failed = false;
    try {
      if (!client || !client.connected) throw new Error('not connected to the agent');
      const got = await fetchRange(
        client,
        { from: want.from, to: fetchTo, step: want.step, disks, phases: this.source.rangePhases() },
        () => gen === this.loadGen,
      );
      if (!got) return;
      // Before the window is built: a phase they show may change the one on screen (app.ts).
      this.source.noteHistory(got.frames);
      if (gen !== this.loadGen) return;
      frames = got.frames;
      step = got.step;
    } catch (e) {
      if (gen !== this.loadGen) return;
      // Show what the live buffer has rather than nothing, and say why the rest is missing.
      frames = [];
      failed = true;
      this.notify?.('error', `could not fetch history for this range: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (gen !== this.loadGen) return;
    const to = reachTo(want, step, live.coveredTo);
    const tail = live.range(fetchTo, to);
    frames = frames.filter((f) => f.ts >= want.from && f.ts < fetchTo).concat(tail);
    const from = alignFloor(want.from, step);
    this.install(
      {
        ...want,
        schema,
        from,
        to: alignCeil(to, step),
        step,
        requestedStep: want.step,
        frames,
        coveredTo: Math.max(fetchTo, live.coveredTo ?? fetchTo),
        // The agent answered for [from, fetchTo): a second it sent no frame for was not recorded.
        knownFrom: failed ? Math.max(from, live.coveredFrom ?? Infinity) : from,
        // A failed fetch was reported; retrying on every live second would repeat the error.
        // It is retried when the connection comes back (if that was the cause) or on the next zoom.
        provisional: failed && !this.client?.connected,
      },
      undefined,
      disks,
    );
  }

  /**
   * A snapshot window: its heat maps are built one disk per task (a big file's take tens of ms
   * each, too much for one task with React's render after them), then installed.
   */
  private buildThenInstall(gen: number, w: WindowSource): void {
    const { built, next } = this.heatMaps.buildAhead(w);
    const done = this.busy.start();
    const step = (): void => {
      if (gen !== this.loadGen) done();
      else if (!next()) {
        done();
        this.install(w, built);
      } else {
        setTimeout(step, 0);
      }
    };
    // Not now: this task already cut the window's frames out of the snapshot (tens of ms for a big file).
    setTimeout(step, 0);
  }

  /**
   * What a window is made of; the rest of DataWindow is derived from it (`built`: heat maps made
   * for it already; `disks`: those its frames were asked for, rangeDisks).
   */
  private install(w: WindowSource, built?: Built, disks = this.rangeDisks()): void {
    this.pending = undefined;
    const cur: DataWindow = {
      ...w,
      id: ++this.windowId,
      filterKey: '',
      devs: [],
      matrices: new Map(),
      tracks: new Map(),
      yLo: 0,
      yHi: bucketCount(w.schema),
      scale: new CountScale('log', 1),
      scales: new Map(),
    };
    this.current = cur;
    this.currentDisks = disksKey(disks);
    this.heatMaps.derive(cur, built);
    this.setCurrent(cur);
    this.bump();
  }
}

/**
 * The data manager: owns the bulk data outside React and decides what to fetch.
 *
 *   source      live: a 1 s frame log fed by the stream (the last hour), plus range answers
 *               from the agent for windows the log does not cover; snapshot: its frames.
 *   window      frames for a data window [from, to) at one step, ~3× the visible span
 *               (Perfetto's buffered window), fetched or sliced when the visible window
 *               leaves it or the resolution changes. Frames stay unfiltered.
 *   derived     per shown disk: a HeatMatrix for the chosen latency kind and classes, its
 *               percentile track and colour scale (fitted to its visible cells), plus the
 *               shared latency window and a shared colour scale. Rebuilt from the window's
 *               frames when filters change (no fetch); appended to per live frame.
 *   schema      the bucket schema the source's data names (live: the agent's hello; snapshot: the
 *               file's). Matrices have one row per bucket of it; a new one rebuilds everything.
 *   known       the seconds of the window where a missing frame means "not recorded" (the
 *               agent was down), drawn as such (model/gaps.ts); empty for snapshots.
 *   summary     histograms, percentiles and class/disk breakdowns of the visible range (whole
 *               columns), recomputed at most every SUMMARY_DELAY ms; colour scales are refitted
 *               to the visible cells then too.
 */
import {
  type BucketSchema,
  BUCKET_SCHEMA,
  bucketCount,
  bucketOfSeconds,
  compareDev,
  type DiskInfo,
  type Frame,
  type IoSample,
  type LatencyKind,
  MAX_FRAMES_PER_ANSWER,
  MAX_SAMPLES_PER_ANSWER,
  sameSchema,
  schemaProblem,
  type Snapshot,
} from '@blkheat/shared-types';
import { colourDomain, CountScale } from '../model/colour.js';
import { type Known, NOTHING_KNOWN } from '../model/gaps.js';
import { buildMatrix, type HeatMatrix, type MatrixFilter } from '../model/heatmatrix.js';
import { PercentileTrack } from '../model/percentiles.js';
import { alignCeil, alignFloor, bufferedRange, chooseStep, MAX_WINDOW_COLUMNS } from '../model/resolution.js';
import { type CellSelection, matchSamples, selectionQuery } from '../model/samples.js';
import { liveView, type ViewLimits, type ViewState } from '../model/view.js';
import type { AgentClient } from '../net/client.js';
import { FrameLog } from './frameLog.js';
import { notify, useUi, type UiState } from './store.js';
import { type Summary, type SummaryInput, summarize, summarizeNow, summaryWeight } from './summary.js';

/** Live frames kept in the browser (seconds). */
export const LIVE_KEEP = 3600;
/** Most disks drawn automatically; more can be picked by hand. */
export const AUTO_DISKS = 6;
/** Summaries wait for changes to pause this long, but never longer than SUMMARY_MAX_WAIT. */
const SUMMARY_DELAY = 80;
const SUMMARY_MAX_WAIT = 400;
/** Most disk-frames a render sums on the spot (a few ms); a bigger range waits for runSummary. */
const SUMMARY_NOW_WEIGHT = 4000;
/** How long one task of runSummary sums before letting the page draw and take input. */
const SUMMARY_TASK_MS = 25;
const LOAD_DEBOUNCE = 120;
const SAMPLE_LIMIT = 2000;
/** The latency window shows at least this many octaves (powers of two). */
const MIN_Y_OCTAVES = 6;

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
  // ---- derived ----
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

export type { DiskHistogram, Summary } from './summary.js';

/** What the data manager needs of the agent client (tests pass a stand-in). */
export type AgentSource = Pick<AgentClient, 'connected' | 'hello' | 'request'>;

function filterKey(kind: LatencyKind, classes: readonly string[]): string {
  return `${kind}|${[...classes].sort().join(',')}`;
}

/** What a window is made from (the rest of DataWindow is derived). */
type WindowSource = Pick<
  DataWindow,
  'schema' | 'step' | 'requestedStep' | 'from' | 'to' | 'following' | 'frames' | 'coveredTo' | 'knownFrom' | 'provisional'
>;

/** Heat maps built ahead for a window, with the filter and disks they were built for. */
interface Built {
  readonly filterKey: string;
  readonly devs: readonly string[];
  readonly matrices: Map<string, HeatMatrix>;
}

/** One disk's heat map of a window. */
function matrixOf(w: WindowSource, filter: MatrixFilter): HeatMatrix {
  const rows = bucketCount(w.schema);
  return buildMatrix(w.frames, { from: w.from, to: w.to, step: w.step, rows, filter, extraColumns: w.following ? 2 : 0 });
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export class DataManager {
  readonly live = new FrameLog(LIVE_KEEP);
  private snap: { snapshot: Snapshot; log: FrameLog } | undefined;
  private client: AgentSource | undefined;
  /** The schema of the live frames (the last hello's); undefined before the first hello. */
  private liveSchema: BucketSchema | undefined;
  /** Why the agent's schema cannot be drawn (its frames are then dropped), if it cannot. */
  private liveRefusal: string | undefined;
  current: DataWindow | undefined;
  private windowId = 0;
  private loadGen = 0;
  private fetchTimer: ReturnType<typeof setTimeout> | undefined;
  private summaryTimer: ReturnType<typeof setTimeout> | undefined;
  private refreshQueued = false;
  private summaryCache: Summary | undefined;
  /** Fetches (ranges, samples) in flight plus debounced ones not yet started. */
  pending = 0;
  /** Disks with I/O in the source, with the newest second they had some. */
  private readonly active = new Map<string, number>();
  dpr = 1;

  setClient(client: AgentSource): void {
    this.client = client;
  }

  get snapshot(): Snapshot | undefined {
    return this.snap?.snapshot;
  }

  private ui(): UiState {
    return useUi.getState();
  }

  // ---------------------------------------------------------------- source

  /** End of the newest complete second (live) or the snapshot's end. */
  edge(): number {
    if (this.snap) return this.snap.snapshot.range.to;
    const covered = this.live.coveredTo;
    const last = this.live.last;
    const e = Math.max(covered ?? -Infinity, last ? last.ts + last.step : -Infinity);
    return Number.isFinite(e) ? e : Math.floor(Date.now() / 1000);
  }

  /** Oldest second the source can answer for. */
  lowest(): number | undefined {
    if (this.snap) return this.snap.snapshot.range.from;
    return this.ui().agent?.historyFrom ?? this.live.coveredFrom;
  }

  minStep(): number {
    return this.snap ? this.snap.snapshot.range.step : 1;
  }

  limits(): ViewLimits {
    return { minSpan: Math.max(10, this.minStep() * 4), maxSpan: 31 * 86400, lowest: this.lowest(), highest: this.edge() };
  }

  /** Called when live frames name a disk the agent has not described (yet). */
  onUnknownDisk: ((dev: string) => void) | undefined;

  private noteActive(frames: readonly Frame[]): boolean {
    let changed = false;
    for (const f of frames) {
      for (const d of f.disks) {
        if (d.cls.length === 0) continue;
        const prev = this.active.get(d.dev);
        if (prev === undefined) {
          changed = true;
          if (!this.snap && !this.agentDisks.some((x) => x.dev === d.dev)) this.onUnknownDisk?.(d.dev);
        }
        if (prev === undefined || f.ts > prev) this.active.set(d.dev, f.ts);
      }
    }
    return changed;
  }

  /** Live frames from the stream (or a gap fill). */
  onFrames(frames: readonly Frame[]): void {
    if (this.liveRefusal !== undefined) return; // buckets of a schema this page cannot draw
    const added = this.live.insert(frames);
    if (added.length === 0) return;
    const newDisk = this.noteActive(added);
    const ui = this.ui();
    const last = this.live.last;
    if (this.snap) return; // stored for later; the snapshot is on screen
    const cur = this.current;
    let rebuild = false;
    let newFrom = Infinity;
    if (cur) {
      const filter = this.filterFor(ui);
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
        for (const [dev, m] of cur.matrices) m.addFrame(f, { ...filter, dev });
        cur.coveredTo = f.ts + f.step;
        if (cur.knownFrom === Infinity) cur.knownFrom = f.ts;
        newFrom = Math.min(newFrom, f.ts);
      }
      if (cur.following) this.expire(cur);
      if (!rebuild && Number.isFinite(newFrom)) this.widenDomains(cur, newFrom);
    }
    if (rebuild || (newDisk && ui.diskChoice === undefined)) {
      if (cur) this.derive(cur);
    }
    if (ui.view.following && last) {
      useUi.setState({ view: liveView(this.edge(), ui.view.span), lastFrameTs: last.ts });
    } else if (last) {
      useUi.setState({ lastFrameTs: last.ts });
    }
    this.bump();
  }

  onCovered(from: number, to: number): void {
    this.live.cover(from, to);
    if (this.current?.provisional && !this.snap) {
      // The page now holds (or can fetch) what the placeholder window lacked.
      this.current = undefined;
      this.refresh();
      return;
    }
    if (this.current && !this.snap && this.current.following && to > this.current.coveredTo) {
      // Seconds the agent says are complete but sent no frame for: not recorded (it was down).
      // Advance the window over them anyway (the live edge moves, and they draw as "no data").
      const cur = this.current;
      for (const m of cur.matrices.values()) m.ensure(m.columnOf(to - 1));
      cur.to = Math.max(cur.to, alignCeil(to, cur.step));
      if (cur.knownFrom === Infinity) cur.knownFrom = Math.max(cur.from, from);
      cur.coveredTo = to;
      this.expire(cur);
      const ui = this.ui();
      if (ui.view.following) useUi.setState({ view: liveView(this.edge(), ui.view.span) });
      this.bump();
    }
  }

  private expire(cur: DataWindow): void {
    let start = cur.from;
    for (const m of cur.matrices.values()) start = Math.max(start, m.startTime);
    if (cur.matrices.size === 0) start = Math.max(start, cur.to - MAX_WINDOW_COLUMNS * cur.step);
    if (start > cur.from) {
      cur.from = start;
      let i = 0;
      while (i < cur.frames.length && (cur.frames[i] as Frame).ts < start) i++;
      if (i > 0) cur.frames.splice(0, i);
    }
  }

  loadSnapshot(snapshot: Snapshot, name: string): void {
    const log = new FrameLog();
    log.insert(snapshot.frames);
    log.cover(snapshot.range.from, snapshot.range.to);
    this.snap = { snapshot, log };
    this.active.clear();
    this.noteActive(snapshot.frames);
    this.current = undefined;
    this.summaryCache = undefined;
    this.summaryShown = undefined;
    this.loadGen++;
    useUi.setState({
      mode: 'snapshot',
      snapshot: {
        name,
        host: snapshot.host,
        agent: snapshot.agent,
        createdAt: snapshot.createdAt,
        note: snapshot.note,
        range: snapshot.range,
        samples: snapshot.samples.length,
      },
      disks: [...snapshot.disks].sort((a, b) => compareDev(a.dev, b.dev)),
      view: { following: false, span: snapshot.range.to - snapshot.range.from, from: snapshot.range.from, to: snapshot.range.to },
      selection: undefined,
      samples: { status: 'idle', rows: [], truncated: false },
    });
    this.refresh();
  }

  /** The agent's disks (kept while a snapshot replaces them on screen). */
  agentDisks: readonly DiskInfo[] = [];

  setAgentDisks(disks: readonly DiskInfo[]): void {
    this.agentDisks = [...disks].sort((a, b) => compareDev(a.dev, b.dev));
    if (!this.snap) {
      useUi.setState({ disks: this.agentDisks });
      this.refresh();
    }
  }

  /**
   * The bucket schema of the source on screen: the snapshot's, else the agent's (BUCKET_SCHEMA
   * before any hello, when there is no data yet).
   */
  schema(): BucketSchema {
    return this.snap?.snapshot.schema ?? this.liveSchema ?? BUCKET_SCHEMA;
  }

  /**
   * The agent named its bucket schema (every hello does). A different one than before (the
   * agent was restarted with another --schema) makes the live frames held so far meaningless
   * rows: they are dropped and everything derived from them is rebuilt at the new size. Returns
   * why the schema cannot be drawn, if it cannot (its frames are then ignored).
   */
  setLiveSchema(schema: BucketSchema): string | undefined {
    const problem = schemaProblem(schema);
    const before = this.liveSchema;
    const wasRefused = this.liveRefusal !== undefined;
    this.liveRefusal = problem;
    this.liveSchema = problem === undefined ? schema : undefined;
    const changed = before !== undefined && (problem !== undefined || !sameSchema(before, schema));
    if (!changed && !(wasRefused && problem === undefined)) return problem;
    this.live.clear();
    if (this.snap) return problem; // the snapshot stays on screen; live restarts from the new frames
    this.active.clear();
    this.current = undefined;
    this.summaryCache = undefined;
    this.summaryShown = undefined;
    this.loadGen++;
    useUi.setState({ selection: undefined, samples: { status: 'idle', rows: [], truncated: false } });
    this.refresh();
    this.bump();
    return problem;
  }

  closeSnapshot(): void {
    const disks = this.agentDisks;
    if (!this.snap) return;
    this.snap = undefined;
    this.active.clear();
    this.noteActive(this.live.frames);
    this.current = undefined;
    this.summaryCache = undefined;
    this.summaryShown = undefined;
    this.loadGen++;
    const ui = this.ui();
    useUi.setState({
      mode: 'live',
      snapshot: undefined,
      disks,
      view: liveView(this.edge(), ui.liveSpan),
      selection: undefined,
      samples: { status: 'idle', rows: [], truncated: false },
    });
    this.refresh();
  }

  // ---------------------------------------------------------------- windows

  /** Re-evaluates what to show after any change of view, filters, size or source (coalesced). */
  refresh(): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    queueMicrotask(() => {
      this.refreshQueued = false;
      this.refreshNow();
    });
  }

  private wanted(ui: UiState): { step: number; from: number; to: number; following: boolean; visible: ViewState } {
    const edge = this.edge();
    const visible = ui.view.following ? liveView(edge, ui.view.span) : ui.view;
    const px = Math.max(50, ui.plotWidth * this.dpr);
    const step = chooseStep(visible.to - visible.from, px, this.minStep());
    const highest = alignCeil(edge, step);
    // No buffer before the source's oldest second, but the visible part before it stays in the
    // window: there it is drawn as "no data" (see known()), not left blank like a quiet disk.
    const oldest = this.lowest();
    const lowest = oldest === undefined ? undefined : Math.min(oldest, visible.from);
    if (visible.following) {
      const b = highest;
      let a = alignFloor(edge - 2 * visible.span, step);
      if (lowest !== undefined) a = Math.max(a, alignFloor(lowest, step));
      if ((b - a) / step > MAX_WINDOW_COLUMNS) a = b - MAX_WINDOW_COLUMNS * step;
      return { step, from: a, to: Math.max(b, a + step), following: true, visible };
    }
    const r = bufferedRange(visible.from, visible.to, step, { lowest, highest: Math.max(highest, alignCeil(visible.to, step)) });
    return { step, from: r.from, to: r.to, following: false, visible };
  }

  private refreshNow(): void {
    const ui = this.ui();
    const want = this.wanted(ui);
    const cur = this.current;
    const step = want.step;
    const lowest = this.lowest();
    const floor = lowest === undefined ? -Infinity : alignFloor(lowest, step);
    const fits =
      cur !== undefined &&
      sameSchema(cur.schema, this.schema()) &&
      cur.requestedStep === step &&
      cur.from <= Math.max(want.visible.from, floor) &&
      (want.following ? cur.following : cur.to >= Math.min(want.visible.to, alignCeil(this.edge(), step)));
    if (cur && !want.following && cur.following) {
      // Paused: stop growing, so the ring never expires what the user is looking at.
      cur.following = false;
    }
    if (!fits) {
      this.load(want);
    } else if (cur && (cur.filterKey !== filterKey(ui.kind, ui.classes) || !sameList(cur.devs, this.resolveDevs(ui)))) {
      this.derive(cur);
      this.bump();
    } else {
      this.scheduleSummary(false);
    }
  }

  private load(want: { step: number; from: number; to: number; following: boolean }): void {
    const gen = ++this.loadGen;
    if (this.fetchTimer !== undefined) {
      clearTimeout(this.fetchTimer);
      this.fetchTimer = undefined;
      this.pending--;
    }
    // While something is on screen, wait for the gesture to settle (the old window is drawn
    // at the new scale meanwhile): one load at the end of a wheel zoom, not one per event.
    // With nothing on screen yet, load now; but a snapshot's first window in a task of its own
    // (timeout 0): the task that received the file also holds its last part and React's switch
    // to snapshot mode, and a big file's heat maps take tens of ms more.
    const delay = this.current ? LOAD_DEBOUNCE : this.snap ? 0 : undefined;
    const run = (): void => {
      if (gen !== this.loadGen) return;
      this.loadNow(gen, want);
    };
    if (delay === undefined) {
      run();
      return;
    }
    this.pending++;
    this.fetchTimer = setTimeout(() => {
      this.fetchTimer = undefined;
      this.pending--;
      run();
    }, delay);
  }

  private loadNow(gen: number, want: { step: number; from: number; to: number; following: boolean }): void {
    if (this.snap) {
      this.buildThenInstall(gen, {
        ...want,
        schema: this.snap.snapshot.schema,
        requestedStep: want.step,
        frames: this.snap.log.range(want.from, want.to),
        coveredTo: want.to,
        // A snapshot leaves idle steps out: a missing frame there is not a gap.
        knownFrom: Infinity,
        provisional: false,
      });
      return;
    }
    const edge = this.edge();
    const connected = this.client?.connected === true;
    // Seconds before the agent's oldest hold nothing to fetch: the buffer need not cover them.
    const oldest = this.lowest();
    const inLive = this.live.covers(oldest === undefined ? want.from : Math.max(want.from, oldest), Math.min(want.to, edge));
    if (inLive || !connected) {
      this.install({
        ...want,
        schema: this.schema(),
        requestedStep: want.step,
        frames: this.live.range(want.from, want.to),
        coveredTo: Math.min(want.to, this.live.coveredTo ?? want.from),
        knownFrom: this.live.coveredFrom !== undefined ? Math.max(want.from, this.live.coveredFrom) : Infinity,
        // Not connected and not in the live buffer: what we show is a placeholder.
        provisional: !inLive,
      });
      return;
    }
    // History the browser does not hold: ask the agent.
    this.pending++;
    void this.fetchWindow(gen, want).finally(() => this.pending--);
  }

  private async fetchWindow(gen: number, want: { step: number; from: number; to: number; following: boolean }): Promise<void> {
    const client = this.client;
    // The agent answers in its schema; a new one (a new hello) bumps loadGen, dropping this answer.
    const schema = this.schema();
    const edge = this.edge();
    const fetchTo = Math.max(want.from, Math.min(want.to, alignFloor(edge, want.step)));
    let frames: Frame[] = [];
    let step = want.step;
    let failed = false;
    try {
      if (!client || !client.connected) throw new Error('not connected to the agent');
      let from = want.from;
      while (from < fetchTo) {
        const to = Math.min(fetchTo, from + MAX_FRAMES_PER_ANSWER * step);
        const answer = await client.request({ t: 'range', from, to, step: want.step });
        if (gen !== this.loadGen) return;
        step = Math.max(step, answer.step);
        frames.push(...answer.frames);
        // The agent may stop early (answer cap): continue after what it covered.
        from = answer.to > from ? answer.to : to;
      }
    } catch (e) {
      if (gen !== this.loadGen) return;
      // Show what the live buffer has rather than nothing, and say why the rest is missing.
      frames = [];
      failed = true;
      notify('error', `could not fetch history for this range: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (gen !== this.loadGen) return;
    const tail = this.live.range(fetchTo, want.to);
    frames = frames.filter((f) => f.ts >= want.from && f.ts < fetchTo).concat(tail);
    const from = alignFloor(want.from, step);
    this.install({
      ...want,
      schema,
      from,
      to: alignCeil(want.to, step),
      step,
      requestedStep: want.step,
      frames,
      coveredTo: Math.max(fetchTo, this.live.coveredTo ?? fetchTo),
      // The agent answered for [from, fetchTo): a second it sent no frame for was not recorded.
      knownFrom: failed ? Math.max(from, this.live.coveredFrom ?? Infinity) : from,
      // A failed fetch was reported; retrying on every live second would repeat the error.
      // It is retried when the connection comes back (if that was the cause) or on the next zoom.
      provisional: failed && !this.client?.connected,
    });
  }

  /**
   * A snapshot window: its heat maps are built one disk per task (a big file's take tens of ms
   * each, too much for one task with React's render after them), then installed.
   */
  private buildThenInstall(gen: number, w: WindowSource): void {
    const ui = this.ui();
    const made: Built = { filterKey: filterKey(ui.kind, ui.classes), devs: this.resolveDevs(ui), matrices: new Map() };
    const filter = this.filterFor(ui);
    this.pending++;
    const next = (i: number): void => {
      const dev = made.devs[i];
      if (gen !== this.loadGen) this.pending--;
      else if (dev === undefined) {
        this.pending--;
        this.install(w, made);
      } else {
        made.matrices.set(dev, matrixOf(w, { ...filter, dev }));
        setTimeout(() => next(i + 1), 0);
      }
    };
    next(0);
  }

  /** What a window is made of; the rest of DataWindow is derived from it (`built`: heat maps made for it already). */
  private install(w: WindowSource, built?: Built): void {
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
    this.derive(cur, built);
    this.bump();
  }

  private filterFor(ui: UiState): Omit<MatrixFilter, 'dev'> {
    return { kind: ui.kind, classes: ui.classes.length > 0 ? new Set(ui.classes) : undefined };
  }

  /** Disks to draw: the user's choice (by name or MAJ:MIN), else every disk with I/O. */
  resolveDevs(ui: UiState = this.ui()): string[] {
    const byName = new Map(ui.disks.map((d) => [d.name, d.dev]));
    const known = new Set(ui.disks.map((d) => d.dev));
    let devs: string[];
    if (ui.diskChoice !== undefined) {
      devs = ui.diskChoice.map((x) => byName.get(x) ?? x).filter((d) => known.has(d) || this.active.has(d));
    } else {
      devs = [...this.active.keys()].sort(compareDev).slice(0, AUTO_DISKS);
    }
    return [...new Set(devs)].sort(compareDev);
  }

  /** Rebuilds matrices, tracks and domains of a window from its frames. */
  private derive(cur: DataWindow, built?: Built): void {
    const ui = this.ui();
    const filter = this.filterFor(ui);
    const devs = this.resolveDevs(ui);
    cur.filterKey = filterKey(ui.kind, ui.classes);
    cur.devs = devs;
    // Heat maps built ahead are used only if the filter and the disks did not change meanwhile.
    const ready = built && built.filterKey === cur.filterKey && sameList(built.devs, devs) ? built.matrices : undefined;
    cur.matrices = new Map();
    cur.tracks = new Map();
    for (const dev of devs) {
      const m = ready?.get(dev) ?? matrixOf(cur, { ...filter, dev });
      cur.matrices.set(dev, m);
      cur.tracks.set(dev, new PercentileTrack(m, cur.schema));
    }
    this.fitDomains(cur);
    if (!sameList(ui.shownDevs, devs)) useUi.setState({ shownDevs: devs });
    this.summaryCache = undefined;
  }

  /** What the window knows about which seconds were recorded (see model/gaps.ts). */
  known(cur: DataWindow | undefined = this.current): Known {
    if (!cur || this.snap || !(cur.knownFrom < cur.coveredTo)) return NOTHING_KNOWN;
    // Before the agent's oldest second nothing was recorded, by definition: when what we know
    // reaches back to it, the seconds before it are "no data" too, not a quiet disk.
    const historyFrom = this.ui().agent?.historyFrom;
    const from = historyFrom !== undefined && cur.knownFrom <= historyFrom ? -Infinity : cur.knownFrom;
    return { from, to: cur.coveredTo };
  }

  /** The colour scale a disk's heat map is drawn with (its own, or the shared one). */
  scaleFor(dev: string, cur: DataWindow | undefined = this.current): CountScale | undefined {
    if (!cur) return undefined;
    return this.ui().norm === 'shared' ? cur.scale : (cur.scales.get(dev) ?? cur.scale);
  }

  /** Columns [c0, c1) of the window on screen now. */
  private visibleColumns(cur: DataWindow): [number, number] {
    const ui = this.ui();
    const v = ui.view.following ? liveView(this.edge(), ui.view.span) : ui.view;
    return [Math.floor(v.from / cur.step), Math.ceil(v.to / cur.step)];
  }

  /**
   * Colour scales from the visible cells: each disk's from its own busiest visible cell,
   * the shared one from the busiest of all. With `since` (a live append) only columns from
   * that second on are looked at and scales only widen; otherwise they are refitted (and may
   * narrow). Returns true when a scale changed (the heat maps recolour).
   */
  private fitScales(cur: DataWindow, since?: number): boolean {
    const kind = this.ui().colour;
    const grow = since !== undefined;
    const [v0, c1] = this.visibleColumns(cur);
    const c0 = grow ? Math.max(v0, Math.floor(since / cur.step)) : v0;
    let changed = false;
    let all = 0;
    const scales = new Map<string, CountScale>();
    for (const [dev, m] of cur.matrices) {
      const max = m.maxCell(c0, c1);
      all = Math.max(all, max);
      const old = cur.scales.get(dev);
      const domain = colourDomain(max, old?.max, grow);
      const keep = old && old.max === domain && old.kind === kind;
      scales.set(dev, keep ? old : new CountScale(kind, domain));
      if (!keep) changed = true;
    }
    if (cur.scales.size !== scales.size) changed = true;
    cur.scales = scales;
    const domain = colourDomain(all, cur.scale.max, grow);
    if (domain !== cur.scale.max || cur.scale.kind !== kind) {
      cur.scale = new CountScale(kind, domain);
      changed = true;
    }
    return changed;
  }

  /**
   * Latency window from the data and colour scales from the visible cells; with `since` (live
   * appends) both only widen, looking at the new columns only.
   */
  private fitDomains(cur: DataWindow, since?: number): void {
    const grow = since !== undefined;
    let lo = Infinity;
    let hi = -Infinity;
    for (const m of cur.matrices.values()) {
      const ext = grow ? m.rowExtent(Math.floor(since / cur.step), m.end) : m.rowExtent();
      if (ext) {
        lo = Math.min(lo, ext[0]);
        hi = Math.max(hi, ext[1]);
      }
    }
    if (grow && !Number.isFinite(lo)) {
      this.fitScales(cur, since);
      return;
    }
    if (!Number.isFinite(lo)) {
      lo = bucketOfSeconds(10e-6, cur.schema);
      hi = bucketOfSeconds(100e-3, cur.schema);
    }
    // Pad by at least three quarters of an octave, snap to whole octaves (2^scale buckets), at
    // least MIN_Y_OCTAVES tall: the same latencies at either scale, twice the rows at scale 3.
    const rows = bucketCount(cur.schema);
    const octave = 2 ** cur.schema.scale;
    const pad = (3 * octave) / 4;
    const minRows = MIN_Y_OCTAVES * octave;
    let yLo = Math.max(0, Math.floor((lo - pad) / octave) * octave);
    let yHi = Math.min(rows, Math.ceil((hi + 1 + pad) / octave) * octave);
    while (yHi - yLo < minRows) {
      if (yLo > 0) yLo = Math.max(0, yLo - octave);
      if (yHi - yLo < minRows && yHi < rows) yHi = Math.min(rows, yHi + octave);
      if (yLo === 0 && yHi === rows) break;
    }
    if (grow) {
      yLo = Math.min(yLo, cur.yLo);
      yHi = Math.max(yHi, cur.yHi);
    }
    cur.yLo = yLo;
    cur.yHi = yHi;
    if (this.ui().latencyRows !== yHi - yLo) useUi.setState({ latencyRows: yHi - yLo });
    this.fitScales(cur, since);
  }

  private widenDomains(cur: DataWindow, since: number): void {
    this.fitDomains(cur, since);
  }

  /** Colour scale kind changed: new scale objects, bitmaps recolour. */
  recolour(): void {
    const cur = this.current;
    if (!cur) return;
    const kind = this.ui().colour;
    cur.scale = new CountScale(kind, cur.scale.max);
    cur.scales = new Map([...cur.scales].map(([dev, sc]) => [dev, new CountScale(kind, sc.max)]));
    this.bump();
  }

  private bump(): void {
    this.summaryCache = undefined;
    useUi.setState((s) => ({ dataVersion: s.dataVersion + 1 }));
    this.scheduleSummary();
  }

  // ---------------------------------------------------------------- summaries

  private summarySince = 0;
  /** Bumped to abandon a summary being computed in slices (the data changed, or a newer run started). */
  private summaryRun = 0;
  private summaryRunning = false;
  /** The last summary of this source, shown while a big one is computed (see summary()). */
  private summaryShown: Summary | undefined;

  /**
   * Recomputes summaries once changes pause (debounced; at most SUMMARY_MAX_WAIT late).
   * `dataChanged`: frames or matrices changed, so a run in progress sums what no longer is and
   * is dropped. A view change lets it finish (the next run catches up), or a long gesture over
   * a big range would never see one end.
   */
  private scheduleSummary(dataChanged = true): void {
    if (dataChanged) {
      this.summaryRun++;
      this.summaryRunning = false;
    }
    const now = performance.now();
    if (this.summaryTimer !== undefined) {
      if (now - this.summarySince >= SUMMARY_MAX_WAIT) return; // let the pending one fire
      clearTimeout(this.summaryTimer);
    } else {
      this.summarySince = now;
    }
    this.summaryTimer = setTimeout(() => {
      this.summaryTimer = undefined;
      this.runSummary();
    }, SUMMARY_DELAY);
  }

  /**
   * Computes the summary in tasks of about SUMMARY_TASK_MS (a whole imported snapshot takes a
   * few hundred ms in all, more than one task may hold the page), then refits the colours.
   */
  private runSummary(): void {
    const run = ++this.summaryRun; // one run at a time: this one replaces any still going
    this.summaryRunning = false;
    const input = this.summaryInput();
    const cached = this.summaryCache;
    if (!input || (cached && cached.from === input.from && cached.to === input.to && cached.step === input.step)) {
      this.summaryDone();
      return;
    }
    const steps = summarize(input);
    this.summaryRunning = true;
    const next = (): void => {
      if (run !== this.summaryRun) return;
      const t0 = performance.now();
      let r = steps.next();
      while (!r.done && performance.now() - t0 < SUMMARY_TASK_MS) r = steps.next();
      if (!r.done) {
        setTimeout(next, 0);
        return;
      }
      this.summaryRunning = false;
      this.keepSummary(r.value);
      this.summaryDone();
    };
    next();
  }

  /** The view settled and its summary is ready: colours follow what is visible now (they may narrow, too). */
  private summaryDone(): void {
    const cur = this.current;
    const recolour = cur !== undefined && this.fitScales(cur);
    useUi.setState((s) => ({ summaryVersion: s.summaryVersion + 1, ...(recolour ? { dataVersion: s.dataVersion + 1 } : {}) }));
  }

  get summaryPending(): boolean {
    return this.summaryTimer !== undefined || this.summaryRunning;
  }

  /**
   * The last computed summary, even if the view moved since (views draw this while a gesture
   * runs; the debounced recompute catches up). When the data changed, a small range is summed
   * now; a big one is left to the sliced run and the previous summary of this source (or none)
   * is shown meanwhile, so no render holds the page for a whole snapshot.
   */
  summary(): Summary | undefined {
    if (this.summaryCache) return this.summaryCache;
    const cur = this.current;
    if (cur && summaryWeight(cur.frames, SUMMARY_NOW_WEIGHT) <= SUMMARY_NOW_WEIGHT) return this.freshSummary();
    return this.summaryShown;
  }

  /** What a summary of the visible range right now (whole columns) is computed from. */
  private summaryInput(): SummaryInput | undefined {
    const cur = this.current;
    if (!cur) return undefined;
    const ui = this.ui();
    const view = ui.view.following ? liveView(this.edge(), ui.view.span) : ui.view;
    const from = Math.max(cur.from, alignFloor(view.from, cur.step));
    const to = Math.max(from, Math.min(cur.to, alignCeil(view.to, cur.step)));
    return {
      from,
      to,
      step: cur.step,
      frames: cur.frames,
      matrices: cur.matrices,
      devs: new Set(cur.devs),
      kind: ui.kind,
      schema: cur.schema,
      snapshotRange: this.snap?.snapshot.range,
      known: this.known(cur),
    };
  }

  private keepSummary(s: Summary): Summary {
    this.summaryCache = s;
    this.summaryShown = s;
    return s;
  }

  /** Histograms and breakdowns of the visible range right now (whole columns), memoised; computed at once. */
  freshSummary(): Summary | undefined {
    const input = this.summaryInput();
    if (!input) return undefined;
    const c = this.summaryCache;
    if (c && c.from === input.from && c.to === input.to && c.step === input.step) return c;
    return this.keepSummary(summarizeNow(input));
  }

  // ---------------------------------------------------------------- samples

  async loadSamples(sel: CellSelection): Promise<void> {
    useUi.setState({ selection: sel, samples: { status: 'loading', rows: [], truncated: false } });
    const query = selectionQuery(sel);
    const still = (): boolean => this.ui().selection === sel;
    this.pending++;
    try {
      let rows: IoSample[];
      let truncated: boolean;
      if (this.snap) {
        const r = matchSamples(this.snap.snapshot.samples, query, SAMPLE_LIMIT);
        rows = r.samples;
        truncated = r.truncated;
      } else {
        if (!this.client?.connected) throw new Error('not connected to the agent');
        const answer = await this.client.request({
          t: 'samples',
          from: query.from,
          to: query.to,
          kind: query.kind,
          minNs: query.minNs,
          maxNs: Math.min(query.maxNs, Number.MAX_SAFE_INTEGER),
          disks: [...query.disks],
          ...(query.classes ? { classes: [...query.classes] } : {}),
          limit: Math.min(SAMPLE_LIMIT, MAX_SAMPLES_PER_ANSWER),
        });
        rows = [...answer.samples];
        truncated = answer.truncated;
      }
      if (still()) useUi.setState({ samples: { status: 'done', rows, truncated } });
    } catch (e) {
      if (still())
        useUi.setState({ samples: { status: 'error', rows: [], truncated: false, error: e instanceof Error ? e.message : String(e) } });
    } finally {
      this.pending--;
    }
  }
}

export const data = new DataManager();

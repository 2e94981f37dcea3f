/**
 * The source of the data on screen: live (a frame log fed by the agent's stream, the last
 * hour) or an imported snapshot (its frames). Owns the bucket schema the source names (live:
 * the agent's hello; snapshot: the file's), the agent's disks and which disks have I/O. Where
 * the source ends (its edge) is where a live view stands; see visible().
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import {
  type BucketSchema,
  BUCKET_SCHEMA,
  sortedByDev,
  type DiskInfo,
  type Frame,
  type HelloMessage,
  type LatencyKind,
  MAX_SPAN_SECONDS,
  sameSchema,
  schemaProblem,
  type Snapshot,
} from '@blkheat/shared-types';
import { SourceActivity } from '../model/activity.js';
import { liveView, type ViewLimits, type ViewState } from '../model/view.js';
import type { AgentClient } from '../net/client.js';
import type { SliceStore, SnapshotInfo, SourceSlice } from '../store/pipelineStore.js';
import type { UiReader } from '../store/uiStore.js';
import { fleetRangePhases } from './fleetWindow.js';
import { FrameLog } from './frameLog.js';

/** Live frames kept in the browser (seconds). */
const LIVE_KEEP = 3600;

/** What the pipeline's parts need of the agent client (tests pass a stand-in). */
export type AgentSource = Pick<AgentClient, 'connected' | 'hello' | 'request'>;

/** The live frame log as the other parts see it: read-only. */
export type LiveLog = Readonly<Pick<FrameLog, 'coveredFrom' | 'coveredTo' | 'covers' | 'range' | 'size' | 'last'>>;

/** Where a source's live data ends, as its hello says (DataSource.setAgentClock). */
export interface LiveClock {
  /** The source's clock at its hello (hello.now, unix s). */
  readonly now: number;
  /** When the hello came (ms, this page's clock). */
  readonly atMs: number;
  /** End of the newest second or column closed at `now`: an agent's `now`, a fleet's `fleet.liveTo`. */
  readonly end: number;
  /** Live step (s): 1 for an agent, hello.step for a fleet. */
  readonly step: number;
  /** How long after its end a column closes (s): 0 for an agent (by its clock), a fleet's `fleet.liveLag`. */
  readonly lag: number;
  /**
   * The view moves with this clock, not only with live frames (SourceOptions.onEdgeMoved): a
   * fleet's (a big fleet sends no live frames). An agent's frames move it each second.
   */
  readonly ticks: boolean;
}

/**
 * The live clock a hello says: an agent's now; a fleet server's live end (protocol 6: liveTo,
 * liveLag, at its step). A fleet server that has not said it (its first seconds, or before it
 * could) gives its clock as an agent's: the view waits at now for the columns (loading), never
 * on an old window such as the end of an empty backfill (a big fleet sends no live frames).
 */
export function helloClock(hello: Pick<HelloMessage, 'now' | 'step' | 'fleet'>, atMs: number): LiveClock {
  const liveTo = hello.fleet?.liveTo;
  if (liveTo === undefined) return { now: hello.now, atMs, end: hello.now, step: 1, lag: 0, ticks: false };
  return { now: hello.now, atMs, end: liveTo, step: hello.step, lag: hello.fleet?.liveLag ?? 0, ticks: true };
}

export interface SourceOptions {
  readonly ui: UiReader;
  readonly store: SliceStore<SourceSlice>;
  /** Called when live frames name a disk the agent has not described (yet). */
  readonly onUnknownDisk?: ((dev: string) => void) | undefined;
  /** Called each time a clock that ticks (LiveClock.ticks) moves the live edge on. */
  readonly onEdgeMoved?: (() => void) | undefined;
}

function snapshotInfo(snapshot: Snapshot, name: string): SnapshotInfo {
  return {
    name,
    version: snapshot.version,
    host: snapshot.host,
    agent: snapshot.agent,
    createdAt: snapshot.createdAt,
    note: snapshot.note,
    range: snapshot.range,
    samples: snapshot.samples.length,
  };
}

export class DataSource {
  private readonly ui: UiReader;
  private readonly store: SliceStore<SourceSlice>;
  private readonly onUnknownDisk: ((dev: string) => void) | undefined;
  private readonly onEdgeMoved: (() => void) | undefined;
  /** Fires when a ticking clock next moves the edge. */
  private clockTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly log = new FrameLog(LIVE_KEEP);
  private snap: { snapshot: Snapshot; log: FrameLog } | undefined;
  /** The schema of the live frames (the last hello's); undefined before the first hello. */
  private liveSchema: BucketSchema | undefined;
  /**
   * The step of the live frames (the last hello's): 1, or a fleet server's scrape interval over
   * 1 s (protocol 6). Views of live data are never finer.
   */
  private liveStep = 1;
  /** Why the agent's schema cannot be drawn (its frames are then dropped), if it cannot. */
  private liveRefusal: string | undefined;
  /** Disks with I/O in the source (completed or in flight), its submit-wait timing and its cgroup phases. */
  private activity = new SourceActivity();
  /** The agent's disks (kept while a snapshot replaces them on screen). */
  private agentList: readonly DiskInfo[] = [];
  /** The source's clock at its last hello and when that came (see setAgentClock). */
  private agentClock: LiveClock | undefined;
  /** Ranges are asked with queue latency (a fleet's only once the page has shown it: rangePhases). */
  private queueAsked = false;
  /**
   * Where the live frames dropped by askQueue reached: the live edge stays there. Without it the
   * edge fell back to the clock's (which closes a column `lag` after the frame that brought it
   * came), and the newest column left the page until the next scrape (fleet-live-browser.test.ts
   * read the view one 15 s column short after the switch). Forgotten when the live frames are
   * dropped for another step or schema: their edge is then not this source's.
   */
  private droppedEdge = -Infinity;

  constructor(options: SourceOptions) {
    this.ui = options.ui;
    this.store = options.store;
    this.onUnknownDisk = options.onUnknownDisk;
    this.onEdgeMoved = options.onEdgeMoved;
  }

  /** The latency phases ranges are asked for (fleetWindow.ts fleetRangePhases): undefined, every one. */
  rangePhases(): readonly LatencyKind[] | undefined {
    return fleetRangePhases(this.ui.getState(), this.queueAsked);
  }

  /**
   * The page shows queue latency: ranges are asked with it from now on. True when the live frames
   * held were asked without it (a fleet's ranges that named device latency alone: their `q` are
   * empty, not "no queue latency"): they are dropped, and whatever was derived from them must be
   * asked again (as after a new schema). Once asked, queue latency stays asked: going back to
   * device latency drops nothing.
   */
  askQueue(): boolean {
    if (this.queueAsked) return false;
    const lacked = this.rangePhases() !== undefined;
    this.queueAsked = true;
    if (!lacked) return false;
    this.droppedEdge = this.edge();
    this.log.clear();
    // A snapshot on screen has its own frames: the live ones are asked again when it closes.
    return this.snap === undefined;
  }

  /** The live frames held (kept while a snapshot is on screen). */
  get live(): LiveLog {
    return this.log;
  }

  get snapshot(): Snapshot | undefined {
    return this.snap?.snapshot;
  }

  get agentDisks(): readonly DiskInfo[] {
    return this.agentList;
  }

  /**
   * End of the newest complete second (live) or the snapshot's end. Live, the newest second the
   * frames reach (or reached before askQueue dropped them), or the source's clock where that is
   * ahead (see clockEdge).
   */
  edge(): number {
    if (this.snap) return this.snap.snapshot.range.to;
    const covered = this.log.coveredTo;
    const last = this.log.last;
    const e = Math.max(covered ?? -Infinity, last ? last.ts + last.step : -Infinity, this.clockEdge(), this.droppedEdge);
    return Number.isFinite(e) ? e : Math.floor(Date.now() / 1000);
  }

  /**
   * Where the source's live data ends, from its hello: an agent's clock (`now`; its seconds close
   * one a second), or a fleet server's `fleet.liveTo` (its columns of `step` close one a step,
   * `lag` after their end); see helloClock. `atMs`: when the hello came, on this page's clock. A live view stands there from its first
   * paint, not where the backfill has got to, and moves on with it, live frames or not.
   */
  setAgentClock(clock: LiveClock): void {
    this.agentClock = clock;
    this.armClockTick();
  }

  /** A ticking clock calls onEdgeMoved as it moves the edge on, a step at a time (see clockEdge). */
  private armClockTick(): void {
    clearTimeout(this.clockTimer);
    const c = this.agentClock;
    if (!c?.ticks || !this.onEdgeMoved) return;
    const since = c.now + (Date.now() - c.atMs) / 1000 - c.end - c.lag;
    const next = (Math.max(0, Math.floor(since / c.step)) + 1) * c.step;
    this.clockTimer = setTimeout(
      () => {
        this.armClockTick();
        if (!this.snap) this.onEdgeMoved?.();
      },
      Math.max(10, (next - since) * 1000 + 5),
    );
  }

  /**
   * The end of the newest second (agent) or column (fleet) surely closed by the source's clock:
   * the hello's end moved on a step each `step` seconds after the next one closes (`end + step +
   * lag` on the source's clock: its `now` then, moved on by the time since on this page's). An
   * agent's hello.now is whole seconds, so at most its time then; a fleet's lag was measured when
   * its edge last moved. While the backfill still brings older seconds (oldest first, for seconds
   * on end), the live edge is here, so an old window is never shown as live; in steady state the
   * frames reach it (a column's frame comes just after it closes), and a big fleet, which sends
   * none, is read at it by range. -Infinity before a hello.
   */
  private clockEdge(): number {
    const c = this.agentClock;
    if (!c) return -Infinity;
    const sourceNow = c.now + (Date.now() - c.atMs) / 1000;
    return c.end + c.step * Math.max(0, Math.floor((sourceNow - c.end - c.lag) / c.step));
  }

  /** Oldest second the source can answer for. */
  lowest(): number | undefined {
    if (this.snap) return this.snap.snapshot.range.from;
    return this.ui.getState().agent?.historyFrom ?? this.log.coveredFrom;
  }

  minStep(): number {
    return this.snap ? this.snap.snapshot.range.step : this.liveStep;
  }

  limits(): ViewLimits {
    return { minSpan: Math.max(10, this.minStep() * 4), maxSpan: MAX_SPAN_SECONDS, lowest: this.lowest(), highest: this.edge() };
  }

  /** The time window on screen now: the UI's view, or while it follows live its span up to the edge. */
  visible(): ViewState {
    const v = this.ui.getState().view;
    return v.following ? liveView(this.edge(), v.span) : v;
  }

  /**
   * The bucket schema of the source on screen: the snapshot's, else the agent's (BUCKET_SCHEMA
   * before any hello, when there is no data yet).
   */
  schema(): BucketSchema {
    return this.snap?.snapshot.schema ?? this.liveSchema ?? BUCKET_SCHEMA;
  }

  /** Frames of the snapshot with from ≤ ts < to (none when live). */
  snapshotFrames(from: number, to: number): Frame[] {
    return this.snap ? this.snap.log.range(from, to) : [];
  }

  /** Disks with I/O in the source, in device order. */
  activeDevs(): string[] {
    return this.activity.devs();
  }

  hasActive(dev: string): boolean {
    return this.activity.has(dev);
  }

  /**
   * Frames of the agent's history (a range it answered): their disks and phases are the source's
   * as live frames' are. A page opened on a past range with `lat=total` would otherwise sum it as
   * device latency until the first live frame came, then again as total (phase-split.test.ts saw
   * it once); and a disk busy in the range, not in the live frames yet (or idle since), had no row:
   * the cgroup table of such a page read another disk's until the first live frame came
   * (cgroups.test.ts saw it once).
   */
  noteHistory(frames: readonly Frame[]): void {
    if (this.snap) return;
    this.noteActive(frames);
  }

  /** Notes the disks and phases of frames of the source; true when a disk showed I/O for the first time. */
  private noteActive(frames: readonly Frame[]): boolean {
    const fresh = this.activity.note(frames);
    if (!this.snap) for (const dev of fresh) if (!this.agentList.some((x) => x.dev === dev)) this.onUnknownDisk?.(dev);
    this.publishSubmitTiming();
    return fresh.length > 0;
  }

  /** The source's submit-wait timing and cgroup phases as the pipeline store says them (phases follow them: app.ts). */
  private publishSubmitTiming(): void {
    const { submitTiming, cgroupPhases } = this.store.getState();
    const known = this.activity;
    if (submitTiming !== known.submitTiming || cgroupPhases !== known.cgroupPhases) {
      this.store.setState({ submitTiming: known.submitTiming, cgroupPhases: known.cgroupPhases });
    }
  }

  /** The data on screen changed source: what is known of its timing starts again. */
  private forgetActive(): void {
    this.activity = new SourceActivity();
  }

  private publishSchema(): void {
    const schema = this.schema();
    if (!sameSchema(this.store.getState().schema, schema)) this.store.setState({ schema });
  }

  /**
   * Live frames from the stream (or a gap fill) into the log: returns those it did not hold
   * (none while the agent's schema is refused), and whether a disk showed I/O for the first time.
   */
  insertLive(frames: readonly Frame[]): { added: Frame[]; newDisk: boolean } {
    if (this.liveRefusal !== undefined) return { added: [], newDisk: false }; // buckets of a schema this page cannot draw
    const added = this.log.insert(frames);
    if (added.length === 0) return { added, newDisk: false };
    // While a snapshot is open, live frames wait in the log (closeSnapshot notes their disks):
    // noting them now would draw the live disks beside the snapshot's, as rows with no data.
    const newDisk = !this.snap && this.noteActive(added);
    const last = this.log.last;
    if (!this.snap && last) this.store.setState({ lastFrameTs: last.ts, lastFrame: last });
    return { added, newDisk };
  }

  /** The agent says every second of [from, to) was sent. */
  coverLive(from: number, to: number): void {
    this.log.cover(from, to);
  }

  /**
   * The agent named its bucket schema and live step (every hello does). A different schema than
   * before (the agent was restarted with another --schema) makes the live frames held so far
   * meaningless rows, and another step (a fleet server's hosts now scraped at another interval)
   * columns of another width: they are dropped, and `reset` says the live data on screen went
   * with them (everything derived from it must be rebuilt at the new size). `problem`: why the
   * schema cannot be drawn, if it cannot (its frames are then ignored).
   */
  setLiveSchema(schema: BucketSchema, step = 1): { problem: string | undefined; reset: boolean } {
    const problem = schemaProblem(schema);
    const before = this.liveSchema;
    const stepChanged = step !== this.liveStep;
    this.liveStep = step;
    const wasRefused = this.liveRefusal !== undefined;
    this.liveRefusal = problem;
    this.liveSchema = problem === undefined ? schema : undefined;
    const changed = before !== undefined && (problem !== undefined || !sameSchema(before, schema) || stepChanged);
    this.publishSchema();
    if (!changed && !(wasRefused && problem === undefined)) return { problem, reset: false };
    this.log.clear();
    this.droppedEdge = -Infinity;
    if (this.snap) return { problem, reset: false }; // the snapshot stays on screen; live restarts from the new frames
    this.forgetActive();
    this.publishSubmitTiming();
    return { problem, reset: true };
  }

  /** The agent's disks (a hello, a disks message, or a fetch of the list). Returns true when they are the ones on screen. */
  setAgentDisks(disks: readonly DiskInfo[]): boolean {
    this.agentList = sortedByDev(disks, (d) => d.dev);
    if (this.snap) return false;
    this.store.setState({ disks: this.agentList });
    return true;
  }

  /**
   * Shows `snapshot`. `activity`: what its frames say, when it was gathered already (an imported
   * file's, while its parts arrived); else it is gathered here.
   */
  loadSnapshot(snapshot: Snapshot, name: string, activity?: SourceActivity): void {
    const log = new FrameLog();
    log.insert(snapshot.frames);
    log.cover(snapshot.range.from, snapshot.range.to);
    this.snap = { snapshot, log };
    this.forgetActive();
    if (activity) {
      this.activity = activity;
      this.publishSubmitTiming();
    } else this.noteActive(snapshot.frames);
    this.store.setState({
      mode: 'snapshot',
      snapshot: snapshotInfo(snapshot, name),
      disks: sortedByDev(snapshot.disks, (d) => d.dev),
    });
    this.publishSchema();
  }

  /** Back to live; false when no snapshot was open. */
  closeSnapshot(): boolean {
    if (!this.snap) return false;
    this.snap = undefined;
    this.forgetActive();
    this.noteActive(this.log.frames);
    this.store.setState({ mode: 'live', snapshot: undefined, disks: this.agentList });
    this.publishSchema();
    return true;
  }
}

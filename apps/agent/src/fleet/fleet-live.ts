/**
 * The fleet server's live edge: every second, the newest columns every host has been scraped
 * for are read from Prometheus (fleet-frames.ts, scrape by scrape), kept in a private history
 * (the live tail, which backfills and reconnects read as they do on an agent) and broadcast.
 *
 * The live step is the coarsest scrape interval of the hosts (the finest step every host has):
 *  - at 1 s, each frame is a second of the agents' own, as on an agent;
 *  - over 1 s, each frame is a column of that step, aligned to it as range columns are, holding
 *    every host's scrape differences that start in it (dated by the agents' window ends, exactly
 *    as a range at that step has them). A column is sent once every host has been scraped past
 *    its end, so the live edge advances a column per scrape.
 * The tail's history has that step (HistoryStore fineStep): when the step changes (hosts at
 * another interval came or went), the tail starts afresh and the pages are told to reconnect
 * (CLOSE_CODES.restart), so that their hello names the new step.
 *
 * Where the fleet's data ends now (clock(): the hello's fleet.liveTo and liveLag) is kept here
 * too, small fleet and big: the end of the newest column every current host has been scraped
 * past, dated by the agents' window ends as the live columns are, and how long after its end it
 * was seen complete. A small fleet's rounds read it with their columns; a big fleet, which makes
 * no live frames (docs/fleet.md), reads it alone (clockRound: one instant query whatever the
 * fleet's size). A page stands there from its first paint and moves on a step per `step`
 * seconds (apps/web pipeline/source.ts), with or without live frames.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { alignDown, type BucketSchema, type Frame } from '@blkheat/shared-types';
import { HistoryStore } from '../history/store.js';
import type { StreamHub } from '../server/hub.js';
import type { FleetDirectory } from './fleet-disks.js';
import { WINDOW_END_METRIC } from '../server/metrics.js';
import { currentHostBound, fleetFrames } from './fleet-frames.js';
import type { PrometheusApi } from './prometheus-api.js';

/** The live tail read at start, and the longest gap the live loop fills in one go (s). */
const LIVE_CATCH_UP_S = 600;
/** A big fleet's clock is read this often (s) while its edge is due to move (nextClockReadingMs)... */
export const CLOCK_EVERY_S = 1;
/** ...from this long (s) before a step after its last move: scrapes drift by less. */
const CLOCK_EARLY_S = 1.5;

export interface FleetLiveOptions {
  readonly api: PrometheusApi;
  readonly dir: FleetDirectory;
  readonly schema: BucketSchema;
  /** A private directory the tail's history lives in (removed by the caller). */
  readonly tailDir: string;
  readonly log: (line: string) => void;
  /** The clock, unix seconds (tests run the live loop on simulated time); default the system's. */
  readonly nowS?: () => number;
}

/** What the live edge uses of the stream hub: it broadcasts columns, and has the pages reconnect. */
export type LiveHub = Pick<StreamHub, 'broadcastFrame' | 'restartClients'>;

/** Where the fleet's data ends (FleetInfo.liveTo, liveLag). */
export interface FleetClock {
  /** End of the newest column (of the live step) every current host has been scraped past (unix s). */
  readonly liveTo: number;
  /** Seconds after its end the newest column was seen complete, when the edge last moved. */
  readonly liveLag: number;
}

export class FleetLive {
  private tail: HistoryStore;
  private generation = 0;
  /** The next column to read: the newest one the tail has, plus a step. */
  private liveFrom: number | undefined;
  private hub: LiveHub | undefined;
  /**
   * The newest second every current host has been scraped past (not aligned: a new step aligns
   * it afresh), and the clock when the aligned edge last moved, less that edge (the lag).
   */
  private ends: { completeTo: number; liveTo: number; lag: number } | undefined;
  /** When a big fleet's clock was last read (unix s), and when a reading last saw its edge move within a second or so of the move (clockRound). */
  private clockReadAt: number | undefined;
  private edgeMovedAt: number | undefined;

  private readonly nowS: () => number;

  constructor(private readonly o: FleetLiveOptions) {
    this.nowS = o.nowS ?? ((): number => Date.now() / 1000);
    this.tail = this.open(1);
  }

  /** The live tail (its fineStep is the live step). */
  get history(): HistoryStore {
    return this.tail;
  }

  get step(): number {
    return this.tail.fineStep;
  }

  /** The hub frames are broadcast on (set once it exists). */
  attach(hub: LiveHub): void {
    this.hub = hub;
  }

  /**
   * The hosts' coarsest scrape interval (s), once known: a new step starts the tail afresh, and
   * the pages reconnect for a hello that names it.
   */
  setStep(coarsest: number): void {
    const step = Math.max(1, Math.ceil(coarsest));
    if (step === this.step) return;
    const old = this.tail;
    const oldDir = this.dirOf(this.generation);
    this.tail = this.open(step);
    this.liveFrom = undefined;
    // The pages reconnect at once: their hello names the edge at the new step (its lag is known
    // again when that edge next moves).
    if (this.ends) this.noteComplete(this.ends.completeTo, this.nowS(), true);
    this.edgeMovedAt = undefined;
    old.close();
    rmSync(oldDir, { recursive: true, force: true });
    this.o.log(`fleet: live columns of ${step} s (the hosts' coarsest scrape interval)`);
    this.hub?.restartClients(`the fleet's live step is now ${step} s`);
  }

  /**
   * One round: the columns completed since the last one, appended and broadcast. Returns after
   * Prometheus answered (or throws what it said).
   */
  async round(): Promise<void> {
    const step = this.step;
    const tail = this.tail;
    const now = Math.floor(this.nowS());
    const oldest = alignDown(now - LIVE_CATCH_UP_S, step);
    const newest = tail.newestTs;
    const from = Math.max(this.liveFrom ?? (newest === undefined ? oldest : newest + step), oldest);
    // The column holding now is not over: no scrape can have covered it yet.
    const to = alignDown(now, step);
    if (from >= to) return;
    const { frames, completeTo } = await fleetFrames(
      this.o.api,
      this.o.dir,
      { from, to, step },
      {},
      { finest: step, coarsest: step },
      this.o.schema,
    );
    // The step changed while Prometheus answered: these columns belong to the old tail.
    if (tail !== this.tail || completeTo === undefined) return;
    this.noteComplete(completeTo, this.nowS());
    const byTs = new Map(frames.map((f) => [f.ts, f]));
    // Columns before any host's first counted scrape have no difference to date them: not recorded.
    const firstSeen = frames[0]?.ts ?? Infinity;
    let next = from;
    for (let ts = from; ts + step <= completeTo; ts += step) {
      next = ts + step;
      // A column some host's scrape covered but no I/O: an idle column, drawn as zero.
      const frame: Frame | undefined = byTs.get(ts) ?? (ts >= firstSeen ? { ts, step, disks: [] } : undefined);
      if (!frame) continue;
      tail.append(frame, JSON.stringify(frame));
      this.hub?.broadcastFrame(frame);
    }
    this.liveFrom = Math.max(from, next);
  }

  /**
   * A big fleet's round: where its data ends, without its columns. The same rule as a round's
   * (fleet-frames.ts completeOf: the oldest newest window end among the hosts within
   * currentHostBound of the newest), computed by Prometheus from each host's newest window end
   * gauge: one series answers, whatever the fleet's size.
   */
  async clockRound(): Promise<void> {
    const step = this.step;
    const w = WINDOW_END_METRIC;
    const askedAt = this.nowS();
    const [min] = await this.o.api.instant(`min(${w} >= scalar(max(${w})) - ${currentHostBound(step)})`, askedAt);
    const completeTo = min === undefined ? NaN : Number(min.value[1]);
    if (step !== this.step || !Number.isFinite(completeTo)) return;
    const atS = this.nowS();
    const moved = this.noteComplete(Math.floor(completeTo), atS);
    const previousRead = this.clockReadAt;
    this.clockReadAt = askedAt;
    if (moved && previousRead !== undefined) {
      // Moved since the last reading: when, is known to within the time between the two.
      this.edgeMovedAt = askedAt - previousRead <= CLOCK_EVERY_S + 0.5 ? atS : undefined;
    }
  }

  /**
   * When a big fleet's clock is next worth reading (ms from now). Its edge moves a step at a
   * time, about a step after it last moved, and each reading costs Prometheus every host's newest
   * window end: read every second only from a little before the next move is due until it comes
   * (at a 15 s scrape, 2–3 readings a step instead of 15), so the lag a hello says (liveLag) stays
   * as exact as reading every second made it. Every second until a move has been seen to within
   * a second (at start, after the step changed, or after a reading that came late).
   */
  nextClockReadingMs(): number {
    const movedAt = this.edgeMovedAt;
    if (movedAt === undefined) return CLOCK_EVERY_S * 1000;
    const due = movedAt + this.step - CLOCK_EARLY_S;
    return Math.round(Math.max(CLOCK_EVERY_S, Math.min(this.step, due - this.nowS())) * 1000);
  }

  /** Where the fleet's data ends now, for the hello; undefined until a round has read it. */
  clock(): FleetClock | undefined {
    return this.ends && { liveTo: this.ends.liveTo, liveLag: Math.max(0, Math.round(this.ends.lag * 1000) / 1000) };
  }

  /**
   * Every current host has been scraped past `completeTo`, seen at `atS`. When the edge (at the
   * live step) moves, or is read for the first time, its lag is how long after its end that was
   * seen: the next column is complete about a step later. (The first reading's lag can be up to
   * a step too long: a page told it then stands up to a step behind, never ahead.) Returns
   * whether the edge moved (or was read for the first time).
   */
  private noteComplete(completeTo: number, atS: number, stepChanged = false): boolean {
    const firstRead = this.ends === undefined;
    // The edge never moves back (a host that comes back behind the others does not pull it).
    const prev = stepChanged ? undefined : this.ends;
    const liveTo = Math.max(alignDown(completeTo, this.step), prev?.liveTo ?? -Infinity);
    const moved = prev === undefined || liveTo > prev.liveTo;
    this.ends = { completeTo, liveTo, lag: moved ? atS - liveTo : prev.lag };
    // Pages that connected before the edge was first read had a hello without it, and a page
    // then waits at its own now (apps/web pipeline/source.ts helloClock), which runs ahead of the
    // columns for good: they reconnect, for a hello that says it, as for a new step. A page of a
    // 15 s fleet whose hello named the new step before the first reading stood 7 s past its
    // newest column (fleet-live-browser.test.ts failed so in a clean-clone CI).
    if (firstRead) this.hub?.restartClients("the fleet's live edge is known");
    return moved;
  }

  close(): void {
    this.tail.close();
  }

  private dirOf(generation: number): string {
    return join(this.o.tailDir, `live-${generation}`);
  }

  private open(step: number): HistoryStore {
    const dir = this.dirOf(++this.generation);
    return HistoryStore.open({
      dir,
      historySeconds: 3600,
      maxBytes: 64 * 1024 ** 2,
      schema: this.o.schema,
      log: this.o.log,
      fineStep: step,
    });
  }
}

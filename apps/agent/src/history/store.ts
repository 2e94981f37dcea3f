/**
 * (Over 400 lines: opening, appending, retention, the byte budget and fault health act on the same tiers.)
 * Durable frame history: a 1 s tier for the last hour and coarser tiers (10 s, 60 s) for the
 * whole --history window, as segment files under one directory, bounded both by time and by
 * a byte budget. Everything is synchronous: frames arrive once a second, appends are one
 * small write each, and reads of a range are a few reads of page-cached files. Being
 * synchronous is what lets the server hand a client "everything up to second N from history,
 * then live from N + 1" without any frame slipping in between.
 */
import { mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type BucketSchema, BUCKET_SCHEMA, type Frame } from '@blkheat/shared-types';
import { HistoryIoError, IncompatibleSegmentError, SchemaMismatchError, Segment, TornSegmentError } from './segment.js';
import { SEGMENT_FILE_RE, Tier, type RawFrame, type TierSpec } from './tier.js';

export interface HistoryOptions {
  /** Directory of the segment files (created if missing; its parent must exist). */
  readonly dir: string;
  /** Seconds of history to keep in the coarse tiers (--history). */
  readonly historySeconds: number;
  /** Most bytes the segment files may take together (oldest segments go first). */
  readonly maxBytes: number;
  /** Clock in unix seconds (tests inject one). */
  readonly now?: () => number;
  /** Bucket schema of the histograms kept (default BUCKET_SCHEMA). One directory holds one schema. */
  readonly schema?: BucketSchema;
  /** Segment spans of the 1 s, 10 s and 60 s tiers (default SEGMENT_SPANS; tests shorten them). */
  readonly segmentSpans?: readonly [number, number, number];
  /**
   * Steps of the frames appended (default 1). Over 1 (a fleet server's live tail at a scrape
   * interval over 1 s: its columns cannot be split into seconds), one tier of that step only,
   * keeping FINE_RETENTION_S; historySeconds and segmentSpans are then not used.
   */
  readonly fineStep?: number;
  readonly log?: (line: string) => void;
}

/** What is wrong with writing history, while it is wrong. */
export interface HistoryFault {
  /** errno name (ENOSPC, EACCES, EROFS, …). */
  readonly code: string;
  /** The failed operation and the file, e.g. "ENOSPC writing /var/lib/blkheat/history/t1-1795290000.seg: …". */
  readonly message: string;
  /** Unix second of the first failure of this fault. */
  readonly since: number;
}

/** The writer's health: faults are counted, and shown while they last. */
export interface HistoryHealth {
  readonly fault: HistoryFault | undefined;
  /** Appends that failed in at least one tier, since start. */
  readonly writeErrors: number;
  /** Seconds the 1 s tier could not record, since start (they show as no data). */
  readonly secondsNotRecorded: number;
}

export interface HistoryStats {
  readonly bytes: number;
  readonly tiers: readonly { step: number; frames: number; bytes: number; segments: number; from?: number; to?: number }[];
}

/** Seconds the 1 s tier keeps at least: 1 s resolution for the last hour (docs/architecture.md, "History"). */
export const FINE_RETENTION_S = 3600;

/** Seconds per segment file of the 1 s, 10 s and 60 s tiers. */
export const SEGMENT_SPANS: readonly [number, number, number] = [600, 7200, 43200];

/** The tiers for a --history window. */
export function tierSpecs(historySeconds: number, spans: readonly [number, number, number] = SEGMENT_SPANS): TierSpec[] {
  return [
    { step: 1, retention: Math.min(historySeconds, FINE_RETENTION_S), span: spans[0] },
    { step: 10, retention: historySeconds, span: spans[1] },
    { step: 60, retention: historySeconds, span: spans[2] },
  ];
}

/**
 * Segment spans from BLKHEAT_SEGMENT_SPANS ("FINE,TEN,SIXTY" seconds): a test hook, so that
 * tests reach segment boundaries in seconds rather than minutes. Each must be a positive
 * multiple of its tier's step; anything else is refused.
 */
export function segmentSpansFromEnv(value: string | undefined): readonly [number, number, number] | undefined {
  if (value === undefined || value === '') return undefined;
  const spans = value.split(',').map(Number);
  const steps = [1, 10, 60];
  if (spans.length !== 3 || spans.some((s, i) => !Number.isInteger(s) || s <= 0 || s % (steps[i] as number) !== 0 || s > 86400)) {
    throw new RangeError(`BLKHEAT_SEGMENT_SPANS="${value}": expected three spans in seconds, multiples of 1, 10 and 60`);
  }
  return [spans[0] as number, spans[1] as number, spans[2] as number];
}

/** How often (in appended frames) retention and the byte budget are enforced. */
const PRUNE_EVERY = 60;
/**
 * A full disk deletes at most one old segment per fault episode; an episode ends after this
 * many seconds without a failed write. One segment is enough to keep recording when history
 * itself filled the disk; when something else keeps eating the space, deleting more would only
 * destroy history without saving a second.
 */
const FAULT_EPISODE_GAP_S = 60;
/** While a fault lasts, it is logged again at most this often (seconds). */
const FAULT_LOG_EVERY_S = 60;

/** The data directory holds history of another bucket schema: the agent must not start on it. */
export class HistorySchemaError extends Error {}

export class HistoryStore {
  private readonly tiers: Tier[];
  /** Bucket schema of every frame kept. */
  readonly schema: BucketSchema;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private appends = 0;
  private closed = false;
  private fault: HistoryFault | undefined;
  private faultLoggedAt = 0;
  private writeErrors = 0;
  private secondsNotRecorded = 0;
  /** Seconds not recorded during the current fault. */
  private faultSeconds = 0;
  private lastFailureAt = Number.NEGATIVE_INFINITY;
  private roomMadeThisEpisode = false;

  private constructor(
    private readonly options: HistoryOptions,
    tiers: Tier[],
  ) {
    this.tiers = tiers;
    this.schema = options.schema ?? BUCKET_SCHEMA;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.log = options.log ?? (() => {});
  }

  /**
   * Opens (or creates) the history in options.dir: every segment is checked record by
   * record and a torn tail is cut off; the coarse tiers' open buckets are rebuilt from the
   * 1 s tier; then retention and the byte budget are applied.
   */
  static open(options: HistoryOptions): HistoryStore {
    // One level only: the parent (the agent's data directory) is prepared and checked by the
    // caller, and a recursive mkdir loops for ever where mkdir answers ENOENT (under /proc).
    try {
      mkdirSync(options.dir, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const fineStep = options.fineStep ?? 1;
    const specs =
      fineStep === 1
        ? tierSpecs(options.historySeconds, options.segmentSpans)
        : [{ step: fineStep, retention: Math.ceil(FINE_RETENTION_S / fineStep) * fineStep, span: fineStep * 240 }];
    const tiers: Tier[] = [];
    const store = new HistoryStore(options, tiers);
    for (const s of specs) tiers.push(new Tier(s, options.dir, () => store.makeRoom(), store.schema, fineStep));
    const byStep = new Map(tiers.map((t) => [t.step, t]));
    const found = new Map<number, Segment[]>();
    for (const name of readdirSync(options.dir).sort()) {
      if (name.endsWith('.seg.new')) {
        // A segment whose creation was cut short (see Segment.create): nothing in it.
        store.log(`history: removing ${join(options.dir, name)}, left by an interrupted segment creation`);
        unlinkSync(join(options.dir, name));
        continue;
      }
      const m = SEGMENT_FILE_RE.exec(name);
      if (!m) continue;
      const step = Number(m[1]);
      const tier = byStep.get(step);
      if (!tier) {
        store.log(`history: ignoring ${name} (no tier of ${step} s)`);
        continue;
      }
      try {
        const { segment, recovery } = Segment.open(join(options.dir, name), store.schema);
        if (segment.header.step !== step || segment.header.span !== tier.spec.span || segment.start !== Number(m[2])) {
          segment.close();
          store.log(`history: ignoring ${name} (its header says step ${segment.header.step}, span ${segment.header.span})`);
          continue;
        }
        if (recovery.truncatedBytes > 0) {
          store.log(`history: ${name}: dropped a torn tail of ${recovery.truncatedBytes} bytes (${recovery.reason ?? 'unknown'})`);
        }
        const list = found.get(step) ?? [];
        list.push(segment);
        found.set(step, list);
      } catch (e) {
        if (e instanceof SchemaMismatchError) {
          // Writing beside it could replace its files (same names): refuse, and keep it intact.
          for (const list of found.values()) for (const seg of list) seg.close();
          throw new HistorySchemaError(
            `history in ${options.dir} was recorded with bucket schema ${e.found.scale} (${name}), and this agent runs schema ${store.schema.scale}. ` +
              `Start it with --schema ${e.found.scale}, or give it another --data-dir: a directory keeps history of one schema.`,
          );
        }
        if (e instanceof TornSegmentError) {
          store.log(`history: removing ${e.message}`);
          unlinkSync(join(options.dir, name));
        } else if (e instanceof IncompatibleSegmentError) store.log(`history: ignoring ${e.message}`);
        else throw e;
      }
    }
    for (const tier of tiers) tier.adopt(found.get(tier.step) ?? []);
    store.rebuildOpenBuckets();
    store.enforceBounds();
    return store;
  }

  /** Steps of the tiers, finest first. */
  get tierSteps(): number[] {
    return this.tiers.map((t) => t.step);
  }

  get tierList(): readonly Tier[] {
    return this.tiers;
  }

  tier(step: number): Tier | undefined {
    return this.tiers.find((t) => t.step === step);
  }

  /** The step of the frames appended: the finest tier's (1 but on a fleet server's coarse live tail). */
  get fineStep(): number {
    return this.fine.step;
  }

  /** Start of the newest 1 s frame (of the finest tier). */
  get newestTs(): number | undefined {
    return this.fine.lastTs;
  }

  /** Oldest second any tier can answer for. */
  get oldestTs(): number | undefined {
    let oldest: number | undefined;
    for (const t of this.tiers) {
      const f = t.firstTs;
      if (f !== undefined && (oldest === undefined || f < oldest)) oldest = f;
    }
    return oldest;
  }

  get clock(): () => number {
    return this.now;
  }

  /** Seconds each tier keeps, by step. */
  retention(step: number): number {
    return this.tier(step)?.spec.retention ?? 0;
  }

  /**
   * Records a closed one-second frame. Frames must come in time order; one at or before the
   * newest recorded second is refused (returns false) so the files stay strictly ordered.
   */
  append(frame: Frame, json?: string): boolean {
    if (this.closed) return false;
    if (frame.step !== this.fineStep) throw new RangeError(`history takes ${this.fineStep} s frames, got step ${frame.step}`);
    const newest = this.newestTs;
    if (newest !== undefined && frame.ts <= newest) {
      this.log(`history: refusing frame ${frame.ts}: not after the newest recorded second ${newest}`);
      return false;
    }
    // Each tier on its own: one that cannot write does not stop the others.
    let failure: unknown;
    let fineFailed = false;
    for (const t of this.tiers) {
      try {
        t.add(frame, t === this.fine ? json : undefined);
      } catch (e) {
        failure ??= e;
        if (t === this.fine) fineFailed = true;
      }
    }
    if (failure !== undefined) this.noteFailure(failure, fineFailed);
    else this.noteSuccess();
    if (++this.appends % PRUNE_EVERY === 0) {
      try {
        this.enforceBounds();
      } catch (e) {
        this.noteFailure(e, false);
      }
    }
    return !fineFailed;
  }

  /** The writer's health (see HistoryHealth). */
  health(): HistoryHealth {
    return { fault: this.fault, writeErrors: this.writeErrors, secondsNotRecorded: this.secondsNotRecorded };
  }

  /** Notes a failed write at `now`: a failure after a long enough healthy spell starts a new episode. */
  private failedAt(now: number): void {
    if (now - this.lastFailureAt > FAULT_EPISODE_GAP_S) this.roomMadeThisEpisode = false;
    this.lastFailureAt = now;
  }

  private noteFailure(e: unknown, secondLost: boolean): void {
    this.failedAt(this.now());
    this.writeErrors++;
    if (secondLost) {
      this.secondsNotRecorded++;
      this.faultSeconds++;
    }
    const code = e instanceof HistoryIoError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'EIO');
    const message = e instanceof Error ? e.message : String(e);
    const now = this.now();
    if (!this.fault || this.fault.code !== code) {
      this.fault = { code, message, since: this.fault?.since ?? now };
      this.faultLoggedAt = now;
      this.log(`history: cannot write: ${message}; the live view goes on, and the seconds not recorded show as no data`);
    } else if (now - this.faultLoggedAt >= FAULT_LOG_EVERY_S) {
      this.fault = { ...this.fault, message };
      this.faultLoggedAt = now;
      this.log(
        `history: still failing since ${new Date(this.fault.since * 1000).toISOString()} (${this.faultSeconds} s not recorded): ${message}`,
      );
    }
  }

  private noteSuccess(): void {
    if (!this.fault) return;
    this.log(
      `history: writing again after a ${this.fault.code} fault since ${new Date(this.fault.since * 1000).toISOString()}; ${this.faultSeconds} s were not recorded`,
    );
    this.fault = undefined;
    this.faultSeconds = 0;
  }

  /**
   * The disk is full: deletes the oldest segment of the largest tier (as the byte budget
   * would), so the newest seconds are kept rather than the oldest; once per fault episode (see
   * FAULT_EPISODE_GAP_S). False when it may not, or nothing but the segments being written is left.
   */
  private makeRoom(): boolean {
    this.failedAt(this.now());
    if (this.roomMadeThisEpisode) return false;
    this.roomMadeThisEpisode = true;
    const largest = this.largestDroppable();
    if (!largest) return false;
    const freed = largest.dropOldest();
    this.log(`history: disk full: deleted the oldest ${largest.step} s segment (${freed} bytes) to keep recording`);
    return true;
  }

  /** The largest tier with a segment it may delete (not only the one being written): where room is made first. */
  private largestDroppable(): Tier | undefined {
    return [...this.tiers].sort((a, b) => b.bytes - a.bytes).find((t) => t.segmentCount > 1);
  }

  /** Frames of the tier of `step` with from <= ts < to, as stored. */
  read(step: number, from: number, to: number): RawFrame[] {
    return [...this.iterate(step, from, to)];
  }

  /** Like read(), lazily: reading stops when the consumer does. */
  iterate(step: number, from: number, to: number): Generator<RawFrame> {
    const tier = this.tier(step);
    if (!tier) throw new RangeError(`no history tier of ${step} s`);
    return tier.iterate(from, to);
  }

  stats(): HistoryStats {
    return {
      bytes: this.tiers.reduce((n, t) => n + t.bytes, 0),
      tiers: this.tiers.map((t) => ({
        step: t.step,
        frames: t.frameCount,
        bytes: t.bytes,
        segments: t.segmentCount,
        ...(t.firstTs !== undefined ? { from: t.firstTs } : {}),
        ...(t.lastTs !== undefined ? { to: t.lastTs + t.step } : {}),
      })),
    };
  }

  /** Deletes what is past retention, then the oldest segments of the largest tier until under the byte budget. */
  enforceBounds(): void {
    const now = this.now();
    for (const t of this.tiers) t.prune(now);
    let total = this.tiers.reduce((n, t) => n + t.bytes, 0);
    while (total > this.options.maxBytes) {
      const largest = this.largestDroppable();
      if (!largest) break;
      const freed = largest.dropOldest();
      this.log(`history: over the ${this.options.maxBytes}-byte budget, deleted the oldest ${largest.step} s segment (${freed} bytes)`);
      total -= freed;
    }
  }

  /**
   * Closes the files. The coarse tiers' open buckets are not written (see Tier): they are
   * rebuilt from the 1 s frames on the next open.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.tiers) {
      try {
        t.close();
      } catch (e) {
        this.log(`history: closing: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  private get fine(): Tier {
    return this.tiers[0] as Tier;
  }

  /** Replays 1 s frames newer than each coarse tier's last written bucket into that tier. */
  private rebuildOpenBuckets(): void {
    for (const tier of this.tiers) {
      if (tier === this.fine) continue;
      const written = tier.lastWrittenTs;
      const from = written === undefined ? 0 : written + tier.step;
      for (const raw of this.fine.iterate(from, Number.MAX_SAFE_INTEGER)) {
        let frame: Frame;
        try {
          // Unchecked cast: this store wrote the JSON from a Frame (CRC-checked); a zod parse per frame would slow a restart.
          frame = JSON.parse(raw.json) as Frame;
        } catch {
          continue;
        }
        tier.add(frame);
      }
    }
  }
}

/**
 * Durable frame history: a 1 s tier for the last hour and coarser tiers (10 s, 60 s) for the
 * whole --history window, as segment files under one directory, bounded both by time and by
 * a byte budget. Everything is synchronous: frames arrive once a second, appends are one
 * small write each, and reads of a range are a few reads of page-cached files. Being
 * synchronous is what lets the server hand a client "everything up to second N from history,
 * then live from N + 1" without any frame slipping in between.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from '@blkheat/shared-types';
import { IncompatibleSegmentError, Segment } from './segment.js';
import { SEGMENT_FILE_RE, Tier, type RawFrame, type TierSpec } from './tier.js';

export interface HistoryOptions {
  /** Directory of the segment files (created if missing). */
  readonly dir: string;
  /** Seconds of history to keep in the coarse tiers (--history). */
  readonly historySeconds: number;
  /** Most bytes the segment files may take together (oldest segments go first). */
  readonly maxBytes: number;
  /** Clock in unix seconds (tests inject one). */
  readonly now?: () => number;
  readonly log?: (line: string) => void;
}

export interface HistoryStats {
  readonly bytes: number;
  readonly tiers: readonly { step: number; frames: number; bytes: number; segments: number; from?: number; to?: number }[];
}

/** Seconds the 1 s tier keeps at least (DESIGN: 1 s resolution for >= 1 h). */
export const FINE_RETENTION_S = 3600;

/** The tiers for a --history window. */
export function tierSpecs(historySeconds: number): TierSpec[] {
  return [
    { step: 1, retention: Math.min(historySeconds, FINE_RETENTION_S), span: 600 },
    { step: 10, retention: historySeconds, span: 7200 },
    { step: 60, retention: historySeconds, span: 43200 },
  ];
}

/** How often (in appended frames) retention and the byte budget are enforced. */
const PRUNE_EVERY = 60;

export class HistoryStore {
  private readonly tiers: Tier[];
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private appends = 0;
  private closed = false;

  private constructor(
    private readonly options: HistoryOptions,
    tiers: Tier[],
  ) {
    this.tiers = tiers;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.log = options.log ?? (() => {});
  }

  /**
   * Opens (or creates) the history in options.dir: every segment is checked record by
   * record and a torn tail is cut off; the coarse tiers' open buckets are rebuilt from the
   * 1 s tier; then retention and the byte budget are applied.
   */
  static open(options: HistoryOptions): HistoryStore {
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    const specs = tierSpecs(options.historySeconds);
    const tiers = specs.map((s) => new Tier(s, options.dir));
    const store = new HistoryStore(options, tiers);
    const byStep = new Map(tiers.map((t) => [t.step, t]));
    const found = new Map<number, Segment[]>();
    for (const name of readdirSync(options.dir).sort()) {
      const m = SEGMENT_FILE_RE.exec(name);
      if (!m) continue;
      const step = Number(m[1]);
      const tier = byStep.get(step);
      if (!tier) {
        store.log(`history: ignoring ${name} (no tier of ${step} s)`);
        continue;
      }
      try {
        const { segment, recovery } = Segment.open(join(options.dir, name));
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
        if (e instanceof IncompatibleSegmentError) store.log(`history: ignoring ${e.message}`);
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

  /** Start of the newest 1 s frame. */
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
    if (frame.step !== 1) throw new RangeError(`history takes 1 s frames, got step ${frame.step}`);
    const newest = this.newestTs;
    if (newest !== undefined && frame.ts <= newest) {
      this.log(`history: refusing frame ${frame.ts}: not after the newest recorded second ${newest}`);
      return false;
    }
    try {
      for (const t of this.tiers) t.add(frame, t.step === 1 ? json : undefined);
    } catch (e) {
      this.log(`history: could not record frame ${frame.ts}: ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
    if (++this.appends % PRUNE_EVERY === 0) this.enforceBounds();
    return true;
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
      const largest = [...this.tiers].sort((a, b) => b.bytes - a.bytes).find((t) => t.segmentCount > 1);
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
    for (const t of this.tiers) t.close();
  }

  private get fine(): Tier {
    return this.tiers[0] as Tier;
  }

  /** Replays 1 s frames newer than each coarse tier's last written bucket into that tier. */
  private rebuildOpenBuckets(): void {
    for (const tier of this.tiers) {
      if (tier.step === 1) continue;
      const written = tier.lastWrittenTs;
      const from = written === undefined ? 0 : written + tier.step;
      for (const raw of this.fine.iterate(from, Number.MAX_SAFE_INTEGER)) {
        let frame: Frame;
        try {
          frame = JSON.parse(raw.json) as Frame;
        } catch {
          continue;
        }
        tier.add(frame);
      }
    }
  }
}

/**
 * One history tier: frames of `step` seconds, kept for `retention` seconds in segment files
 * of `span` seconds each. A coarse tier (step > 1) is fed one-second frames and sums them
 * into its open bucket (exact: histograms add); the bucket is written when a frame of a
 * later bucket arrives. The open bucket is never written on shutdown, because the next run
 * would then have two records for one bucket: it is rebuilt instead from the one-second tier
 * on the next start (see HistoryStore.open).
 */
import { join } from 'node:path';
import { alignDown, type BucketSchema, FrameAccumulator, type Frame } from '@blkheat/shared-types';
import { HistoryIoError, Segment } from './segment.js';

export interface TierSpec {
  /** Seconds per frame. */
  readonly step: number;
  /** Seconds of history kept (at least; whole segments are deleted). */
  readonly retention: number;
  /** Seconds per segment file; a multiple of step. */
  readonly span: number;
}

/** A frame as stored: its start and its JSON text (parsed only when needed). */
export interface RawFrame {
  readonly ts: number;
  readonly json: string;
}

export function segmentFileName(step: number, start: number): string {
  return `t${step}-${start}.seg`;
}

export const SEGMENT_FILE_RE = /^t(\d+)-(\d+)\.seg$/;

export class Tier {
  private readonly segments: Segment[] = [];
  private readonly acc: FrameAccumulator | undefined;
  private accStart: number | undefined;

  /**
   * @param makeRoom called when a write finds the disk full: frees space (older history) and
   *   returns true if it freed any, and the write is tried again.
   */
  constructor(
    readonly spec: TierSpec,
    private readonly dir: string,
    private readonly makeRoom: () => boolean,
    private readonly schema: BucketSchema,
    /** The step of the frames it is fed (HistoryOptions.fineStep): a tier of that step stores them as they are. */
    fedStep = 1,
  ) {
    if (spec.span % spec.step !== 0) throw new RangeError(`segment span ${spec.span} is not a multiple of step ${spec.step}`);
    this.acc = spec.step > fedStep ? new FrameAccumulator(schema) : undefined;
  }

  get step(): number {
    return this.spec.step;
  }

  /** Adopts segments found on disk (any order). */
  adopt(segments: readonly Segment[]): void {
    this.segments.push(...segments);
    this.segments.sort((a, b) => a.start - b.start);
  }

  /** Start of the newest written frame. */
  get lastWrittenTs(): number | undefined {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const ts = this.segments[i]?.lastTs;
      if (ts !== undefined) return ts;
    }
    return undefined;
  }

  /** Start of the oldest written frame. */
  get firstTs(): number | undefined {
    for (const s of this.segments) if (s.firstTs !== undefined) return s.firstTs;
    return this.accStart;
  }

  /** Start of the newest frame, written or open. */
  get lastTs(): number | undefined {
    return this.accStart ?? this.lastWrittenTs;
  }

  get bytes(): number {
    let n = 0;
    for (const s of this.segments) n += s.bytes;
    return n;
  }

  get frameCount(): number {
    let n = 0;
    for (const s of this.segments) n += s.count;
    return n + (this.accStart !== undefined ? 1 : 0);
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  /**
   * Feeds a one-second frame (or, for the 1 s tier, stores it). `json` is the frame's JSON
   * when the caller already has it. Frames at or before what the tier already holds are
   * ignored (returns false).
   */
  add(frame: Frame, json?: string): boolean {
    if (!this.acc) {
      const last = this.lastWrittenTs;
      if (last !== undefined && frame.ts <= last) return false;
      this.write(frame.ts, json ?? JSON.stringify(frame));
      return true;
    }
    const start = alignDown(frame.ts, this.step);
    const written = this.lastWrittenTs;
    if (written !== undefined && start <= written) return false;
    if (this.accStart !== undefined && start < this.accStart) return false;
    if (this.accStart !== undefined && start !== this.accStart) this.flushOpen();
    this.accStart = start;
    this.acc.add(frame);
    return true;
  }

  /** The open bucket as a (partial) frame, if any. */
  openFrame(): Frame | undefined {
    if (!this.acc || this.accStart === undefined) return undefined;
    return this.acc.toFrame(this.accStart, this.step);
  }

  /** Frames with from <= ts < to in time order, including the open bucket; read lazily. */
  *iterate(from: number, to: number): Generator<RawFrame> {
    for (const seg of [...this.segments]) {
      if (seg.end <= from || seg.start >= to) continue;
      for (const r of seg.iterate(from, to)) yield { ts: r.ts, json: r.payload.toString('utf8') };
    }
    const open = this.openFrame();
    if (open && open.ts >= from && open.ts < to) yield { ts: open.ts, json: JSON.stringify(open) };
  }

  /** All of iterate() at once (for short ranges). */
  read(from: number, to: number): RawFrame[] {
    return [...this.iterate(from, to)];
  }

  /** Deletes segments entirely older than the retention; returns the bytes freed. */
  prune(now: number): number {
    let freed = 0;
    while (this.segments.length > 1) {
      const oldest = this.segments[0] as Segment;
      if (oldest.end > now - this.spec.retention) break;
      freed += this.dropOldest();
    }
    return freed;
  }

  /** Deletes the oldest segment unless it is the one being written; returns the bytes freed. */
  dropOldest(): number {
    if (this.segments.length <= 1) return 0;
    const oldest = this.segments.shift() as Segment;
    const bytes = oldest.bytes;
    oldest.remove();
    return bytes;
  }

  /** Closes every file; a failure to close one (say, fsync on a full disk) is thrown after all were tried. */
  close(): void {
    let failure: unknown;
    for (const s of this.segments) {
      try {
        s.close();
      } catch (e) {
        failure ??= e;
      }
    }
    if (failure !== undefined) throw failure;
  }

  /** Writes the open bucket. It is let go whether or not the write succeeds: a bucket that
   * could not be written must not absorb the next bucket's seconds. */
  private flushOpen(): void {
    if (!this.acc || this.accStart === undefined) return;
    const frame = this.acc.toFrame(this.accStart, this.step);
    this.acc.reset();
    this.accStart = undefined;
    this.write(frame.ts, JSON.stringify(frame));
  }

  /** Writes one record, making room (older history) and trying again while the disk is full. */
  private write(ts: number, json: string): void {
    const payload = Buffer.from(json, 'utf8');
    for (;;) {
      try {
        this.writeOnce(ts, payload);
        return;
      } catch (e) {
        if (!(e instanceof HistoryIoError && e.noSpace) || !this.makeRoom()) throw e;
      }
    }
  }

  private writeOnce(ts: number, payload: Buffer): void {
    let seg = this.segments[this.segments.length - 1];
    if (!seg || ts >= seg.end) {
      const start = alignDown(ts, this.spec.span);
      seg = Segment.create(join(this.dir, segmentFileName(this.step, start)), this.step, start, this.spec.span, this.schema);
      this.segments.push(seg);
    }
    seg.append(ts, payload);
  }
}

/**
 * Groups the collector's 1 s frames (and their samples) into wall-clock aligned intervals of
 * S seconds ([T, T+S) with T a multiple of S), starting with the first interval that begins
 * after recording started, so every reported interval was observed whole.
 */
import { type BucketSchema, BUCKET_SCHEMA, FrameAccumulator, type Frame, type IoSample } from '@blkheat/shared-types';

export interface Interval {
  readonly frame: Frame;
  readonly samples: IoSample[];
}

export class IntervalGrouper {
  private readonly acc: FrameAccumulator;
  private start: number | undefined;
  private samples: IoSample[] = [];
  private pendingSamples: IoSample[] = [];

  constructor(
    private readonly intervalS: number,
    /** First second that may be reported (recording started before it). */
    private readonly firstSecond: number,
    schema: BucketSchema = BUCKET_SCHEMA,
  ) {
    this.acc = new FrameAccumulator(schema);
  }

  /** Samples arrive just before the frame of their second. */
  addSamples(samples: readonly IoSample[]): void {
    this.pendingSamples.push(...samples);
  }

  /** Adds a 1 s frame; returns the interval it completes, if any. */
  addFrame(frame: Frame): Interval | undefined {
    const samples = this.pendingSamples;
    this.pendingSamples = [];
    const aligned = Math.ceil(this.firstSecond / this.intervalS) * this.intervalS;
    if (frame.ts < aligned) return undefined;
    const start = Math.floor(frame.ts / this.intervalS) * this.intervalS;
    this.start ??= start;
    this.acc.add(frame);
    this.samples.push(...samples);
    if (frame.ts + frame.step < this.start + this.intervalS) return undefined;
    const out = { frame: this.acc.toFrame(this.start, this.intervalS), samples: this.samples };
    this.acc.reset();
    this.samples = [];
    this.start = undefined;
    return out;
  }
}

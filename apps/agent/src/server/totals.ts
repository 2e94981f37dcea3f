/**
 * Cumulative latency histograms per disk x class since the agent started: what /metrics
 * exports. Prometheus expects histogram counters that only grow within a process lifetime
 * (a restart is a counter reset, which rate() handles), so the window is [first frame of
 * this process, end of the newest frame) and is exported alongside as two gauges.
 */
import { type BucketSchema, BUCKET_SCHEMA, FrameAccumulator, type Frame } from '@blkheat/shared-types';

export class LatencyTotals {
  private readonly acc: FrameAccumulator;
  private start: number | undefined;
  private end: number | undefined;
  private last: Frame | undefined;

  constructor(readonly schema: BucketSchema = BUCKET_SCHEMA) {
    this.acc = new FrameAccumulator(schema);
  }

  add(frame: Frame): void {
    this.last = frame;
    if (this.start === undefined) this.start = frame.ts;
    this.end = frame.ts + frame.step;
    this.acc.add(frame);
  }

  /** [from, to) covered, in unix seconds; undefined before the first frame. */
  get window(): { from: number; to: number } | undefined {
    return this.start === undefined || this.end === undefined ? undefined : { from: this.start, to: this.end };
  }

  /** The newest frame added (what is in flight now is in it). */
  newest(): Frame | undefined {
    return this.last;
  }

  /** Everything so far as one frame (canonical order: disks by device number, classes by name). */
  snapshot(): Frame {
    const w = this.window;
    return this.acc.toFrame(w?.from ?? 0, w ? w.to - w.from : 1);
  }
}

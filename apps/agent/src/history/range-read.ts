/**
 * Reading ranges out of history: which tier and step a range is served at, and the frames of
 * a range or a backfill page as JSON texts (so stored frames that need no change are spliced
 * into the answer without being parsed and re-serialized). answerCutter is the one way the
 * server (range requests, /api/v1/range, snapshots) turns a request into frames.
 */
import {
  alignDown,
  type BucketSchema,
  filterFrame,
  FrameAccumulator,
  isPassThroughFilter,
  MAX_FRAMES_PER_ANSWER,
  type Frame,
  type FrameFilter,
  type LatencyKind,
} from '@blkheat/shared-types';
import type { HistoryStore } from './store.js';
import type { RawFrame } from './tier.js';

export interface RangePlan {
  /** Tier the frames are read from. */
  readonly tierStep: number;
  /** Step of the answer's frames: a multiple of tierStep. */
  readonly step: number;
  /** [from, to) aligned to step. */
  readonly from: number;
  readonly to: number;
}

export interface TierPolicy {
  readonly step: number;
  readonly retention: number;
}

/**
 * The step a range is answered at. The answer must fit in maxFrames frames and be no finer
 * than the requested step. The tier is the finest one whose retention still covers `from`
 * (or the coarsest when none does); the answer's step is that tier's step, or a multiple of
 * it when the tier's own step would need more than maxFrames frames (frames are then
 * merged on the fly, exactly).
 */
export function planRange(
  req: { readonly from: number; readonly to: number; readonly step?: number | undefined },
  tiers: readonly TierPolicy[],
  now: number,
  maxFrames: number,
): RangePlan {
  if (tiers.length === 0) throw new RangeError('no history tiers');
  const sorted = [...tiers].sort((a, b) => a.step - b.step);
  const wanted = Math.max(1, req.step ?? 1);
  const covering = sorted.filter((t) => now - t.retention <= req.from);
  const eligible = covering.filter((t) => t.step <= wanted);
  const tier = eligible[eligible.length - 1] ?? covering[0] ?? (sorted[sorted.length - 1] as TierPolicy);
  let step = tier.step * Math.max(1, Math.ceil(wanted / tier.step));
  for (;;) {
    const from = alignDown(req.from, step);
    const to = alignDown(req.to + step - 1, step);
    if ((to - from) / step <= maxFrames) return { tierStep: tier.step, step, from, to };
    step += tier.step;
  }
}

export interface FramesAnswer {
  readonly from: number;
  /** End of what the answer covers: the plan's `to`, or earlier when cut at maxBytes. */
  readonly to: number;
  readonly step: number;
  /** JSON text of each frame, in time order. */
  readonly frames: string[];
  /** Set when frames were left out for size; the client asks again from `to`. */
  readonly cut: boolean;
  /** The phases the frames carry when they leave one out (protocol 7, RangeAnswer.phases); absent: every phase. */
  readonly phases?: readonly LatencyKind[];
}

/**
 * Frames of a planned range, filtered, as JSON texts; at most about maxBytes of them, pulled a
 * slice at a time (server/read-scheduler.ts) or at once (finish()). Reads, merges and
 * serializes lazily, one output step at a time, and stops reading at the byte limit: the cost
 * of an answer is bounded by its size, not by the range asked for.
 */
export function rangeCutter(store: HistoryStore, plan: RangePlan, filter: FrameFilter, maxBytes: number): AnswerCutter {
  const raw = store.iterate(plan.tierStep, plan.from, plan.to);
  const texts = plan.step === plan.tierStep ? reserialize(raw, filter) : mergeSteps(raw, plan.step, filter, store.schema);
  return new AnswerCutter(texts, plan.from, plan.to, plan.step, maxBytes);
}

/** What a range is asked for with: a span, an optional step, and the filter. */
export interface RangeQuery extends FrameFilter {
  readonly from: number;
  readonly to: number;
  readonly step?: number | undefined;
  /**
   * The phases the frames must carry (protocol 7). An agent's history keeps every phase and sends
   * it (a phase switch on its page stays instant); a fleet server leaves queue latency out when
   * it is not named (fleet-frames.ts).
   */
  readonly phases?: readonly LatencyKind[] | undefined;
}

/** The plan of a range request against the store's tiers and clock (at most MAX_FRAMES_PER_ANSWER frames). */
export function planOf(store: HistoryStore, req: RangeQuery): RangePlan {
  const tiers = store.tierSteps.map((step) => ({ step, retention: store.retention(step) }));
  return planRange(req, tiers, store.clock(), MAX_FRAMES_PER_ANSWER);
}

/**
 * The answer to a range request: planned against the store's tiers and clock (at most
 * MAX_FRAMES_PER_ANSWER frames), read, filtered and cut at about maxBytes of frame JSON. The
 * one way the server (range requests, /api/v1/range, snapshots) turns a request into frames.
 */
export function answerCutter(store: HistoryStore, req: RangeQuery, maxBytes: number): AnswerCutter {
  return rangeCutter(store, planOf(store, req), { disks: req.disks, classes: req.classes }, maxBytes);
}

/** The fields of a range answer as JSON text (`"from":…,"frames":[…]`), frames spliced in as they are. */
export function rangeAnswerFields(a: FramesAnswer): string {
  const phases = a.phases ? `,"phases":${JSON.stringify(a.phases)}` : '';
  return `"from":${a.from},"to":${a.to},"step":${a.step}${phases},"frames":[${a.frames.join(',')}]`;
}

/** One backfill page: frames of the stream's step (the finest tier's) in [from, to), at most maxFrames and about maxBytes. */
export function backfillCutter(
  store: HistoryStore,
  from: number,
  to: number,
  filter: FrameFilter,
  maxFrames: number,
  maxBytes: number,
): AnswerCutter {
  const step = store.fineStep;
  const end = Math.min(to, from + maxFrames * step);
  return new AnswerCutter(reserialize(store.iterate(step, from, end), filter), from, end, step, maxBytes);
}

/** Stored frames as they are (no filter: spliced without parsing), or parsed, filtered and serialized. */
function* reserialize(raw: Iterable<RawFrame>, filter: FrameFilter): Generator<RawFrame> {
  if (isPassThroughFilter(filter)) {
    yield* raw;
    return;
  }
  for (const f of parseEach(raw)) {
    const filtered = filterFrame(f, filter);
    yield { ts: filtered.ts, json: JSON.stringify(filtered) };
  }
}

/** Frames merged into steps of `step` seconds (exactly), filtered, one output step at a time. */
function* mergeSteps(raw: Iterable<RawFrame>, step: number, filter: FrameFilter, schema: BucketSchema): Generator<RawFrame> {
  const acc = new FrameAccumulator(schema);
  let current: number | undefined;
  const flush = (ts: number): RawFrame => {
    const f = filterFrame(acc.toFrame(ts, step), filter);
    acc.reset();
    return { ts, json: JSON.stringify(f) };
  };
  for (const f of parseEach(raw)) {
    const start = alignDown(f.ts, step);
    if (current !== undefined && start !== current) yield flush(current);
    current = start;
    acc.add(f);
  }
  if (current !== undefined) yield flush(current);
}

function* parseEach(raw: Iterable<RawFrame>): Generator<Frame> {
  for (const r of raw) {
    try {
      // Unchecked cast: the store wrote the JSON from a Frame; a zod parse per frame would slow every range read.
      yield JSON.parse(r.json) as Frame;
    } catch {
      // it passed its CRC, so this is a bug, not a crash: skip the record
    }
  }
}

/** Parses stored frames; a record that does not parse is skipped. */
export function parseAll(raw: Iterable<RawFrame>): Frame[] {
  return [...parseEach(raw)];
}

/**
 * The answer over [from, to) made of `texts`, cut before about maxBytes of frame JSON (the
 * client asks again from the answer's `to`). The first frame is always kept.
 */
export function cutAtBytes(texts: Iterable<RawFrame>, from: number, to: number, step: number, maxBytes: number): FramesAnswer {
  return new AnswerCutter(texts, from, to, step, maxBytes).finish();
}

/**
 * cutAtBytes() pulled in slices: pull(deadline) reads frames until the answer is complete (and
 * returns it) or the clock passes the deadline (and returns undefined, to be called again). So
 * a long answer can be built between other work on the event loop (server/read-scheduler.ts).
 */
export class AnswerCutter {
  private readonly iterator: Iterator<RawFrame>;
  private readonly frames: string[] = [];
  /** Frames kept so far, taken or not (frames.length forgets the taken ones). */
  private kept = 0;
  private bytes = 0;
  private answer: FramesAnswer | undefined;
  /** Bytes of frame JSON read since the last takeBytesRead(). */
  private unreported = 0;

  constructor(
    texts: Iterable<RawFrame>,
    /** The answer's start and step, and the end it has when not cut. */
    readonly from: number,
    readonly to: number,
    readonly step: number,
    private readonly maxBytes: number,
  ) {
    this.iterator = texts[Symbol.iterator]();
  }

  /**
   * The frames read since the last call, handed over (and forgotten here): for an answer
   * written while it is read, whose frames then need not all be held. The answer pull()
   * returns holds only the frames not taken.
   */
  takeFrames(): string[] {
    return this.frames.splice(0);
  }

  /**
   * Reads on until the answer is complete (returned), or performance.now() passes deadline, or
   * this call read maxBytes (undefined: call again).
   */
  pull(deadline: number, maxBytes = Infinity): FramesAnswer | undefined {
    let read = 0;
    while (this.answer === undefined) {
      const next = this.iterator.next();
      if (next.done) {
        this.answer = { from: this.from, to: this.to, step: this.step, frames: this.frames, cut: false };
        break;
      }
      const t = next.value;
      this.unreported += t.json.length;
      // Always keep the first frame, so a client paging by `to` makes progress.
      if (this.kept > 0 && this.bytes + t.json.length > this.maxBytes) {
        this.answer = { from: this.from, to: t.ts, step: this.step, frames: this.frames, cut: true };
        this.iterator.return?.();
        break;
      }
      this.frames.push(t.json);
      this.kept++;
      this.bytes += t.json.length + 1;
      read += t.json.length;
      if (read >= maxBytes || performance.now() >= deadline) return undefined;
    }
    return this.answer;
  }

  /** The whole answer, now. */
  finish(): FramesAnswer {
    return this.pull(Infinity) as FramesAnswer;
  }

  /** Bytes of frame JSON read since the last call: what the read cost, for budgets. */
  takeBytesRead(): number {
    const n = this.unreported;
    this.unreported = 0;
    return n;
  }
}

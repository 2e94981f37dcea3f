/**
 * Where every heavy read of history runs (backfill pages, range answers, snapshots): not in the
 * handler that asked, but here, in slices on the event loop. The rules, so that no client can
 * make the agent read as much as it likes, synchronously, and stall everything else:
 *
 * - A slice of work is at most SLICE_MS, then the event loop turns: live frames, /healthz and
 *   every other client are served between slices, whatever the readers ask for.
 * - Jobs take turns (round-robin), and at most ACTIVE_JOBS runnable ones have started at once:
 *   the memory of answers in progress is bounded, however many are queued.
 * - Reading is budgeted in bytes per second per client and in total (token buckets): a client
 *   that asks for more waits its turn, it does not slow the others.
 * - A client has at most QUEUED_JOBS_PER_CLIENT jobs: past that, submit() says no and the
 *   caller answers "busy".
 * - A job whose client went away (closed socket, a newer subscribe) is dropped before its next
 *   slice, unread.
 * - A job that waits on its client (a response not yet drained) is parked, not polled.
 */
import { performance } from 'node:perf_hooks';
import {
  READ_ACTIVE_JOBS,
  READ_BYTES_PER_S_PER_CLIENT,
  READ_BYTES_PER_S_TOTAL,
  READ_JOB_SLICE_MS,
  READ_QUEUED_JOBS_PER_CLIENT,
  READ_SLICE_MS,
} from './limits.js';

export interface ReadJob {
  /** True once nobody wants the result: the job is dropped before its next slice. */
  gone(): boolean;
  /**
   * One slice of work, until performance.now() passes `deadline`. Returns the bytes it read (for
   * the budgets) and what comes next: 'more' (schedule again), 'done', or a promise to park on
   * (a drain) before the next slice.
   */
  step(deadline: number): { readonly bytes: number; readonly next: 'more' | 'done' | Promise<unknown> };
  /** Called once if the job is dropped unfinished (gone, failed, or the scheduler closed). */
  dropped?(reason: string): void;
}

/** A token bucket of bytes: refilled at `rate` per second up to one second's worth. */
class ByteBudget {
  private tokens: number;
  private at = performance.now();

  constructor(private readonly rate: number) {
    this.tokens = rate;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
  }

  /** Whether a slice may start: some budget is left (a slice may overdraw it; the debt is waited off). */
  available(now: number): boolean {
    this.refill(now);
    return this.tokens > 0;
  }

  charge(bytes: number): void {
    this.tokens -= bytes;
  }

  /** Milliseconds until available() turns true. */
  msUntilAvailable(now: number): number {
    this.refill(now);
    return this.tokens > 0 ? 0 : Math.ceil((-this.tokens / this.rate) * 1000) + 1;
  }
}

/** Idle clients' budgets are forgotten once this many clients are known. */
const FORGET_IDLE_CLIENTS_ABOVE = 4096;

interface Entry {
  readonly client: string;
  readonly job: ReadJob;
  started: boolean;
}

export interface ReadSchedulerOptions {
  readonly bytesPerSecondTotal?: number;
  readonly bytesPerSecondPerClient?: number;
  readonly log?: (line: string) => void;
}

export interface ReadSchedulerStats {
  readonly queued: number;
  readonly active: number;
  readonly parked: number;
  readonly refused: number;
  readonly dropped: number;
  readonly bytesRead: number;
}

export class ReadScheduler {
  /** Runnable jobs, in turn order. */
  private readonly queue: Entry[] = [];
  /** Jobs waiting on their client (a drain). */
  private readonly parked = new Set<Entry>();
  private readonly perClient = new Map<string, { jobs: number; budget: ByteBudget }>();
  private readonly total: ByteBudget;
  private readonly perClientRate: number;
  private wakeup: NodeJS.Immediate | NodeJS.Timeout | undefined;
  private closed = false;
  private counters = { refused: 0, dropped: 0, bytesRead: 0 };

  constructor(private readonly options: ReadSchedulerOptions = {}) {
    this.total = new ByteBudget(options.bytesPerSecondTotal ?? READ_BYTES_PER_S_TOTAL);
    this.perClientRate = options.bytesPerSecondPerClient ?? READ_BYTES_PER_S_PER_CLIENT;
  }

  /** Queues a job for `client` (a key shared by all of one client's jobs); false when it has too many already. */
  submit(client: string, job: ReadJob): boolean {
    if (this.closed) return false;
    let c = this.perClient.get(client);
    if (c && c.jobs >= READ_QUEUED_JOBS_PER_CLIENT) {
      this.counters.refused++;
      return false;
    }
    if (!c) {
      // A client's budget outlives its jobs (one job at a time must not mean a fresh budget
      // each time); idle ones are forgotten only when there are many.
      if (this.perClient.size >= FORGET_IDLE_CLIENTS_ABOVE) for (const [k, v] of this.perClient) if (v.jobs === 0) this.perClient.delete(k);
      c = { jobs: 0, budget: new ByteBudget(this.perClientRate) };
      this.perClient.set(client, c);
    }
    c.jobs++;
    this.queue.push({ client, job, started: false });
    this.schedule(0);
    return true;
  }

  /** Nothing queued, running or waiting on a client. */
  get idle(): boolean {
    return this.queue.length === 0 && this.parked.size === 0;
  }

  stats(): ReadSchedulerStats {
    return {
      queued: this.queue.length,
      active: this.activeCount(),
      parked: this.parked.size,
      ...this.counters,
    };
  }

  /** Drops every job (at shutdown). */
  close(): void {
    this.closed = true;
    if (this.wakeup) {
      clearTimeout(this.wakeup as NodeJS.Timeout);
      clearImmediate(this.wakeup as NodeJS.Immediate);
    }
    for (const e of [...this.queue, ...this.parked]) this.finish(e, 'the agent is stopping');
    this.queue.length = 0;
    this.parked.clear();
  }

  /**
   * Jobs started and runnable. Parked ones are not counted: a client that does not read must
   * not hold a place others need (100 such clients starved every other snapshot for a minute);
   * what a parked job holds is one slice's text, and it is cut off after STALLED_ANSWER_MS.
   */
  private activeCount(): number {
    let n = 0;
    for (const e of this.queue) if (e.started) n++;
    return n;
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.wakeup) return;
    const run = (): void => {
      this.wakeup = undefined;
      this.runSlice();
    };
    this.wakeup = delayMs <= 0 ? setImmediate(run) : setTimeout(run, delayMs);
  }

  /** One turn of the event loop's worth of reading: jobs in turn until SLICE_MS is used or none may run. */
  private runSlice(): void {
    const sliceEnd = performance.now() + READ_SLICE_MS;
    let waitMs = Infinity;
    let skipped = 0;
    while (this.queue.length > 0 && skipped < this.queue.length) {
      const now = performance.now();
      if (now >= sliceEnd) {
        this.schedule(0);
        return;
      }
      const e = this.queue.shift() as Entry;
      if (e.job.gone()) {
        this.finish(e, 'its client went away');
        continue;
      }
      const client = this.perClient.get(e.client);
      // Not started while ACTIVE_JOBS others hold half-built answers: a finishing or returning
      // job wakes the scheduler then.
      const mayStart = e.started || this.activeCount() < READ_ACTIVE_JOBS;
      if (!mayStart || !client || !this.total.available(now) || !client.budget.available(now)) {
        // Not its turn yet: to the back of the queue; over budget, the scheduler sleeps until refilled.
        if (client && mayStart) waitMs = Math.min(waitMs, Math.max(this.total.msUntilAvailable(now), client.budget.msUntilAvailable(now)));
        this.queue.push(e);
        skipped++;
        continue;
      }
      skipped = 0;
      e.started = true;
      let result: ReturnType<ReadJob['step']>;
      try {
        result = e.job.step(Math.min(sliceEnd, now + READ_JOB_SLICE_MS));
      } catch (err) {
        this.options.log?.(`read: a job failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        this.finish(e, 'it failed inside the agent');
        continue;
      }
      this.total.charge(result.bytes);
      client.budget.charge(result.bytes);
      this.counters.bytesRead += result.bytes;
      if (result.next === 'done') this.finish(e);
      else if (result.next === 'more') this.queue.push(e);
      else this.park(e, result.next);
    }
    if (this.queue.length > 0 && Number.isFinite(waitMs)) this.schedule(waitMs);
  }

  private park(e: Entry, until: Promise<unknown>): void {
    this.parked.add(e);
    const back = (): void => {
      if (!this.parked.delete(e)) return;
      this.queue.push(e);
      this.schedule(0);
    };
    until.then(back, back);
  }

  /** A job leaves the scheduler: done (no reason) or dropped (reason). */
  private finish(e: Entry, droppedBecause?: string): void {
    const c = this.perClient.get(e.client);
    if (c) c.jobs--;
    // A finished job frees an active place: queued jobs may start.
    if (this.queue.length > 0) this.schedule(0);
    if (droppedBecause === undefined) return;
    this.counters.dropped++;
    try {
      e.job.dropped?.(droppedBecause);
    } catch {
      // a job's own clean-up must not stop the others
    }
  }
}

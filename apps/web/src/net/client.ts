/**
 * WebSocket client for the agent's stream (protocol v1): hello → subscribe with backfill →
 * one frame per second; request/answer by id for ranges and samples; reconnect with
 * exponential backoff, resubscribing with `backfillFrom` = the second after the last one seen,
 * so a reconnect leaves no gap and duplicates are dropped. A gap seen in the live stream (it
 * should not happen) is filled with a range request and counted.
 */
import {
  type AgentStatus,
  type DiskInfo,
  type Frame,
  type HelloMessage,
  PROTOCOL_VERSION,
  type RangeAnswer,
  type RangeRequest,
  sameSchema,
  type SamplesAnswer,
  type SamplesRequest,
  type ServerMessage,
} from '@blkheat/shared-types';
import { backoffDelay } from './backoff.js';

export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'offline';

export interface ClientEvents {
  onState(state: ConnectionState, detail?: string): void;
  onHello(hello: HelloMessage): void;
  /** Frames in time order, each second at most once. */
  onFrames(frames: readonly Frame[], origin: 'live' | 'backfill'): void;
  /**
   * Every second in [from, to) has been sent: one without a frame in it was not recorded (the
   * agent stores a frame, maybe with `disks: []`, for every second it recorded).
   */
  onCovered(from: number, to: number): void;
  /**
   * The agent's disks changed, or (`ofHello`) the hello's own long list, sent right after it
   * (hello.disksFollow): no disk appeared or went away then.
   */
  onDisks(disks: readonly DiskInfo[], ofHello: boolean): void;
  /**
   * The agent's status, from each hello and from every `status` message (protocol 3); undefined
   * from an agent too old to report one.
   */
  onStatus(status: AgentStatus | undefined): void;
  onNotice(message: string): void;
}

export interface ClientOptions {
  readonly url: () => string;
  readonly events: ClientEvents;
  /** Seconds of history to backfill on the first connection. */
  readonly initialBackfill: () => number;
  /** Called when the socket fails before any hello, to tell an auth refusal from a network error. */
  readonly probe?: () => Promise<string | undefined>;
  readonly requestTimeoutMs?: number;
}

type Answer = RangeAnswer | SamplesAnswer;
type Pending = { resolve: (a: Answer) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };

/** After this many failed attempts in a row the state reads "offline" (retries go on). */
const OFFLINE_AFTER = 4;

export class AgentClient {
  private ws: WebSocket | undefined;
  private stopped = true;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private helloTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private gotHello = false;
  /** The hello said its disk list follows (disksFollow): the next `disks` message is that list. */
  private helloDisksDue = false;
  /** Newest second received (live or backfill); the next subscribe backfills from lastTs + 1. */
  lastTs: number | undefined;
  /** Seconds the live stream skipped that we had to fetch. */
  gaps = 0;
  reconnects = 0;
  state: ConnectionState = 'connecting';
  hello: HelloMessage | undefined;

  constructor(private readonly opts: ClientOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.helloTimer);
    this.ws?.close(1000, 'page closed');
    this.ws = undefined;
    this.failPending('stopped');
  }

  /** Reconnects now (the user pressed "retry" or gave a token). */
  retryNow(): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.attempt = 0;
    this.ws?.close(1000, 'retry');
    this.ws = undefined;
    this.connect();
  }

  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN && this.gotHello;
  }

  request(msg: Omit<RangeRequest, 'id'>): Promise<RangeAnswer>;
  request(msg: Omit<SamplesRequest, 'id'>): Promise<SamplesAnswer>;
  request(msg: Omit<RangeRequest, 'id'> | Omit<SamplesRequest, 'id'>): Promise<Answer> {
    const ws = this.ws;
    if (!ws || !this.connected) return Promise.reject(new Error('not connected to the agent'));
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error('the agent did not answer in time'));
      }, this.opts.requestTimeoutMs ?? 30_000);
      this.pending.set(id, { resolve, reject, timer });
      ws.send(JSON.stringify({ ...msg, id }));
    });
  }

  private setState(state: ConnectionState, detail?: string): void {
    this.state = state;
    this.opts.events.onState(state, detail);
  }

  private connect(): void {
    if (this.stopped) return;
    this.gotHello = false;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.opts.url());
    } catch (e) {
      this.scheduleRetry(e instanceof Error ? e.message : String(e));
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      clearTimeout(this.helloTimer);
      this.helloTimer = setTimeout(() => ws.close(4000, 'no hello'), 10_000);
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws || typeof ev.data !== 'string') return;
      let msg: ServerMessage;
      try {
        msg = JSON.parse(ev.data) as ServerMessage;
      } catch {
        this.opts.events.onNotice('the agent sent a message that is not JSON');
        return;
      }
      if (typeof msg !== 'object' || msg === null || typeof (msg as { t?: unknown }).t !== 'string') return;
      this.handle(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      clearTimeout(this.helloTimer);
      this.ws = undefined;
      this.failPending('connection lost');
      if (this.stopped) return;
      const why = ev.reason || (ev.code === 1006 ? 'connection failed' : `closed (${ev.code})`);
      if (!this.gotHello && this.opts.probe) {
        // The browser hides why an upgrade failed; ask over HTTP whether it was the token.
        void this.opts.probe().then((refusal) => {
          if (refusal) {
            this.setState('offline', refusal);
            // Keep retrying slowly: the user may fix the token in another way.
            this.attempt = Math.max(this.attempt, OFFLINE_AFTER + 2);
          }
          this.scheduleRetry(refusal ?? why);
        });
        return;
      }
      this.scheduleRetry(why);
    };
  }

  private scheduleRetry(why: string): void {
    if (this.stopped) return;
    this.attempt++;
    if (this.state === 'offline' || this.attempt > OFFLINE_AFTER) {
      if (this.state !== 'offline') this.setState('offline', why);
    } else {
      this.setState(this.lastTs === undefined && this.state === 'connecting' ? 'connecting' : 'reconnecting', why);
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(
      () => {
        this.reconnects++;
        this.connect();
      },
      backoffDelay(this.attempt - 1),
    );
  }

  private handle(msg: ServerMessage): void {
    switch (msg.t) {
      case 'hello': {
        clearTimeout(this.helloTimer);
        if (msg.protocol !== PROTOCOL_VERSION) {
          this.opts.events.onNotice(`agent speaks protocol ${msg.protocol}; this dashboard speaks ${PROTOCOL_VERSION}`);
        }
        this.gotHello = true;
        // Seconds seen in another bucket schema count for nothing now (the data layer drops them):
        // backfill as on a first connection.
        // So do columns of another live step (a fleet server's scrape interval changed, protocol 6).
        if (this.hello && (!sameSchema(this.hello.schema, msg.schema) || this.hello.step !== msg.step)) this.lastTs = undefined;
        this.hello = msg;
        this.helloDisksDue = msg.disksFollow === true;
        this.attempt = 0;
        this.opts.events.onHello(msg);
        // Every hello says it afresh: a fault that ended while we were away must not linger.
        this.opts.events.onStatus(msg.status);
        const from =
          this.lastTs !== undefined
            ? this.lastTs + 1
            : Math.max(msg.historyFrom, msg.now - Math.max(0, Math.round(this.opts.initialBackfill())));
        this.send({ t: 'subscribe', backfillFrom: Math.max(msg.historyFrom, Math.min(from, msg.now)) });
        this.setState('live');
        return;
      }
      case 'backfill': {
        const fresh = this.accept(msg.frames);
        if (fresh.length > 0) this.opts.events.onFrames(fresh, 'backfill');
        this.opts.events.onCovered(msg.from, msg.to);
        if (this.lastTs === undefined || msg.to - 1 > this.lastTs) this.lastTs = msg.to - 1;
        return;
      }
      case 'frame': {
        const f = msg.frame;
        if (this.lastTs !== undefined && f.ts > this.lastTs + 1) void this.fillGap(this.lastTs + 1, f.ts);
        const fresh = this.accept([f]);
        if (fresh.length > 0) {
          this.opts.events.onFrames(fresh, 'live');
          this.opts.events.onCovered(f.ts, f.ts + f.step);
        }
        return;
      }
      case 'range':
      case 'samples': {
        const p = this.pending.get(Number(msg.id));
        if (!p) return;
        this.pending.delete(Number(msg.id));
        clearTimeout(p.timer);
        p.resolve(msg);
        return;
      }
      case 'error': {
        if (msg.id !== undefined) {
          const p = this.pending.get(Number(msg.id));
          if (p) {
            this.pending.delete(Number(msg.id));
            clearTimeout(p.timer);
            p.reject(new Error(msg.message));
            return;
          }
        }
        this.opts.events.onNotice(`agent: ${msg.message}`);
        return;
      }
      case 'disks': {
        const ofHello = this.helloDisksDue;
        this.helloDisksDue = false;
        this.opts.events.onDisks(msg.disks, ofHello);
        return;
      }
      case 'status':
        this.opts.events.onStatus(msg.status);
        return;
      case 'lagging': {
        this.opts.events.onNotice(`this page fell behind; ${msg.skipped} live frame(s) were skipped and are being fetched again`);
        const from = this.lastTs !== undefined ? Math.min(this.lastTs + 1, msg.resumeFrom) : msg.resumeFrom;
        this.send({ t: 'subscribe', backfillFrom: from });
        return;
      }
    }
  }

  /** Drops seconds already seen; advances lastTs. */
  private accept(frames: readonly Frame[]): Frame[] {
    const out: Frame[] = [];
    for (const f of frames) {
      if (this.lastTs !== undefined && f.ts <= this.lastTs) continue;
      out.push(f);
      this.lastTs = f.ts + f.step - 1;
    }
    return out;
  }

  private async fillGap(from: number, to: number): Promise<void> {
    this.gaps += to - from;
    try {
      // Columns of the live step (a fleet's over 1 s, protocol 6): the log holds one step.
      const answer = await this.request({ t: 'range', from, to, step: this.hello?.step ?? 1 });
      const frames = answer.frames.filter((f) => f.ts >= from && f.ts < to);
      // Delivered as backfill even though lastTs moved past them: the data layer dedupes by ts.
      if (frames.length > 0) this.opts.events.onFrames(frames, 'backfill');
      this.opts.events.onCovered(from, to);
    } catch (e) {
      this.opts.events.onNotice(`could not fetch missing seconds: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private send(msg: object): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  private failPending(why: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(why));
      this.pending.delete(id);
    }
  }
}

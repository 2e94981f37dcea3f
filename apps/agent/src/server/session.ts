/**
 * One WebSocket client. The heart of it is a cursor: the next second this client should get.
 * Backfill and live delivery are the same loop (pump) moving the cursor forward: while the
 * cursor is behind the newest second, frames come from history (as `backfill` pages when the
 * client asked for a backfill, as `frame`s when it is a few seconds behind), and the newest
 * second comes from the frame just broadcast. Because history reads are synchronous and
 * frames are recorded before they are broadcast, every second is sent exactly once, in order.
 *
 * The cursor moves by the history's fineStep: 1 s, or a fleet server's scrape interval (docs/fleet.md).
 *
 * Back-pressure: nothing large is sent while more than SOFT_BUFFER_BYTES are unsent on the
 * connection; the pump resumes from the send callbacks once the socket drained. A live
 * client that fell more than CATCH_UP_FRAMES behind skips to the newest second and gets a
 * `lagging` notice saying what it missed. Agent memory per client stays below
 * HARD_BUFFER_BYTES, past which the connection is closed.
 */
import type { WebSocket } from 'ws';
import {
  alignDown,
  MAX_FRAMES_PER_ANSWER,
  greeting,
  CLOSE_CODES,
  filterFrame,
  parseClientMessage,
  type ClientMessage,
  type ErrorMessage,
  type FrameFilter,
  type RangeRequest,
  type RequestId,
  type SamplesRequest,
  type ServerMessage,
  type SubscribeRequest,
} from '@blkheat/shared-types';
import type { AgentContext } from './context.js';
import { helloOf } from './hello.js';
import { answerCutter, backfillCutter, parseAll, rangeAnswerFields } from '../history/range-read.js';
import type { ReadScheduler } from './read-scheduler.js';
import { filterKeyOf, frameMessage, requestIdOf, samplesAnswerFields } from './session-messages.js';
import {
  ANSWER_MAX_BYTES,
  BACKFILL_PAGE_BYTES,
  CATCH_UP_FRAMES,
  DEFAULT_SAMPLES_LIMIT,
  HARD_BUFFER_BYTES,
  READ_QUEUED_JOBS_PER_CLIENT,
  REQUEST_BURST,
  REQUEST_RATE,
  RESUME_BUFFER_BYTES,
  SOFT_BUFFER_BYTES,
} from './limits.js';

export type StreamCounter = 'framesSent' | 'framesSkipped' | 'laggingNotices' | 'slowClientsClosed' | 'floodsClosed' | 'bytesSent';

/** What a session needs from the hub that owns it. */
export interface SessionHost {
  readonly ctx: AgentContext;
  /** Where backfill pages and range answers are read, in slices and within budgets. */
  readonly reads: ReadScheduler;
  /** Start of the newest second that can be sent (broadcast, or recorded before this run). */
  newestTs(): number | undefined;
  /** The `frame` message of the newest second for a filter (cached per filter), if ts is the newest. */
  liveMessage(ts: number, filter: FrameFilter, filterKey: string): Buffer | undefined;
  count(what: StreamCounter, n: number): void;
  log(line: string): void;
  /** A line any client can cause again and again: at most one of each kind a second. */
  logRefusal(kind: string, line: string): void;
}

/** Range answers one client may have queued at once; one more place is kept for its backfill. */
const MAX_QUEUED_RANGES = READ_QUEUED_JOBS_PER_CLIENT - 1;

export class ClientSession {
  private filter: FrameFilter = {};
  private filterKey = '*';
  private subscribed = false;
  /** Next second to send; undefined until the first frame after subscribing without backfill. */
  private cursor: number | undefined;
  private backfilling = false;
  /** With no history yet, the first second to send (a subscribe's backfillFrom). */
  private notBefore: number | undefined;
  private waitingDrain = false;
  /** A backfill page is being read (in the read scheduler); the cursor waits for it. */
  private backfillReading = false;
  /** Bumped by every subscribe: a page read for an older one is dropped. */
  private generation = 0;
  private rangesQueued = 0;
  private closed = false;
  private tokens = REQUEST_BURST;
  private tokensAt = Date.now();
  /** Pings sent without a pong since. */
  missedPings = 0;

  constructor(
    private readonly ws: WebSocket,
    private readonly host: SessionHost,
    readonly remote: string,
  ) {}

  /** Greets the client: the hello, and a long disk list (a big fleet's) right after it (greeting). */
  start(): void {
    for (const msg of greeting(helloOf(this.host.ctx))) this.sendJson(msg);
  }

  onClose(): void {
    this.closed = true;
  }

  onMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (this.closed) return;
    // Every message costs a token, valid or not: a flood of anything ends the connection.
    if (!this.takeToken()) {
      this.closeForFlood();
      return;
    }
    if (isBinary) {
      this.sendError({ message: 'binary messages are not accepted: send one JSON object as a text message' });
      return;
    }
    // ws has checked the text is UTF-8 (it closes with 1007 otherwise).
    const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
    const parsed = parseClientMessage(text);
    if (!parsed.ok) {
      const id = requestIdOf(text);
      this.sendError({ ...(id !== undefined ? { id } : {}), message: parsed.message, ...(parsed.field ? { field: parsed.field } : {}) });
      return;
    }
    const msg: ClientMessage = parsed.value;
    try {
      if (msg.t === 'subscribe') this.subscribe(msg);
      else if (msg.t === 'range') this.range(msg);
      else this.samples(msg);
    } catch (e) {
      // A bug or an I/O error while answering: tell the client, keep serving.
      this.host.log(`stream: ${this.remote}: ${msg.t} failed: ${e instanceof Error ? e.stack : String(e)}`);
      this.sendError({ ...('id' in msg ? { id: msg.id } : {}), message: `${msg.t} failed inside the agent` });
    }
  }

  /** Over the message rate: closed with 1008, and nothing more is read from it. */
  private closeForFlood(): void {
    this.host.logRefusal('flood', `stream: ${this.remote}: closed: over ${REQUEST_RATE} messages per second`);
    this.host.count('floodsClosed', 1);
    this.closed = true;
    this.ws.close(CLOSE_CODES.policyViolation, `too many messages: at most ${REQUEST_RATE} per second (bursts of ${REQUEST_BURST})`);
    // Messages already received are not even parsed; a peer that does not close is dropped.
    this.ws.pause();
    setTimeout(() => this.ws.terminate(), 2000).unref();
  }

  /** Called after every broadcast frame and every drained send: moves the cursor forward. */
  pump(): void {
    if (this.closed || !this.subscribed || this.waitingDrain) return;
    const newest = this.host.newestTs();
    if (newest === undefined) return;
    // The first second recorded after subscribing (no history yet), or the one asked for.
    if (this.cursor === undefined) this.cursor = Math.max(newest, this.notBefore ?? newest);
    const history = this.host.ctx.history;
    const step = history.fineStep;
    const end = newest + step;
    while (this.cursor < end) {
      if (this.ws.bufferedAmount > SOFT_BUFFER_BYTES) {
        this.waitingDrain = true;
        return;
      }
      if (this.backfilling) {
        // The page is read in the read scheduler; it calls pump() again when it was sent.
        if (!this.backfillReading) this.readBackfillPage(this.cursor, end);
        return;
      }
      if (this.cursor < newest && this.notBefore !== undefined) {
        // A client that asked for a backfill, behind by seconds that were never recorded (it
        // reconnected to a restarted agent before its first new second): say so with an empty
        // backfill page. As a jump straight to the live second it would read as a hole.
        const page = backfillCutter(history, this.cursor, newest, this.filter, MAX_FRAMES_PER_ANSWER, BACKFILL_PAGE_BYTES).finish();
        if (page.frames.length === 0) {
          this.sendRaw(`{"t":"backfill","from":${page.from},"to":${page.to},"frames":[],"more":${page.to < newest}}`, 0);
          this.cursor = page.to;
          continue;
        }
      }
      if ((end - this.cursor) / step > CATCH_UP_FRAMES) {
        const skipped = Math.ceil((newest - this.cursor) / step);
        this.sendJson({ t: 'lagging', skipped, resumeFrom: this.cursor });
        this.host.count('laggingNotices', 1);
        this.host.count('framesSkipped', skipped);
        this.cursor = newest;
      }
      if (this.cursor < newest) {
        for (const f of parseAll(history.read(step, this.cursor, newest))) {
          this.sendRaw(`{"t":"frame","frame":${JSON.stringify(filterFrame(f, this.filter))}}`, 1);
        }
        this.cursor = newest;
      }
      const live = this.host.liveMessage(newest, this.filter, this.filterKey) ?? this.recordedFrameMessage(newest);
      if (live) this.sendBuffer(live, 1);
      this.cursor = end;
    }
  }

  /** Reads the backfill page from `from` (in slices, within budgets), sends it and pumps on. */
  private readBackfillPage(from: number, end: number): void {
    const generation = this.generation;
    const cutter = backfillCutter(this.host.ctx.history, from, end, this.filter, MAX_FRAMES_PER_ANSWER, BACKFILL_PAGE_BYTES);
    const current = (): boolean => !this.closed && generation === this.generation;
    this.backfillReading = true;
    const queued = this.host.reads.submit(this.remote, {
      gone: () => !current(),
      step: (deadline) => {
        const page = cutter.pull(deadline);
        const bytes = cutter.takeBytesRead();
        if (!page) return { bytes, next: 'more' };
        this.backfillReading = false;
        // Seconds recorded while the page was read are more backfill, not a lag.
        const newest = this.host.newestTs();
        const more = newest !== undefined && page.to < newest + this.host.ctx.history.fineStep;
        this.sendRaw(
          `{"t":"backfill","from":${page.from},"to":${page.to},"frames":[${page.frames.join(',')}],"more":${more}}`,
          page.frames.length,
        );
        this.cursor = page.to;
        if (!more) this.backfilling = false;
        this.pump();
        return { bytes, next: 'done' };
      },
      dropped: (why) => {
        if (!current()) return;
        this.backfillReading = false;
        this.terminate(`backfill not read: ${why}`);
      },
    });
    // A session has at most one backfill read and MAX_QUEUED_RANGES ranges: this cannot fail
    // but at shutdown.
    if (!queued) this.backfillReading = false;
  }

  /** The `frame` message of a second read back from history (the newest second of a previous run). */
  private recordedFrameMessage(ts: number): Buffer | undefined {
    const step = this.host.ctx.history.fineStep;
    const f = parseAll(this.host.ctx.history.read(step, ts, ts + step))[0];
    return f ? frameMessage(f, this.filter) : undefined;
  }

  private subscribe(msg: SubscribeRequest): void {
    this.filter = { disks: msg.disks, classes: msg.classes };
    this.filterKey = filterKeyOf(this.filter);
    const newest = this.host.newestTs();
    const first = !this.subscribed;
    this.subscribed = true;
    // A page being read for an earlier subscribe is dropped.
    this.generation++;
    this.backfillReading = false;
    if (msg.backfillFrom !== undefined) {
      // Not older than the finest tier holds; a second in the future means "live from then on".
      // Whole frames of the stream's step: the one holding backfillFrom is sent whole.
      const { fineStep } = this.host.ctx.history;
      const oldest = this.host.ctx.history.tier(fineStep)?.firstTs;
      const asked = alignDown(msg.backfillFrom, fineStep);
      const from = oldest === undefined ? asked : Math.max(asked, oldest);
      this.notBefore = from;
      this.cursor = newest === undefined ? undefined : from;
      this.backfilling = newest !== undefined && from <= newest;
      if (!this.backfilling) {
        // Nothing to send, but the client still learns the backfill is complete.
        this.sendRaw(`{"t":"backfill","from":${from},"to":${from},"frames":[],"more":false}`, 0);
      }
    } else if (first) {
      this.cursor = newest === undefined ? undefined : newest + this.host.ctx.history.fineStep;
      this.notBefore = undefined;
      this.backfilling = false;
    }
    this.pump();
  }

  private range(msg: RangeRequest): void {
    if (this.refuseWhileBehind(msg.id)) return;
    const fleet = this.host.ctx.fleet;
    if (fleet) {
      // From Prometheus: answered when it answers (matched by id, as every answer is).
      fleet.range(msg, ANSWER_MAX_BYTES).then(
        (a) => this.sendRaw(`{"t":"range","id":${JSON.stringify(msg.id)},${rangeAnswerFields(a)}}`, 0),
        (e: unknown) => this.sendError({ id: msg.id, message: e instanceof Error ? e.message : String(e) }),
      );
      return;
    }
    if (this.rangesQueued >= MAX_QUEUED_RANGES) {
      this.sendError({
        id: msg.id,
        message: `busy: ${MAX_QUEUED_RANGES} range requests of this connection are still being answered; wait for them`,
      });
      return;
    }
    const cutter = answerCutter(this.host.ctx.history, msg, ANSWER_MAX_BYTES);
    this.rangesQueued++;
    const queued = this.host.reads.submit(this.remote, {
      gone: () => this.closed,
      step: (deadline) => {
        const answer = cutter.pull(deadline);
        const bytes = cutter.takeBytesRead();
        if (!answer) return { bytes, next: 'more' };
        this.rangesQueued--;
        this.sendRaw(`{"t":"range","id":${JSON.stringify(msg.id)},${rangeAnswerFields(answer)}}`, 0);
        return { bytes, next: 'done' };
      },
      dropped: (why) => {
        this.rangesQueued--;
        this.sendError({ id: msg.id, message: `range not answered: ${why}` });
      },
    });
    if (!queued) {
      this.rangesQueued--;
      this.sendError({ id: msg.id, message: 'busy: the agent is stopping or this connection has too many requests open' });
    }
  }

  private samples(msg: SamplesRequest): void {
    if (this.refuseWhileBehind(msg.id)) return;
    const res = this.host.ctx.samples.query({ ...msg, limit: msg.limit ?? DEFAULT_SAMPLES_LIMIT });
    this.sendJson({ t: 'samples', id: msg.id, ...samplesAnswerFields(msg, res) });
  }

  /** A client that is not reading gets a short refusal instead of a large answer. */
  private refuseWhileBehind(id: RequestId): boolean {
    const unsent = this.ws.bufferedAmount;
    if (unsent <= SOFT_BUFFER_BYTES) return false;
    this.sendError({ id, message: `not answered: ${unsent} bytes sent earlier are still unread; read them and ask again` });
    return true;
  }

  private takeToken(): boolean {
    const now = Date.now();
    this.tokens = Math.min(REQUEST_BURST, this.tokens + ((now - this.tokensAt) / 1000) * REQUEST_RATE);
    this.tokensAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private sendError(e: Omit<ErrorMessage, 't'>): void {
    this.sendJson({ t: 'error', ...e });
  }

  private sendJson(msg: ServerMessage): void {
    this.sendRaw(JSON.stringify(msg), 0);
  }

  private sendRaw(text: string, frames: number): void {
    this.sendBuffer(Buffer.from(text, 'utf8'), frames);
  }

  private sendBuffer(buf: Buffer, frames: number): void {
    if (this.closed) return;
    this.ws.send(buf, { binary: false }, () => this.onSent());
    this.host.count('bytesSent', buf.length);
    if (frames > 0) this.host.count('framesSent', frames);
    if (this.ws.bufferedAmount > HARD_BUFFER_BYTES) {
      this.host.log(`stream: ${this.remote}: closing, ${this.ws.bufferedAmount} bytes unread`);
      this.host.count('slowClientsClosed', 1);
      this.closed = true;
      // The close frame could not get through a full buffer: drop the connection.
      this.ws.terminate();
    }
  }

  /** A send left the process; resume pumping once enough of the backlog is gone. */
  private onSent(): void {
    if (this.waitingDrain && this.ws.bufferedAmount <= RESUME_BUFFER_BYTES) {
      this.waitingDrain = false;
      this.pump();
    }
  }

  /** Closes the connection with a code and reason (e.g. 1001 at shutdown). */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, reason);
  }

  /** Drops a connection that broke a rule (e.g. stopped answering pings). */
  terminate(reason: string): void {
    this.host.log(`stream: ${this.remote}: ${reason}`);
    this.closed = true;
    this.ws.close(CLOSE_CODES.policyViolation, reason.slice(0, 120));
    this.ws.terminate();
  }
}

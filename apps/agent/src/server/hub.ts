/**
 * All WebSocket clients: broadcasts each new frame (serialized once per distinct filter),
 * announces disk changes, pings to find dead peers, and closes everyone at shutdown.
 */
import type { WebSocket } from 'ws';
import { CLOSE_CODES, type DiskInfo, type Frame, type FrameFilter } from '@blkheat/shared-types';
import { agentStatus, type AgentContext } from './context.js';
import type { StreamStats } from './metrics.js';
import { ClientSession, type SessionHost, type StreamCounter } from './session.js';
import { frameMessage } from './session-messages.js';
import { PING_INTERVAL_MS, PING_MISSES } from './limits.js';
import { ReadScheduler } from './read-scheduler.js';
import { MemoryReclaimer, type ReclaimOptions } from './reclaim.js';
import { clip, throttledLog } from './security.js';

interface LiveFrame {
  readonly frame: Frame;
  /** Serialized `frame` message per filter key, filled on first use. */
  readonly messages: Map<string, Buffer>;
}

export class StreamHub implements SessionHost {
  private readonly sessions = new Map<WebSocket, ClientSession>();
  private live: LiveFrame | undefined;
  /** The status message last sent (JSON), to send only changes. */
  private lastStatus: string | undefined;
  private readonly counters: Record<StreamCounter, number> = {
    framesSent: 0,
    framesSkipped: 0,
    laggingNotices: 0,
    slowClientsClosed: 0,
    floodsClosed: 0,
    bytesSent: 0,
  };
  /** Heavy history reads of every client, WebSocket and REST alike (the app takes it from here). */
  readonly reads: ReadScheduler;
  /** Gives back what bursts of client work leave behind (reclaim.ts). */
  readonly reclaimer: MemoryReclaimer;
  private lastLag: number | null = null;
  private readonly pinger: NodeJS.Timeout;

  constructor(
    readonly ctx: AgentContext,
    private readonly logger: (line: string) => void,
    memory: Pick<ReclaimOptions, 'releaseFreeHeap'> = {},
  ) {
    this.pinger = setInterval(() => this.pingAll(), PING_INTERVAL_MS);
    this.pinger.unref();
    this.reads = new ReadScheduler({ log: logger });
    this.reclaimer = new MemoryReclaimer({ ...memory, busy: () => !this.reads.idle, log: logger });
  }

  get clientCount(): number {
    return this.sessions.size;
  }

  /** Takes over an upgraded connection. */
  attach(ws: WebSocket, remote: string): void {
    const session = new ClientSession(ws, this, remote);
    this.sessions.set(ws, session);
    ws.on('message', (data, isBinary) => session.onMessage(data, isBinary));
    ws.on('pong', () => {
      session.missedPings = 0;
    });
    ws.on('close', () => {
      session.onClose();
      this.sessions.delete(ws);
    });
    ws.on('error', (err) => {
      // Protocol errors (bad frames, oversize messages, text not UTF-8) close the socket; ws has
      // sent the close code. Any client can cause them at will.
      this.logRefusal('protocol', `stream: ${remote}: ${clip(err.message)}`);
    });
    session.start();
  }

  /** A new second was recorded: hand it to every client. */
  broadcastFrame(frame: Frame): void {
    this.live = { frame, messages: new Map() };
    for (const s of this.sessions.values()) {
      try {
        s.pump();
      } catch (e) {
        // One client's failure (say, a history read error) must not stop the others.
        s.terminate(`delivery failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    this.lastLag = Date.now() / 1000 - (frame.ts + frame.step);
  }

  /**
   * Closes every client with CLOSE_CODES.restart, the server running on: what the hello said
   * no longer holds (a fleet server's live step changed), and the clients reconnect for a new one.
   */
  restartClients(reason: string): void {
    this.live = undefined;
    for (const s of this.sessions.values()) s.close(CLOSE_CODES.restart, reason);
  }

  /** Sends the agent's status to every client when it differs from the last one sent. */
  broadcastStatusIfChanged(): void {
    const status = agentStatus(this.ctx);
    const json = JSON.stringify({ t: 'status', status });
    if (json === this.lastStatus) return;
    const first = this.lastStatus === undefined;
    this.lastStatus = json;
    if (first && !status.historyFault && !status.fleetProblem) return; // hello carried it
    const msg = Buffer.from(json, 'utf8');
    for (const ws of this.sessions.keys()) ws.send(msg, { binary: false });
  }

  broadcastDisks(disks: readonly DiskInfo[]): void {
    const msg = Buffer.from(JSON.stringify({ t: 'disks', disks }), 'utf8');
    for (const ws of this.sessions.keys()) ws.send(msg, { binary: false });
  }

  /** Closes every client with `code` (1001 at shutdown) and waits briefly for the close handshakes. */
  async closeAll(code: number = CLOSE_CODES.shuttingDown, reason = 'agent shutting down', waitMs = 1000): Promise<void> {
    clearInterval(this.pinger);
    this.reads.close();
    this.reclaimer.close();
    const sockets = [...this.sessions.keys()];
    const closed = sockets.map((ws) => new Promise<void>((resolve) => ws.once('close', () => resolve())));
    for (const [ws, s] of this.sessions) {
      s.close(code, reason);
      if (ws.readyState === ws.CLOSED) ws.emit('close');
    }
    await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, waitMs).unref())]);
    for (const ws of sockets) ws.terminate();
  }

  stats(): StreamStats {
    return {
      clients: this.sessions.size,
      ...this.counters,
      lastFrameLagS: this.lastLag,
      reads: this.reads.stats(),
      memory: this.reclaimer.stats(),
    };
  }

  // ---- SessionHost ----

  newestTs(): number | undefined {
    return this.live?.frame.ts ?? this.ctx.history.newestTs;
  }

  liveMessage(ts: number, filter: FrameFilter, filterKey: string): Buffer | undefined {
    const live = this.live;
    if (!live || live.frame.ts !== ts) return undefined;
    let msg = live.messages.get(filterKey);
    if (!msg) {
      msg = frameMessage(live.frame, filter);
      live.messages.set(filterKey, msg);
    }
    return msg;
  }

  count(what: StreamCounter, n: number): void {
    this.counters[what] += n;
  }

  log(line: string): void {
    this.logger(line);
  }

  readonly logRefusal = throttledLog((line) => this.logger(line));

  private pingAll(): void {
    for (const [ws, s] of this.sessions) {
      if (s.missedPings >= PING_MISSES) {
        s.terminate(`no answer to ${PING_MISSES} pings`);
        continue;
      }
      s.missedPings++;
      ws.ping();
    }
  }
}

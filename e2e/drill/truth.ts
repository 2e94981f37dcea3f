/**
 * What the drill compares the dashboard with: the agent's own answers (REST, as documented in
 * docs/protocol.md), the frames of a snapshot file, and the WebSocket messages the page
 * received (watched from outside the page through playwright).
 */
import type { Page } from 'playwright-core';
import { addSparseInto, denseHist, phaseHist, type Frame, type LatencyKind } from '@blkheat/shared-types';

/** Per second: I/Os of one (request-based) disk with a `phase` latency in buckets [lo, hi] (all classes unless given). */
export function perSecond(
  frames: readonly Frame[],
  dev: string,
  phase: LatencyKind,
  from: number,
  to: number,
  lo = 0,
  hi = 105,
  classes?: readonly string[],
): Map<number, number> {
  const out = new Map<number, number>();
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    if (f.step !== 1) throw new Error(`frame at ${f.ts} has step ${f.step}, expected 1 s frames`);
    let n = 0;
    for (const d of f.disks) {
      if (d.dev !== dev) continue;
      for (const c of d.cls) {
        if (classes && !classes.includes(c.c)) continue;
        const sparse = phaseHist(c, phase, 'request');
        for (let i = 0; i + 1 < sparse.length; i += 2) {
          const b = sparse[i] as number;
          if (b >= lo && b <= hi) n += sparse[i + 1] as number;
        }
      }
    }
    out.set(f.ts, (out.get(f.ts) ?? 0) + n);
  }
  return out;
}

/** Dense `phase` latency histogram of one (request-based) disk over frames in [from, to). */
export function histogramOf(frames: readonly Frame[], dev: string, phase: LatencyKind, from: number, to: number): number[] {
  const h = denseHist();
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    for (const d of f.disks) if (d.dev === dev) for (const c of d.cls) addSparseInto(h, phaseHist(c, phase, 'request'));
  }
  return [...h];
}

export interface RangeAnswer {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly frames: Frame[];
}

/** GET /api/v1/range at 1 s (the caller keeps ranges short enough for 1 s answers). */
export async function agentRange(baseUrl: string, from: number, to: number, disks: readonly string[]): Promise<RangeAnswer> {
  const u = new URL(`api/v1/range`, baseUrl);
  u.searchParams.set('from', String(from));
  u.searchParams.set('to', String(to));
  u.searchParams.set('step', '1');
  for (const d of disks) u.searchParams.append('disk', d);
  const res = await fetch(u);
  if (res.status !== 200) throw new Error(`GET ${u.pathname}${u.search}: HTTP ${res.status} ${await res.text()}`);
  const answer = (await res.json()) as RangeAnswer;
  if (answer.step !== 1) throw new Error(`the agent answered [${from}, ${to}) at step ${answer.step}, not 1 s`);
  return answer;
}

/** One stream message the page received, reduced to what the drill checks. */
export interface WsEvent {
  /** Which WebSocket of the page (1, 2, … in order of opening). */
  readonly socket: number;
  readonly at: number;
  readonly t: string;
  /** backfill: its [from, to) and frame seconds; frame: its second. */
  readonly from?: number;
  readonly to?: number;
  readonly seconds?: readonly number[];
}

/** Records the stream messages a page receives, and when its sockets open and close. */
export class StreamRecorder {
  readonly events: WsEvent[] = [];
  readonly sockets: { id: number; openedAt: number; closedAt?: number }[] = [];

  attach(page: Page): void {
    page.on('websocket', (ws) => {
      if (!ws.url().includes('/api/v1/stream')) return;
      const socket = { id: this.sockets.length + 1, openedAt: Date.now() } as { id: number; openedAt: number; closedAt?: number };
      this.sockets.push(socket);
      ws.on('framereceived', ({ payload }) => {
        if (typeof payload !== 'string') return;
        let msg: { t?: unknown; from?: number; to?: number; frames?: Frame[]; frame?: Frame };
        try {
          msg = JSON.parse(payload) as typeof msg;
        } catch {
          return;
        }
        if (typeof msg.t !== 'string') return;
        const at = Date.now();
        if (msg.t === 'backfill')
          this.events.push({ socket: socket.id, at, t: msg.t, from: msg.from, to: msg.to, seconds: (msg.frames ?? []).map((f) => f.ts) });
        else if (msg.t === 'frame' && msg.frame) this.events.push({ socket: socket.id, at, t: msg.t, seconds: [msg.frame.ts] });
        else this.events.push({ socket: socket.id, at, t: msg.t });
      });
      ws.on('close', () => {
        socket.closedAt = Date.now();
      });
    });
  }

  /** Every second received on the given sockets (frames and backfill), with repeats. */
  secondsOn(sockets: readonly number[]): number[] {
    return this.events.filter((e) => sockets.includes(e.socket)).flatMap((e) => e.seconds ?? []);
  }
}

/** Wall clock in unix seconds. */
export function nowS(): number {
  return Date.now() / 1000;
}

/** "a..b" runs of a sorted list of seconds, for messages. */
export function runs(seconds: readonly number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < seconds.length) {
    let j = i;
    while (j + 1 < seconds.length && (seconds[j + 1] as number) === (seconds[j] as number) + 1) j++;
    out.push(i === j ? `${seconds[i]}` : `${seconds[i]}..${seconds[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

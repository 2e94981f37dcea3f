/**
 * Helpers for the acceptance tests: the real agent binary on the real kernel (as root), real
 * loop devices and real I/O from fio. Everything started here is stopped in t.after().
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createLoopDevice,
  startAgentProcess,
  startFio,
  WsTestClient,
  type AgentProcess,
  type CleanupContext,
  type FioJob,
  type LoopDevice,
} from '@blkheat/testkit';
import { conservedCount, type Frame, type HelloMessage, type ServerMessage } from '@blkheat/shared-types';

export type TestContextLike = CleanupContext & { skip(message?: string): void; diagnostic(message: string): void };

/** Skips the test unless it runs as root with fio installed (the CI machine has both). */
export function needsRootAndFio(t: TestContextLike): boolean {
  if (process.getuid?.() !== 0) {
    t.skip('needs root: loads BPF programs and creates loop devices');
    return false;
  }
  if (spawnSync('fio', ['--version']).status !== 0) {
    t.skip('needs fio (apt-get install fio)');
    return false;
  }
  return true;
}

export function tempDataDir(t: CleanupContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-serve-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the real agent; stopped (SIGTERM, then SIGKILL) after the test. */
export async function startRealAgent(t: CleanupContext, dataDir: string, args: readonly string[] = []): Promise<AgentProcess> {
  const agent = await startAgentProcess({ dataDir, args });
  t.after(async () => {
    await agent.stop('SIGTERM', 15_000);
  });
  return agent;
}

/**
 * What most acceptance tests start with: a loop device of `sizeMiB`, the real agent on a fresh
 * data directory, then fio on the loop device (when `fio` is given). Everything is stopped and
 * removed after the test.
 */
export async function agentOnLoop(
  t: CleanupContext,
  sizeMiB: number,
  fio?: Omit<FioJob, 'filename'>,
): Promise<{ loop: LoopDevice; agent: AgentProcess; dataDir: string }> {
  const loop = createLoopDevice({ sizeMiB, t });
  const dataDir = tempDataDir(t);
  const agent = await startRealAgent(t, dataDir);
  if (fio) startFio({ filename: loop.path, ...fio }, t);
  return { loop, agent, dataDir };
}

/** Connects, reads the hello and subscribes. */
export async function subscriber(
  t: CleanupContext,
  agent: AgentProcess,
  subscribe: Record<string, unknown> = {},
  query = '',
): Promise<{ client: WsTestClient; hello: HelloMessage }> {
  const client = await WsTestClient.connect(`${agent.streamUrl}${query}`);
  t.after(() => client.destroy());
  const hello = (await client.next(15_000)).json<HelloMessage>();
  if (hello.t !== 'hello') throw new Error(`expected hello, got ${JSON.stringify(hello).slice(0, 200)}`);
  client.sendJson({ t: 'subscribe', ...subscribe });
  return { client, hello };
}

/** Reads messages until `count` frames (live or backfill) arrived; returns them in arrival order. */
export async function readFrames(
  client: WsTestClient,
  count: number,
  timeoutMs = 30_000,
): Promise<{ frames: Frame[]; messages: ServerMessage[] }> {
  const frames: Frame[] = [];
  const messages: ServerMessage[] = [];
  const deadline = Date.now() + timeoutMs;
  while (frames.length < count) {
    const m = (await client.next(Math.max(1, deadline - Date.now()))).json<ServerMessage>();
    messages.push(m);
    if (m.t === 'frame') frames.push(m.frame);
    else if (m.t === 'backfill') frames.push(...m.frames);
  }
  return { frames, messages };
}

/** I/Os of a disk in a frame as /proc/diskstats counts them: timed (not passthrough) + untimed. */
export function diskCount(frame: Frame, dev: string): number {
  let n = 0;
  for (const d of frame.disks) if (d.dev === dev) n += conservedCount(d);
  return n;
}

/** Asserts a list of seconds is strictly consecutive (no gap, no duplicate); returns the first problem. */
export function gapOrDuplicate(seconds: readonly number[]): string | undefined {
  for (let i = 1; i < seconds.length; i++) {
    const prev = seconds[i - 1] as number;
    const cur = seconds[i] as number;
    if (cur === prev) return `second ${cur} twice`;
    if (cur !== prev + 1) return `gap: ${prev} then ${cur}`;
  }
  return undefined;
}

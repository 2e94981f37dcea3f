/**
 * bench/soak: real I/O against the real agent for a while, with faults injected at random:
 * history's disk held full (at segment boundaries too: segments are shortened to 20 s), the agent
 * SIGSTOPped for 5 s, bursts of WebSocket clients coming and going, loop devices made and
 * removed, and kill -9 with a restart. Prints what a user relies on:
 *   - seconds delivered live vs seconds the agent ran (every one, once, in order),
 *   - seconds in history vs elapsed,
 *   - conservation per disk since the last restart (live frames vs /proc/diskstats),
 *   - RSS, and the faults survived.
 * Exit 0 when live delivery and conservation are complete, else 1.
 *
 *   node --import tsx bench/soak.ts [--seconds 600] [--seed 1]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame, ServerMessage } from '@blkheat/shared-types';
import {
  createLoopDevice,
  diskstatsDelta,
  groupCountsByDisk,
  holdFilesystemFull,
  mountTmpfs,
  quietBoundary,
  runCommand,
  runFio,
  seededRandom,
  sleep,
  startAgentProcess,
  WsTestClient,
  type AgentProcess,
  type QuietBoundary,
} from '@blkheat/testkit';
import { benchArgs, usageError } from './cli.js';

const USAGE = `usage: node --import tsx bench/soak.ts [--seconds N] [--seed S]   (as root)

The agent under real I/O with faults at random (see the file's header).

  --seconds N   seconds of the soak, 30 or more (default 600)
  --seed S      the faults' random seed, a whole number (default 1): a run reproduces with it
  -h, --help    show this help`;
const values = benchArgs('bench/soak', USAGE, { seconds: { type: 'string', default: '600' }, seed: { type: 'string', default: '1' } });
const seconds = Number(values.seconds);
const seed = Number(values.seed);
if (!Number.isInteger(seconds) || seconds < 30)
  usageError('bench/soak', USAGE, `--seconds takes a whole number, 30 or more, not '${values.seconds}'`);
if (!Number.isInteger(seed)) usageError('bench/soak', USAGE, `--seed takes a whole number, not '${values.seed}'`);
if (process.getuid?.() !== 0) {
  console.error('bench/soak: run as root (the agent loads BPF programs; loop devices, tmpfs)');
  process.exit(2);
}

const random = seededRandom(seed);
const cleanups: (() => void | Promise<void>)[] = [];
const t = { after: (fn: () => void | Promise<void>) => void cleanups.push(fn) };
const ENV = { ...process.env, BLKHEAT_SEGMENT_SPANS: '20,40,120' };

/** The agent's resident memory must stay under this (it holds an hour of samples at most). */
const RSS_BOUND_BYTES = 400 * 2 ** 20;

type Fault = 'full' | 'stop' | 'churn' | 'loop' | 'kill9';
const survived: Record<Fault, number> = { full: 0, stop: 0, churn: 0, loop: 0, kill9: 0 };

/** One agent process's life: the live seconds its main client received, in arrival order. */
interface Incarnation {
  readonly agent: AgentProcess;
  readonly startedAt: number;
  readonly frames: Frame[];
  maxRss: number;
}

async function main(): Promise<number> {
  const fsDir = mkdtempSync(join(tmpdir(), 'blkheat-soak-'));
  const unmount = mountTmpfs(fsDir, 24);
  t.after(() => {
    unmount();
    rmSync(fsDir, { recursive: true, force: true });
  });
  const dataDir = join(fsDir, 'data');
  const disks = [createLoopDevice({ sizeMiB: 128, t }), createLoopDevice({ sizeMiB: 128, t })];
  const names = disks.map((d) => d.name);
  const args = names.flatMap((n) => ['--disk', n]);

  // Load in bursts (6 s on, 2 s off) so that quiet second boundaries exist for exact counts.
  let loading = true;
  const load = (async () => {
    while (loading) {
      await Promise.all([
        runFio({ filename: disks[0]?.path as string, rw: 'randrw', runtimeS: 6, rateIops: 800, fsync: 4 }),
        runFio({ filename: disks[1]?.path as string, rw: 'randwrite', runtimeS: 6, rateIops: 200, sync: true }),
      ]);
      await sleep(2000);
    }
  })();

  const incarnations: Incarnation[] = [];
  const start = async (): Promise<Incarnation> => {
    const agent = await startAgentProcess({ dataDir, args, env: ENV });
    const inc: Incarnation = { agent, startedAt: Math.floor(Date.now() / 1000), frames: [], maxRss: 0 };
    incarnations.push(inc);
    void follow(inc);
    return inc;
  };
  let current = await start();
  t.after(() => current.agent.stop('SIGTERM', 15_000).then(() => undefined));
  let window: QuietBoundary = await quietBoundary(names);

  const began = Date.now();
  const endAt = began + seconds * 1000;
  while (Date.now() < endAt - 12_000) {
    await sleep(4000 + random() * 6000);
    const late = Date.now() > began + seconds * 700;
    const choices: Fault[] = late ? ['full', 'stop', 'churn', 'loop'] : ['full', 'stop', 'churn', 'loop', 'kill9'];
    const fault = choices[Math.floor(random() * choices.length)] as Fault;
    current.maxRss = Math.max(current.maxRss, current.agent.rssBytes());
    if (fault === 'full') {
      const full = holdFilesystemFull(fsDir);
      await sleep(3000 + random() * 5000);
      full.release();
    } else if (fault === 'stop') {
      process.kill(current.agent.pid, 'SIGSTOP');
      await sleep(5000);
      process.kill(current.agent.pid, 'SIGCONT');
    } else if (fault === 'churn') {
      await churn(current.agent, 30);
    } else if (fault === 'loop') {
      const extra = createLoopDevice({ sizeMiB: 16 });
      await runCommand('dd', ['if=/dev/zero', `of=${extra.path}`, 'bs=64k', 'count=64', 'oflag=direct', 'status=none']);
      extra.close();
    } else {
      await current.agent.kill9();
      current = await start();
      window = await quietBoundary(names);
    }
    survived[fault]++;
  }
  current.maxRss = Math.max(current.maxRss, current.agent.rssBytes());
  loading = false;
  await load;
  const end = await quietBoundary(names);
  // The frame of the last second is sent once that second closes and is harvested.
  const deadline = Date.now() + 10_000;
  while (!current.frames.some((f) => f.ts >= end.second) && Date.now() < deadline) await sleep(200);

  return report(incarnations, current, window, end, names, began);
}

/** The main live client of an incarnation: subscribes without backfill and keeps every frame. */
async function follow(inc: Incarnation): Promise<void> {
  let client: WsTestClient;
  try {
    client = await WsTestClient.connect(inc.agent.streamUrl);
  } catch {
    return;
  }
  try {
    await client.next(15_000); // hello
    client.sendJson({ t: 'subscribe' });
    for (;;) {
      const m = (await client.next(30_000)).json<ServerMessage>();
      if (m.t === 'frame') inc.frames.push(m.frame);
      else if (m.t === 'lagging') throw new Error(`the live client fell behind: ${JSON.stringify(m)}`);
    }
  } catch {
    // The agent went away (kill -9) or the run ended.
  } finally {
    client.destroy();
  }
}

/** `n` clients connect, ask for a minute of backfill, read a little, and drop the connection. */
async function churn(agent: AgentProcess, n: number): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await Promise.all(
    Array.from({ length: n }, async () => {
      try {
        const c = await WsTestClient.connect(agent.streamUrl);
        await c.next(10_000);
        c.sendJson({ t: 'subscribe', backfillFrom: now - 60 });
        await c.next(10_000);
        c.destroy();
      } catch {
        // A client refused under load is fine; the agent must just survive it.
      }
    }),
  );
}

async function report(
  incarnations: readonly Incarnation[],
  current: Incarnation,
  window: QuietBoundary,
  end: QuietBoundary,
  names: readonly string[],
  began: number,
): Promise<number> {
  let failed = false;
  const elapsed = Math.round((Date.now() - began) / 1000);
  console.log(`bench/soak: ${elapsed} s, seed ${seed}, ${incarnations.length} agent run(s)`);
  console.log(
    `  faults survived: ${Object.entries(survived)
      .map(([f, n]) => `${f} ×${n}`)
      .join(', ')}`,
  );

  // Live: within each run, every second from its first frame to its last, once, in order.
  let expected = 0;
  let delivered = 0;
  for (const inc of incarnations) {
    const ts = inc.frames.map((f) => f.ts);
    if (ts.length === 0) continue;
    const first = ts[0] as number;
    const last = ts[ts.length - 1] as number;
    expected += last - first + 1;
    delivered += new Set(ts).size;
    const inOrder = ts.every((s, i) => i === 0 || s === (ts[i - 1] as number) + 1);
    if (!inOrder || new Set(ts).size !== last - first + 1) {
      failed = true;
      console.log(`  live: run started ${inc.startedAt}: seconds out of order, missing or repeated`);
    }
  }
  const livePct = expected > 0 ? (delivered / expected) * 100 : 0;
  console.log(`  live: ${delivered} of ${expected} seconds delivered while the agent ran (${livePct.toFixed(1)} %)`);
  if (delivered !== expected || expected === 0) failed = true;

  // History: what the agent can answer for now.
  const res = await fetch(`${current.agent.url}api/v1/range?from=${Math.floor(began / 1000)}&to=${end.second}&step=1`);
  const recorded = ((await res.json()) as { frames: Frame[] }).frames.length;
  console.log(`  history: ${recorded} of ${end.second - Math.floor(began / 1000)} seconds recorded (the rest: disk full, restarts)`);

  // Conservation since the last restart, from the frames the live client received.
  const ours = groupCountsByDisk(current.frames, window.second, end.second);
  const kernel = diskstatsDelta(window.stats, end.stats);
  for (const name of names) {
    const k = kernel.get(name);
    const o = k ? ours.get(k.dev) : undefined;
    if (!k || !o) {
      failed = true;
      console.log(`  conservation: ${name}: no data`);
      continue;
    }
    const rows = (
      [
        ['read', k.reads],
        ['write', k.writes],
        ['discard', k.discards],
        ['flush', k.flushes],
      ] as const
    ).map(([g, v]) => ({ g, ours: o.counted[g] + o.untimed[g], kernel: v }));
    const exact = rows.every((r) => r.ours === r.kernel);
    if (!exact) failed = true;
    console.log(
      `  conservation ${name} over ${end.second - window.second} s: ${rows.map((r) => `${r.g} ${r.ours}/${r.kernel}`).join(', ')} (ours/diskstats) ${exact ? 'exact' : 'MISMATCH'}`,
    );
  }
  const rss = incarnations.map((i) => i.maxRss);
  const bounded = Math.max(...rss) <= RSS_BOUND_BYTES;
  if (!bounded) failed = true;
  console.log(
    `  RSS: at most ${(Math.max(...rss) / 2 ** 20).toFixed(0)} MiB (per run: ${rss.map((r) => (r / 2 ** 20).toFixed(0)).join(', ')} MiB; bound ${RSS_BOUND_BYTES / 2 ** 20} MiB)${bounded ? '' : ' OVER'}`,
  );
  console.log(`bench/soak: ${failed ? 'FAIL' : 'PASS'}`);
  return failed ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (e) {
  console.error(`bench/soak: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
} finally {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch (e) {
      console.error(`bench/soak: cleanup: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
process.exit(code);

// History faults never silence the live view. The real agent keeps its history on a small tmpfs
// that the test fills up (ENOSPC) in the middle of a segment, across a 1 s-tier segment boundary
// and across a 10 s-tier segment boundary (segment spans shortened with BLKHEAT_SEGMENT_SPANS so
// boundaries come every few seconds). Each time: every second is delivered live, /healthz names
// the fault, history resumes within 2 s of space returning, and a restart needs no manual step.
// Also: a data directory the agent's user cannot reach is refused at start, leaving no pid file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentStatus, Frame, ServerMessage } from '@blkheat/shared-types';
import {
  AGENT_CLI,
  createLoopDevice,
  holdFilesystemFull,
  mountTmpfs,
  parsePrometheusText,
  sleep,
  sleepUntilSecond,
  startAgentProcess,
  startFio,
  waitFor,
  type AgentProcess,
  type WsTestClient,
} from '@blkheat/testkit';
import { gapOrDuplicate, needsRootAndFio, subscriber, type TestContextLike } from './serve-fixtures.js';

/** Segment spans of the 1 s, 10 s and 60 s tiers for these tests: a boundary every 20 s / 40 s. */
const SPANS = { fine: 20, ten: 40, sixty: 120 };
const ENV = { ...process.env, BLKHEAT_SEGMENT_SPANS: `${SPANS.fine},${SPANS.ten},${SPANS.sixty}` };
const FAULT_S = 10;

/** A tmpfs of `sizeMiB` mounted on a fresh directory, unmounted after the test. */
function smallTmpfs(t: TestContextLike, sizeMiB: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-fullfs-'));
  const unmount = mountTmpfs(dir, sizeMiB);
  t.after(() => {
    unmount();
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Every live frame's second, as the client receives them, until stopped. */
function collectLive(client: WsTestClient): { seconds: number[]; statuses: AgentStatus[]; stop: () => Promise<void> } {
  const seconds: number[] = [];
  const statuses: AgentStatus[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      let m: ServerMessage;
      try {
        m = (await client.next(3000)).json<ServerMessage>();
      } catch {
        continue;
      }
      if (m.t === 'frame') seconds.push(m.frame.ts);
      else if (m.t === 'backfill') seconds.push(...m.frames.map((f) => f.ts));
      else if (m.t === 'status') statuses.push(m.status);
      else if (m.t === 'lagging') throw new Error(`client told it lags: ${JSON.stringify(m)}`);
    }
  })();
  return {
    seconds,
    statuses,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

async function healthz(agent: AgentProcess): Promise<{ status: number; body: { reasons?: string[] } }> {
  const r = await fetch(`${agent.url}healthz`);
  return { status: r.status, body: (await r.json()) as { reasons?: string[] } };
}

async function recorded(agent: AgentProcess, from: number, to: number): Promise<number[]> {
  const r = await fetch(`${agent.url}api/v1/range?from=${from}&to=${to}&step=1`);
  return ((await r.json()) as { frames: Frame[] }).frames.map((f) => f.ts);
}

for (const { name, boundaryOf, fillBeforeMs } of [
  // Mid-segment: the fault starts and ends well inside one 1 s-tier segment.
  { name: 'mid-segment', boundaryOf: (now: number) => Math.ceil((now + 4) / SPANS.fine) * SPANS.fine + SPANS.fine / 2, fillBeforeMs: 0 },
  // Across a 1 s-tier boundary: the next segment must be created while the disk is full.
  {
    name: 'at a 1 s-tier segment boundary',
    boundaryOf: (now: number) => Math.ceil((now + 4) / SPANS.fine) * SPANS.fine,
    fillBeforeMs: 1500,
  },
  // Across a 10 s-tier boundary: that tier's bucket is flushed into a new segment while full.
  {
    name: 'at a 10 s-tier segment boundary',
    boundaryOf: (now: number) => Math.ceil((now + 4) / SPANS.ten) * SPANS.ten,
    fillBeforeMs: 1500,
  },
]) {
  test(`disk full ${name}: live goes on, /healthz names it, history resumes, restart needs nothing`, { timeout: 180_000 }, async (t) => {
    if (!needsRootAndFio(t)) return;
    const fs = smallTmpfs(t, 6);
    const dataDir = join(fs, 'data');
    const loop = createLoopDevice({ sizeMiB: 64, t });
    let agent = await startAgentProcess({ dataDir, args: ['--disk', loop.name, '--user', 'root'], env: ENV });
    t.after(() => agent.stop('SIGTERM', 15_000));
    startFio({ filename: loop.path, rw: 'randrw', runtimeS: 120, rateIops: 400 }, t);
    const { client } = await subscriber(t, agent);
    const live = collectLive(client);

    const boundary = boundaryOf(Math.floor(Date.now() / 1000));
    await sleepUntilSecond(boundary, -fillBeforeMs);
    const filler = holdFilesystemFull(fs);
    t.after(() => filler.release());
    const faultFrom = Math.floor(Date.now() / 1000);
    // The agent first deletes its older segments to make room (they are taken again at once),
    // then has nothing left to delete: from then on /healthz must name the fault.
    let during: Awaited<ReturnType<typeof healthz>> | undefined;
    const faultEnd = Date.now() + FAULT_S * 1000;
    while (Date.now() < faultEnd) {
      const h = await healthz(agent);
      if (h.status === 503) during = h;
      await sleep(250);
    }
    filler.release();
    const freedAt = Date.now() / 1000;
    await sleep(4000);
    await live.stop();

    const seen = during;
    t.diagnostic(
      `filled at ${faultFrom} (boundary ${boundary}), freed at ${freedAt.toFixed(1)}; /healthz during: ${JSON.stringify(seen?.body.reasons)}`,
    );
    assert.ok(seen, '/healthz was never degraded while history could not be written');
    assert.ok(
      seen.body.reasons?.some((r) => r.startsWith('history:') && r.includes('ENOSPC') && r.includes(dataDir)),
      `/healthz names the fault and the file: ${JSON.stringify(seen.body.reasons)}`,
    );
    // The dashboard was told: a status naming the fault, then one without it.
    const faults = live.statuses.filter((st) => st.historyFault);
    assert.ok(
      faults.some((st) => st.historyFault?.message.includes('ENOSPC')),
      `status messages: ${JSON.stringify(live.statuses)}`,
    );
    assert.equal(live.statuses.at(-1)?.historyFault, undefined, 'the last status says the fault is over');
    // Every second of the fault was delivered live, once, in order.
    const seconds = live.seconds.filter((s) => s >= faultFrom - 2 && s <= Math.floor(freedAt) + 2);
    assert.equal(gapOrDuplicate(seconds), undefined, `live seconds: ${seconds.join(',')}`);
    assert.ok(seconds.length >= FAULT_S + 3, `only ${seconds.length} live seconds around the fault`);
    // History resumed within 2 s of the space coming back: the seconds from then on are recorded
    // (asked for once they are closed and harvested).
    const resumed = Math.ceil(freedAt) + 2;
    await sleepUntilSecond(resumed + 2, 800);
    const after = await recorded(agent, resumed, resumed + 2);
    assert.deepEqual(after, [resumed, resumed + 1], `history after the fault: ${after.join(',')}`);
    assert.equal((await healthz(agent)).status, 200, '/healthz is ok again');
    const metrics = await (await fetch(`${agent.url}metrics`)).text();
    const notRecorded = parsePrometheusText(metrics).get('blkheat_history_seconds_not_recorded_total')?.samples[0]?.value ?? NaN;
    assert.ok(notRecorded >= 1 && notRecorded <= FAULT_S + 2, `${notRecorded} seconds not recorded`);

    // A restart right away needs no manual step, and serves what was recorded.
    await agent.stop('SIGTERM', 15_000);
    agent = await startAgentProcess({ dataDir, args: ['--disk', loop.name, '--user', 'root'], env: ENV });
    const back = await recorded(agent, resumed, resumed + 2);
    assert.deepEqual(back, [resumed, resumed + 1], 'what was recorded survives the restart');
  });
}

test(
  'a data directory the agent user cannot reach is refused at start: clear message, exit 1, no pid file',
  { timeout: 60_000 },
  async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('needs root: the agent switches to --user nobody');
      return;
    }
    const locked = mkdtempSync(join(tmpdir(), 'blkheat-locked-'));
    t.after(() => rmSync(locked, { recursive: true, force: true }));
    chmodSync(locked, 0o700); // root's: nobody may not search it
    const dataDir = join(locked, 'data');
    mkdirSync(dataDir);
    const r = spawnSync(process.execPath, [AGENT_CLI, 'serve', '--data-dir', dataDir, '--port', '0', '--user', 'nobody'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    t.diagnostic(r.stderr.trim());
    assert.equal(r.status, 1, `exit code ${r.status}`);
    assert.match(r.stderr, new RegExp(`--data-dir ${dataDir}`), 'names the directory');
    assert.match(r.stderr, /nobody/, 'names the user');
    assert.match(r.stderr, new RegExp(`${locked} is not searchable`), 'names the directory in the way');
    assert.match(r.stderr, /Fix: /, 'says how to fix it');
    assert.equal(existsSync(join(dataDir, 'agent.pid')), false, 'no pid file left');
    assert.doesNotMatch(r.stdout, /listening on/);
  },
);

test('kill -9 at random moments, segment boundaries included: every restart succeeds and serves', { timeout: 240_000 }, async (t) => {
  if (!needsRootAndFio(t)) return;
  const dataDir = mkdtempSync(join(tmpdir(), 'blkheat-kill9-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  // A 1 s-tier segment every 2 s: segment creations are frequent enough for kills to land near them.
  const env = { ...process.env, BLKHEAT_SEGMENT_SPANS: '2,20,60' };
  const loop = createLoopDevice({ sizeMiB: 64, t });
  startFio({ filename: loop.path, rw: 'randread', runtimeS: 200, rateIops: 300 }, t);
  let served = 0;
  for (let i = 0; i < 8; i++) {
    const agent = await startAgentProcess({ dataDir, args: ['--disk', loop.name, '--user', 'root'], env });
    await sleep(1500 + Math.random() * 2500);
    await agent.kill9();
    served++;
  }
  const agent = await startAgentProcess({ dataDir, args: ['--disk', loop.name, '--user', 'root'], env });
  t.after(() => agent.stop('SIGTERM', 15_000));
  await sleep(2500);
  const now = Math.floor(Date.now() / 1000);
  const seconds = await recorded(agent, now - 60, now);
  t.diagnostic(`${served} kill -9s survived; ${seconds.length} seconds recorded in the last minute`);
  assert.ok(seconds.length > 10, `history after the kills: ${seconds.join(',')}`);
  assert.equal(gapOrDuplicate(seconds.filter((s) => s >= now - 2)), undefined);
});

test('a second signal exits at once (130) and still removes the pid file', { timeout: 60_000 }, async (t) => {
  if (!needsRootAndFio(t)) return;
  const dataDir = mkdtempSync(join(tmpdir(), 'blkheat-twice-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const agent = await startAgentProcess({ dataDir, args: [] });
  t.after(() => agent.stop('SIGKILL'));
  assert.equal(existsSync(join(dataDir, 'agent.pid')), true, 'the pid file while it runs');
  // A clean shutdown can finish in milliseconds; a second signal sent blind may then find the
  // agent already gone (exit 0). So the test holds the shutdown open the way a stuck dashboard
  // would: a stream client that stops reading never answers the agent's close frame, and the
  // agent waits up to a second for it. The second signal goes only once the agent has said
  // that the first one began its shutdown, and it is of another kind (two of one kind pending
  // together are delivered once).
  const { client } = await subscriber(t, agent);
  client.pause();
  agent.child.kill('SIGINT');
  await waitFor(
    () => agent.stderr().includes('serve: SIGINT: detaching probes'),
    15_000,
    () => `the agent to log that SIGINT began its shutdown; stderr:\n${agent.stderr()}`,
  );
  agent.child.kill('SIGTERM');
  const exit = await agent.exited;
  t.diagnostic(`exit ${JSON.stringify(exit)}`);
  assert.equal(exit.code, 130, `exit ${JSON.stringify(exit)}: the second signal exits at once`);
  assert.equal(existsSync(join(dataDir, 'agent.pid')), false, 'no pid file left');
  assert.match(agent.stderr(), /serve: SIGTERM again, exiting without a clean shutdown/, 'the agent says why it stopped short');
});

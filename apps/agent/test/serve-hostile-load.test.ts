// The hostile clients an adversary tries, each against the real agent on real I/O, with an hour of
// history to read. Through each attack, /healthz (probed every 50 ms from a process of its own)
// answers within 200 ms, a watching client gets every live second, and the agent's RSS stays under
// 400 MB and comes back to within 50 MB of where it started once the attackers are gone (the
// agent's reclaimer: server/reclaim.ts).
//   - a flood of invalid messages ("junk") from one client: closed with 1008, again and again;
//   - 50 connections each subscribing with a backfill up to 3,000 s back, 15 times a second;
//   - 100 connections asking for a 9-minute snapshot and never reading it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import {
  parsePrometheusText,
  sleep,
  startFio,
  startHealthProbe,
  WsTestClient,
  type AgentProcess,
  type HealthProbe,
} from '@blkheat/testkit';
import { createLoopDevice } from '@blkheat/testkit';
import { writeSyntheticHistory } from '../../../bench/agent/history.ts';
import { gapOrDuplicate, needsRootAndFio, startRealAgent, subscriber, tempDataDir, type TestContextLike } from './serve-fixtures.js';

const MiB = 1024 * 1024;
const HEALTHZ_LIMIT_MS = 200;
const RSS_LIMIT = 400 * MiB;
const RSS_RETURN = 50 * MiB;

/** The real agent (as nobody) on a busy loop device, over a data dir holding an hour of history of 16 disks. */
async function agentWithHistory(t: TestContextLike): Promise<AgentProcess> {
  const dataDir = tempDataDir(t);
  const made = writeSyntheticHistory(join(dataDir, 'history'), 3600, 16);
  // Written as root; the agent runs as nobody and must be able to append to it.
  execFileSync('chown', ['-R', 'nobody:', dataDir]);
  t.diagnostic(`history: ${(made.bytes / MiB).toFixed(1)} MiB for 3,600 s of 16 disks`);
  const loop = createLoopDevice({ sizeMiB: 64, t });
  const agent = await startRealAgent(t, dataDir, ['--disk', loop.name]);
  startFio({ filename: loop.path, rw: 'randrw', runtimeS: 120, rateIops: 500 }, t);
  return agent;
}

interface Watch {
  /** Ends the watch and asserts what every attack is held to (the list above). */
  check(what: string): Promise<void>;
}

/**
 * Watches an agent while `attack` runs: health probe, a subscriber's live seconds, RSS. Returns
 * once the agent has a baseline; check() after the attack asserts the limits.
 */
async function watch(t: TestContextLike, agent: AgentProcess): Promise<Watch> {
  const watcher = await subscriber(t, agent);
  // The first live frame: the watch starts from a second the agent is known to send.
  const seconds: number[] = [];
  const first = await watcher.client.nextJson<{ t: string; frame?: { ts: number } }>((m) => m.t === 'frame', 15_000);
  seconds.push(first.frame?.ts as number);
  const rssStart = agent.rssBytes();
  let rssMax = rssStart;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, agent.rssBytes())), 200);
  t.after(() => clearInterval(sampler));
  const probe: HealthProbe = startHealthProbe(agent.url, HEALTHZ_LIMIT_MS);
  // The watcher reads as it goes, like a dashboard: its buffer never backs up into the agent.
  let reading = true;
  const reader = (async () => {
    while (reading) {
      const m = await watcher.client.next(30_000).catch(() => undefined);
      if (!m) break;
      const v = m.json<{ t: string; frame?: { ts: number } }>();
      if (v.t === 'frame' && v.frame) seconds.push(v.frame.ts);
    }
  })();
  return {
    async check(what) {
      // Two live seconds after the attack, so a second held back during it would show.
      const last = Math.floor(Date.now() / 1000);
      while ((seconds[seconds.length - 1] ?? 0) < last + 1) await sleep(100);
      reading = false;
      const health = await probe.stop();
      clearInterval(sampler);
      await reader.catch(() => undefined);
      // The attackers are gone: give the agent a few seconds to release what they held.
      const settling = Date.now();
      let rssEnd = agent.rssBytes();
      const trace: string[] = [];
      // The reclaimer looks every 2 s and runs at most every 10 s: 15 s covers one that ran
      // during the attack just before it ended.
      for (let i = 0; i < 30 && rssEnd > rssStart + RSS_RETURN; i++) {
        await sleep(500);
        rssEnd = agent.rssBytes();
        if (i % 4 === 0) trace.push((rssEnd / MiB).toFixed(0));
      }
      const metrics = parsePrometheusText(await (await fetch(`${agent.url}metrics`)).text());
      const counter = (name: string): number => metrics.get(name)?.samples[0]?.value ?? NaN;
      t.diagnostic(
        `RSS settled in ${Date.now() - settling} ms: ${trace.join(' ')}; ` +
          `${counter('blkheat_memory_reclaims_total')} reclaims gave back ${(counter('blkheat_memory_reclaimed_bytes_total') / MiB).toFixed(0)} MiB`,
      );
      t.diagnostic(
        `${what}: /healthz ${health.answered} answers, slowest ${health.maxMs.toFixed(0)} ms (${health.worst.join(', ')}), ` +
          `${health.slow} over ${HEALTHZ_LIMIT_MS} ms, ${health.failed} failed, ${health.not200} not 200; ` +
          `live seconds ${seconds[0]}..${seconds[seconds.length - 1]} (${seconds.length}); ` +
          `RSS ${(rssStart / MiB).toFixed(0)} -> max ${(rssMax / MiB).toFixed(0)} -> ${(rssEnd / MiB).toFixed(0)} MiB`,
      );
      assert.equal(health.failed, 0, `${what}: /healthz did not answer ${health.failed} times`);
      assert.equal(health.slow, 0, `${what}: /healthz slower than ${HEALTHZ_LIMIT_MS} ms ${health.slow} times: ${health.worst.join(', ')}`);
      assert.equal(health.not200, 0, `${what}: /healthz said degraded ${health.not200} times`);
      assert.equal(gapOrDuplicate(seconds), undefined, `${what}: the watching client missed live seconds: ${seconds.join(',')}`);
      assert.ok(rssMax < RSS_LIMIT, `${what}: RSS reached ${(rssMax / MiB).toFixed(0)} MiB`);
      assert.ok(
        rssEnd <= rssStart + RSS_RETURN,
        `${what}: RSS ${(rssEnd / MiB).toFixed(0)} MiB did not come back within ${RSS_RETURN / MiB} MiB of its start (${(rssStart / MiB).toFixed(0)})`,
      );
    },
  };
}

test(
  'a flood of invalid messages is closed with 1008, connection after connection; the agent keeps its timing',
  { timeout: 120_000 },
  async (t) => {
    if (!needsRootAndFio(t)) return;
    const agent = await agentWithHistory(t);
    const w = await watch(t, agent);
    const until = Date.now() + 10_000;
    let connections = 0;
    let sent = 0;
    const codes = new Map<number, number>();
    while (Date.now() < until) {
      const c = await WsTestClient.connect(agent.streamUrl);
      t.after(() => c.destroy());
      connections++;
      // Junk as fast as the socket takes it, without reading the answers, until the agent
      // closes it (however late in the 10 s this connection came: it must be closed too, in 5 s).
      const closeBy = Date.now() + 5000;
      while (!c.isClosed && Date.now() < closeBy) {
        for (let i = 0; i < 500; i++) c.sendText('junk');
        sent += 500;
        await new Promise((r) => setImmediate(r));
        c.drain();
      }
      const close = await Promise.race([c.closed, sleep(Math.max(0, closeBy - Date.now())).then(() => undefined)]);
      assert.ok(close, 'a flooding client was not closed within 5 s');
      codes.set(close.code, (codes.get(close.code) ?? 0) + 1);
      c.destroy();
    }
    t.diagnostic(`${connections} flooding connections, ${sent} junk messages sent; closed with ${JSON.stringify([...codes])}`);
    assert.ok(connections >= 2, 'the flood never got closed');
    assert.deepEqual([...codes.keys()], [1008], 'every flooding connection is closed with 1008');
    // The agent says so, but a flood cannot flood its log: at most one such line a second.
    const floodLines = agent
      .stderr()
      .split('\n')
      .filter((l) => l.includes('messages per second')).length;
    t.diagnostic(`${floodLines} log lines about the flood`);
    assert.ok(floodLines >= 1 && floodLines <= 12, `${floodLines} log lines for ${connections} flooding connections in 10 s`);
    await w.check('junk flood');
  },
);

test(
  '50 connections churning subscribes with backfills up to 3,000 s back, 15 a second each: budgeted, never a freeze',
  { timeout: 120_000 },
  async (t) => {
    if (!needsRootAndFio(t)) return;
    const agent = await agentWithHistory(t);
    const w = await watch(t, agent);
    const clients = await Promise.all(Array.from({ length: 50 }, () => WsTestClient.connect(agent.streamUrl)));
    for (const c of clients) t.after(() => c.destroy());
    const now = Math.floor(Date.now() / 1000);
    const until = Date.now() + 20_000;
    let subscribes = 0;
    let backfillBytes = 0;
    let k = 0;
    while (Date.now() < until) {
      const tick = Date.now();
      for (const c of clients) {
        c.sendJson({ t: 'subscribe', backfillFrom: now - 3000 + ((k * 37) % 2900) });
        subscribes++;
        k++;
        for (const m of c.drain()) backfillBytes += m.data.length;
      }
      await sleep(Math.max(0, 1000 / 15 - (Date.now() - tick)));
    }
    const closedEarly = clients.filter((c) => c.isClosed).length;
    for (const c of clients) c.destroy();
    t.diagnostic(
      `${subscribes} subscribes; ${(backfillBytes / MiB).toFixed(0)} MiB of answers read; ${closedEarly} clients closed by the agent`,
    );
    assert.equal(closedEarly, 0, 'clients within the documented rate were closed');
    await w.check('backfill churn');
  },
);

test(
  '100 connections asking for a snapshot and never reading: memory bounded, and released when they go',
  { timeout: 120_000 },
  async (t) => {
    if (!needsRootAndFio(t)) return;
    const agent = await agentWithHistory(t);
    const w = await watch(t, agent);
    const now = Math.floor(Date.now() / 1000);
    const host = new URL(agent.url).host;
    const sockets: Socket[] = [];
    t.after(() => sockets.forEach((s) => s.destroy()));
    for (let i = 0; i < 100; i++) {
      const s = connect({ host: '127.0.0.1', port: agent.port });
      s.on('error', () => undefined);
      s.write(`GET /api/v1/snapshot?from=${now - 600}&to=${now - 60} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      s.pause();
      sockets.push(s);
    }
    await sleep(12_000);
    // What one reader gets meanwhile: a whole snapshot, still valid.
    const res = await fetch(`${agent.url}api/v1/snapshot?from=${now - 600}&to=${now - 60}`);
    const body = await res.text();
    assert.equal(res.status, 200, body.slice(0, 200));
    const snap = JSON.parse(body) as { frames: unknown[]; range: { from: number; to: number } };
    t.diagnostic(`a reading client's snapshot: ${(body.length / MiB).toFixed(1)} MiB, ${snap.frames.length} frames`);
    assert.ok(snap.frames.length > 500, `a snapshot of 540 s of history has ${snap.frames.length} frames`);
    for (const s of sockets) s.destroy();
    await w.check('100 non-reading snapshot clients');
  },
);

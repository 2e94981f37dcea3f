/**
 * bench/agent: what the agent costs, measured on the real kernel with the real agent binary.
 *
 *   node --import tsx bench/agent.ts [--seconds 30] [--skip-steady] [--skip-history]
 *
 * Prints:
 *  1. agent CPU (% of one core) while fio does 4k random reads on a loop device over /dev/shm
 *     (budget <= 2 % at >= 300k IOPS), with the IOPS fio reached;
 *  2. wire bytes/s per client per disk at that steady state (budget <= 8 KB/s), and what
 *     permessage-deflate or a binary encoding would give (and cost);
 *  3. frame lag: end of the second -> its frame received on the client's socket, p50/p99/max;
 *  4. agent RSS during the run, and with 24 h of (synthetic) history for 8 disks;
 *  5. /metrics at 8 busy disks: bytes per scrape and series, classic text vs native histograms
 *     (protobuf), at schema 2 and schema 3.
 * Needs root (BPF, loop devices), fio, and a build (node scripts/build.mjs).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLoopDevice, startFio, startAgentProcess, WsTestClient, type AgentProcess, type WsMessage } from '@blkheat/testkit';
import type { Frame, ServerMessage } from '@blkheat/shared-types';
import { binaryFigures, deflateFigures } from './agent/encodings.js';
import { benchArgs, usageError } from './cli.js';
import { writeSyntheticHistory } from './agent/history.js';
import { metricsFigures } from './agent/metrics.js';

const USAGE = `usage: node --import tsx bench/agent.ts [options]   (as root; build first)

What the agent costs on the real kernel with the real agent binary: CPU and wire bytes at a
steady fio load, frame lag, RSS with 24 h of history, /metrics size (see the file's header).

  --seconds S       seconds of the steady run, 5 or more (default 30)
  --skip-steady     leave the steady run (CPU, wire bytes, frame lag) out
  --skip-history    leave the RSS with 24 h of history out
  --skip-metrics    leave the /metrics sizes out
  -h, --help        show this help`;

const values = benchArgs('bench/agent', USAGE, {
  seconds: { type: 'string', default: '30' },
  'skip-steady': { type: 'boolean', default: false },
  'skip-history': { type: 'boolean', default: false },
  'skip-metrics': { type: 'boolean', default: false },
});
const SECONDS = Number(values.seconds);
if (!Number.isInteger(SECONDS) || SECONDS < 5)
  usageError('bench/agent', USAGE, `--seconds takes a whole number of seconds, 5 or more, not '${values.seconds}'`);
const MiB = 1024 * 1024;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}

const cleanups: (() => void | Promise<void>)[] = [];
const ctx = { after: (fn: () => void | Promise<void>) => void cleanups.push(fn) };

async function cleanup(): Promise<void> {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {
      // best effort
    }
  }
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startAgent(dataDir: string, args: string[] = []): Promise<AgentProcess> {
  const agent = await startAgentProcess({ dataDir, args });
  ctx.after(async () => {
    await agent.stop('SIGTERM', 15_000);
  });
  return agent;
}

async function fio(device: string, seconds: number): Promise<{ iops: number }> {
  const args = [
    '--name=bench',
    `--filename=${device}`,
    '--rw=randread',
    '--bs=4k',
    '--direct=1',
    '--ioengine=io_uring',
    '--iodepth=64',
    '--iodepth_batch_submit=16',
    '--numjobs=2',
    '--time_based',
    `--runtime=${seconds}`,
    '--group_reporting',
    '--output-format=json',
  ];
  const child = spawn('fio', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  ctx.after(() => void child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`fio exited with ${code}`);
  const json = JSON.parse(out.slice(out.indexOf('{'))) as { jobs: { read: { iops: number } }[] };
  return { iops: json.jobs[0]?.read.iops ?? 0 };
}

async function steadyState(): Promise<void> {
  const loop = createLoopDevice({ sizeMiB: 1024, t: ctx });
  const agent = await startAgent(tempDir('blkheat-bench-'));
  const client = await WsTestClient.connect(agent.streamUrl);
  ctx.after(() => client.destroy());
  await client.next(); // hello
  client.sendJson({ t: 'subscribe' });
  await client.next(5000);
  await new Promise((r) => setTimeout(r, 2000));
  client.drain();

  const cpu0 = agent.cpuSeconds();
  const wire0 = client.wireBytesReceived;
  const t0 = performance.now();
  let maxRss = agent.rssBytes();
  const sampler = setInterval(() => (maxRss = Math.max(maxRss, agent.rssBytes())), 1000);
  const { iops } = await fio(loop.path, SECONDS);
  clearInterval(sampler);
  const wall = (performance.now() - t0) / 1000;
  const cpu = agent.cpuSeconds() - cpu0;
  const wire = client.wireBytesReceived - wire0;

  const msgs: WsMessage[] = client.drain();
  const frames: { frame: Frame; msg: WsMessage }[] = [];
  for (const m of msgs) {
    const v = m.json<ServerMessage>();
    if (v.t === 'frame') frames.push({ frame: v.frame, msg: m });
  }
  // Steady state: the seconds wholly inside the fio run.
  const busy = frames.filter((f) => f.frame.disks.some((d) => d.dev === loop.dev)).slice(1, -1);
  const busySeconds = busy.length;
  const frameBytes = busy.reduce((n, f) => n + f.msg.data.length, 0);
  // Bytes of each disk's entry in the frames, per second: the per-disk cost on the wire.
  const perDisk = new Map<string, number>();
  for (const f of busy) for (const d of f.frame.disks) perDisk.set(d.dev, (perDisk.get(d.dev) ?? 0) + JSON.stringify(d).length + 1);
  const diskTotal = [...perDisk.values()].reduce((a, b) => a + b, 0);
  const lags = frames.map((f) => f.msg.wallMs / 1000 - (f.frame.ts + f.frame.step)).sort((a, b) => a - b);

  console.log(`\n== steady state: fio 4k randread on ${loop.name} (loop over /dev/shm), ${fmt(wall)} s ==`);
  console.log(
    `fio IOPS                     ${Math.round(iops).toLocaleString('en')}${iops < 300_000 ? '  (below 300k on this run: 2 shared cores, +-30 % run to run)' : ''}`,
  );
  console.log(`agent CPU                    ${fmt((cpu / wall) * 100, 2)} % of one core   (budget <= 2 %)`);
  console.log(`agent CPU per 100k IOPS      ${fmt(((cpu / wall) * 100) / (iops / 1e5), 2)} %`);
  console.log(`agent RSS                    ${fmt(maxRss / MiB)} MiB (max, 1 client)`);
  console.log(`wire, all messages           ${fmt(wire / wall / 1024, 2)} KB/s per client (incl. WebSocket headers)`);
  const names = new Map(
    ((await (await fetch(`${agent.url}api/v1/disks`)).json()) as { disks: { dev: string; name: string }[] }).disks.map((d) => [
      d.dev,
      d.name,
    ]),
  );
  const perDiskText = [...perDisk.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([dev, b]) => `${names.get(dev) ?? dev} ${fmt(b / busySeconds / 1024, 2)}`)
    .join(', ');
  console.log(`wire per disk (KB/s/client)  ${perDiskText}   (budget <= 8 KB/s per disk)`);
  console.log(`wire per frame, envelope     ${fmt((frameBytes - diskTotal) / busySeconds / 1024, 2)} KB/s (message wrapper, ts, step)`);
  console.log(
    `frame lag                    p50 ${fmt(percentile(lags, 50) * 1000, 0)} ms, p99 ${fmt(percentile(lags, 99) * 1000, 0)} ms, max ${fmt((lags[lags.length - 1] ?? NaN) * 1000, 0)} ms` +
      ` (end of second -> frame received; ${lags.length} frames)`,
  );

  // What other encodings would give on exactly these frames.
  const buffers = busy.map((f) => f.msg.data);
  const jsonBytes = buffers.reduce((n, b) => n + b.length + 4, 0);
  const t1 = process.cpuUsage();
  for (const f of busy) JSON.stringify({ t: 'frame', frame: f.frame });
  const jsonCpu = process.cpuUsage(t1);
  const deflate = await deflateFigures(buffers);
  const binary = binaryFigures(busy.map((f) => f.frame));
  console.log(`\n== wire encodings on the same ${busySeconds} busy frames (per client) ==`);
  for (const e of [{ name: 'JSON text (sent)', bytes: jsonBytes, cpuMs: (jsonCpu.user + jsonCpu.system) / 1000 }, deflate, binary]) {
    console.log(
      `${e.name.padEnd(28)} ${fmt(e.bytes / busySeconds / 1024, 2).padStart(7)} KB/s   encode ${fmt((e.cpuMs * 1000) / busySeconds, 0).padStart(5)} us/frame`,
    );
  }
  console.log('(JSON is serialized once per distinct filter and shared by all clients; deflate runs per client.)');
}

async function historyFootprint(): Promise<void> {
  const dataDir = tempDir('blkheat-bench-history-');
  const made = writeSyntheticHistory(join(dataDir, 'history'), 24 * 3600, 8);
  // Written as root; the agent runs as nobody and only takes over what it created itself.
  execFileSync('chown', ['-R', 'nobody:', dataDir]);
  const agent = await startAgent(dataDir, ['--max-history-size', '1G']);
  await new Promise((r) => setTimeout(r, 2000));
  const rssOpen = agent.rssBytes();
  const now = Math.floor(Date.now() / 1000);
  const t0 = performance.now();
  const day = await (await fetch(`${agent.url}api/v1/range?from=${now - 86400}&to=${now}`)).text();
  const tDay = performance.now() - t0;
  const t1 = performance.now();
  const hour = await (await fetch(`${agent.url}api/v1/range?from=${now - 3600}&to=${now}&disk=8:0`)).text();
  const tHour = performance.now() - t1;
  await new Promise((r) => setTimeout(r, 1000));
  const rssAfter = agent.rssBytes();
  console.log(`\n== 24 h of synthetic history, 8 disks ==`);
  console.log(`history on disk              ${fmt(made.bytes / MiB)} MiB (written in ${fmt(made.ms / 1000)} s)`);
  console.log(`agent RSS after open         ${fmt(rssOpen / MiB)} MiB`);
  console.log(`range 24 h, all disks        ${fmt(day.length / MiB, 2)} MiB answer in ${fmt(tDay, 0)} ms`);
  console.log(`range 1 h at 1 s, one disk   ${fmt(hour.length / MiB, 2)} MiB answer in ${fmt(tHour, 0)} ms`);
  console.log(`agent RSS after the queries  ${fmt(rssAfter / MiB)} MiB`);
}

/** /metrics of an agent watching 8 loop devices, each doing reads, writes and fsyncs. */
async function metricsSize(): Promise<void> {
  const loops = Array.from({ length: 8 }, () => createLoopDevice({ sizeMiB: 64, t: ctx }));
  console.log(`\n== /metrics at 8 disks (mixed I/O: reads, writes and fsyncs) ==`);
  for (const scale of ['2', '3']) {
    const agent = await startAgent(tempDir('blkheat-bench-metrics-'), ['--schema', scale, '--samples-budget', '0']);
    await Promise.all(loops.map((l) => startFio({ filename: l.path, rw: 'randrw', runtimeS: 8, rateIops: 200, fsync: 4 }, ctx).done));
    const m = await metricsFigures(agent.url);
    console.log(
      `schema ${scale}  classic text: ${fmt(m.textBytes / 1024)} KiB, ${m.textSeries} series (${m.textHistogramSeries} of them latency buckets)` +
        `   native protobuf: ${fmt(m.protoBytes / 1024)} KiB, ${m.protoSeries} series (${m.protoHistogramSeries} native histograms)`,
    );
    await agent.stop('SIGTERM', 15_000);
  }
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench/agent needs root (BPF, loop devices)');
  if (!values['skip-steady']) await steadyState();
  await cleanup();
  if (!values['skip-history']) await historyFootprint();
  await cleanup();
  if (!values['skip-metrics']) await metricsSize();
}

main()
  .catch((e: unknown) => {
    console.error(`bench/agent: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  })
  .finally(() => cleanup());

// Finer latency resolution: `serve --schema 3` times I/O at 8 buckets per power of two, and
// everything downstream of the kernel (hello, frames, ranges, /metrics, snapshots) carries and
// follows that schema. A data directory keeps history of one schema: starting on another schema's
// history is refused with a clear message, and the history is left as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  addSparseInto,
  classOp,
  denseHist,
  denseTotal,
  FINE_BUCKET_SCHEMA,
  lowerBoundSeconds,
  mergeFrames,
  overflowIndex,
  quantileSeconds,
  upperBoundSeconds,
  type Frame,
} from '@blkheat/shared-types';
import { AGENT_CLI, checkHistogram, createDelayedLoopDevice, fuseUnavailable, parsePrometheusText, runDd } from '@blkheat/testkit';
import { completionWitness } from './lib/collect.js';
import { needsRootAndFio, readFrames, startRealAgent, subscriber, tempDataDir, type TestContextLike } from './serve-fixtures.js';

const fuseMissing = fuseUnavailable();
const DELAY_MS = 3;
const READS = 200;

test(
  '--schema 3: a 3 ms disk lands in 9%-wide buckets, and hello, frames, ranges, /metrics and snapshots all carry schema 3',
  { timeout: 180_000, skip: fuseMissing ? `SKIPPED LOUDLY: ${fuseMissing}` : false },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const schema = FINE_BUCKET_SCHEMA;
    const disk = await createDelayedLoopDevice({ delayMs: DELAY_MS, sizeMiB: 32, t });
    const agent = await startRealAgent(t, tempDataDir(t), ['--schema', '3', '--disk', disk.name]);
    const { client, hello } = await subscriber(t, agent);
    assert.deepEqual(hello.schema, schema, 'hello names schema 3');
    await readFrames(client, 1);

    const witness = completionWitness(t, disk);
    let ddFinished = false;
    witness.start();
    const dd = runDd({ if: disk.path, of: '/dev/null', bs: '4k', count: READS, iflag: 'direct' }).finally(() => (ddFinished = true));
    const frames: Frame[] = [];
    while (!ddFinished) frames.push(...(await readFrames(client, 1)).frames);
    await dd;
    const seen = witness.stop();
    frames.push(...(await readFrames(client, 2)).frames);

    // The reads, from the live frames, at schema 3.
    const dense = denseHist(schema);
    for (const f of frames)
      for (const d of f.disks) if (d.dev === disk.dev) for (const c of d.cls) if (classOp(c.c) === 'Read') addSparseInto(dense, c.d);
    const total = denseTotal(dense);
    // dd's reads, less those this kernel showed to no BPF program (ftrace's witness).
    assert.ok(total >= READS - seen.hiddenFromBpf, `${total} reads recorded, dd issued ${READS} (${seen.text})`);
    // No read can be faster than the injected delay; the typical read takes the delay plus a
    // little (FUSE and loop overhead, more on a busy machine: the tail is not the schema's business).
    const lo = DELAY_MS / 1000;
    const used: number[] = [];
    let faster = 0;
    dense.forEach((count, b) => {
      if (count === 0) return;
      used.push(b);
      if (upperBoundSeconds(b, schema) <= lo) faster += count;
    });
    const p50 = quantileSeconds(dense, 0.5, schema) ?? NaN;
    t.diagnostic(`${total} reads, p50 ${(p50 * 1000).toFixed(3)} ms, schema-3 buckets used ${used.join(',')}`);
    assert.equal(faster, 0, `reads in buckets below the ${DELAY_MS} ms delay`);
    assert.ok(p50 >= lo && p50 < 1.25 * lo, `p50 ${p50 * 1000} ms within [${DELAY_MS}, ${1.25 * DELAY_MS}) ms`);
    const mode = dense.indexOf(Math.max(...dense));
    const width = upperBoundSeconds(mode, schema) / lowerBoundSeconds(mode, schema);
    assert.ok(Math.abs(width - 2 ** (1 / 8)) < 1e-9, `the busiest bucket is 2^(1/8) wide (${width})`);

    // History answers a range at schema 3 (a 10 s step merges at schema 3 too).
    const from = frames[0]?.ts as number;
    const to = (frames[frames.length - 1]?.ts as number) + 1;
    const range = (await (await fetch(`${agent.url}api/v1/range?from=${from}&to=${to}&step=1`)).json()) as { frames: Frame[] };
    const fromHistory = mergeFrames(range.frames, from, to - from, schema).disks.find((d) => d.dev === disk.dev);
    const live = mergeFrames(frames, from, to - from, schema).disks.find((d) => d.dev === disk.dev);
    assert.deepEqual(fromHistory, live, 'history holds the live seconds bucket for bucket');

    // /metrics: le bounds 2^(1/8) apart, the reads in the same buckets.
    const families = parsePrometheusText(await (await fetch(`${agent.url}metrics`)).text());
    const family = families.get('blkheat_device_latency_seconds');
    assert.ok(family, 'device latency exported');
    const exported = [...checkHistogram(family).values()].filter(
      (s) => s.labels.dev === disk.dev && classOp(s.labels.class ?? '') === 'Read',
    );
    assert.ok(exported.length > 0, "the disk's reads are exported");
    for (const s of exported) {
      assert.equal(s.buckets.length, overflowIndex(schema) + 1, 'one le per schema-3 bucket, then +Inf');
      for (let i = 0; i < overflowIndex(schema); i++) assert.equal(s.buckets[i]?.[0], upperBoundSeconds(i, schema), `le of bucket ${i}`);
    }

    // A snapshot says which schema its histograms are in.
    const snap = (await (await fetch(`${agent.url}api/v1/snapshot?from=${from}&to=${to}`)).json()) as { schema: unknown; frames: Frame[] };
    assert.deepEqual(snap.schema, schema, 'the snapshot names schema 3');
    assert.ok(snap.frames.length > 0, 'the snapshot has the frames');
  },
);

test(
  'a data directory of schema-2 history: --schema 3 refuses to start, naming the fix, and leaves the history as it was',
  { timeout: 120_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const dataDir = tempDataDir(t);
    const first = await startRealAgent(t, dataDir);
    const { client } = await subscriber(t, first);
    await readFrames(client, 2);
    await first.stop();
    const historyDir = join(dataDir, 'history');
    const listing = (): string[] =>
      readdirSync(historyDir)
        .sort()
        .map((n) => `${n}:${statSync(join(historyDir, n)).size}`);
    const before = listing();
    assert.ok(before.length > 0, 'schema-2 segments were written');

    const r = spawnSync(process.execPath, [AGENT_CLI, 'serve', '--data-dir', dataDir, '--port', '0', '--schema', '3'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 1, `exit status (stderr: ${r.stderr})`);
    assert.match(
      r.stderr,
      /recorded with bucket schema 2 .*this agent runs schema 3\. Start it with --schema 2, or give it another --data-dir/,
    );
    assert.deepEqual(listing(), before, 'no history file removed, replaced or grown');
    assert.equal(spawnSync('bpftool', ['prog', 'show']).stdout.toString().includes('bh_'), false, 'no probe left loaded');
  },
);

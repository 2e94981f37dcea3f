// /metrics of the real agent parses with a strict Prometheus text-format parser, and its bucket
// counts equal the histograms of the same window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkHistogram, parsePrometheusText } from '@blkheat/testkit';
import { bucketCount, mergeFrames, overflowIndex, upperBoundSeconds, type Frame } from '@blkheat/shared-types';
import { agentOnLoop, needsRootAndFio, readFrames, subscriber, type TestContextLike } from './serve-fixtures.js';

test(
  '/metrics parses strictly; bucket counts equal the histograms of the window it covers',
  { timeout: 120_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const { loop, agent } = await agentOnLoop(t, 64, { runtimeS: 20, rateIops: 800, rw: 'randrw', fsync: 16 });
    const { client } = await subscriber(t, agent);
    await readFrames(client, 6);

    const text = await (await fetch(`${agent.url}metrics`)).text();
    const families = parsePrometheusText(text);
    const from = families.get('blkheat_histogram_window_start_seconds')?.samples[0]?.value;
    const to = families.get('blkheat_histogram_window_end_seconds')?.samples[0]?.value;
    assert.ok(from !== undefined && to !== undefined && to > from, `window [${from}, ${to})`);

    // The same window from history, summed bucket by bucket.
    const res = (await (await fetch(`${agent.url}api/v1/range?from=${from}&to=${to}&step=1`)).json()) as {
      from: number;
      to: number;
      frames: Frame[];
    };
    assert.equal(res.frames.length, to - from, 'every second of the window is in history');
    const total = mergeFrames(res.frames, from, to - from);
    const loopDisk = total.disks.find((d) => d.dev === loop.dev);
    assert.ok(loopDisk && loopDisk.cls.length >= 2, 'the loop device is in the window with several classes');

    const kinds = new Map(
      ((await (await fetch(`${agent.url}api/v1/disks`)).json()) as { disks: { dev: string; kind: string }[] }).disks.map((d) => [
        d.dev,
        d.kind,
      ]),
    );
    let series = 0;
    for (const [metric, kind] of [
      ['blkheat_device_latency_seconds', 'd'],
      ['blkheat_queue_latency_seconds', 'q'],
    ] as const) {
      const fam = families.get(metric);
      assert.equal(fam?.type, 'histogram', metric);
      const exported = checkHistogram(fam);
      // Bio-based disks have no queue latency, so no queue histograms.
      const disks = total.disks.filter((d) => kind === 'd' || kinds.get(d.dev) !== 'bio');
      for (const d of disks) {
        for (const c of d.cls) {
          const s = [...exported.values()].find((x) => x.labels.dev === d.dev && x.labels.class === c.c);
          assert.ok(s, `${metric}{dev="${d.dev}",class="${c.c}"} exported`);
          const dense = new Array<number>(bucketCount()).fill(0);
          const h = c[kind];
          for (let k = 0; k < h.length; k += 2) dense[h[k] as number] = h[k + 1] as number;
          let cum = 0;
          for (let i = 0; i < overflowIndex(); i++) {
            cum += dense[i] as number;
            const b: [number, number] | undefined = s.buckets[i];
            assert.ok(b, `bucket ${i}`);
            assert.equal(b[0], upperBoundSeconds(i));
            assert.equal(b[1], cum, `${metric}{dev="${d.dev}",class="${c.c}",le="${b[0]}"}`);
          }
          cum += dense[overflowIndex()] as number;
          assert.equal(s.count, cum, `${metric}_count{dev="${d.dev}",class="${c.c}"}`);
          series++;
        }
      }
      // Nothing exported that the window does not have.
      assert.equal(
        exported.size,
        disks.reduce((n, d) => n + d.cls.length, 0),
        `${metric}: series count`,
      );
    }
    assert.ok(series > 0);
    for (const name of [
      'blkheat_bpf_ns_per_io',
      'blkheat_samples_dropped_total',
      'blkheat_clients',
      'blkheat_frame_lag_seconds',
      'blkheat_history_bytes',
      'process_resident_memory_bytes',
    ]) {
      assert.ok(families.has(name), `${name} exported`);
    }
    assert.equal(families.get('blkheat_clients')?.samples[0]?.value, 1);
  },
);

// A real Prometheus (Debian's 2.42, native histograms on) scrapes three agents standing in for
// three hosts (each its own --instance and --disk, one disk FUSE-delayed at 5 ms) every second over
// the protobuf format, and PromQL over the native histograms agrees with each agent's own
// histograms of the same window: p99 within one bucket, counts within 1 %.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addSparseInto, bucketOfSeconds, denseHist, denseTotal, quantileSeconds, type Frame } from '@blkheat/shared-types';
import { fuseUnavailable, prometheusUnavailable, SLOW_HOST_DELAY_MS, sleep, startFio, startScrapedHosts } from '@blkheat/testkit';
import { needsRootAndFio, startRealAgent, tempDataDir, type TestContextLike } from './serve-fixtures.js';

const WINDOW_S = 30;
const missing = prometheusUnavailable() ?? fuseUnavailable();

test(
  'three agents scraped by a real Prometheus: histogram_quantile and histogram_count agree with the agents',
  { timeout: 240_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const { hosts, agents, prometheus: prom } = await startScrapedHosts(t, (args) => startRealAgent(t, tempDataDir(t), args));
    const [plainA, plainB, slow] = hosts;

    const runS = WINDOW_S + 20;
    startFio({ filename: plainA.path, rw: 'randread', runtimeS: runS, rateIops: 400 }, t);
    startFio({ filename: plainB.path, rw: 'randrw', runtimeS: runS, rateIops: 300 }, t);
    startFio({ filename: slow.path, rw: 'randread', runtimeS: runS, rateIops: 120, iodepth: 4, ioengine: 'libaio' }, t);
    await sleep((WINDOW_S + 8) * 1000);

    // Evaluate at a second every target has been scraped at or after.
    const scraped = await prom.lastScrapes();
    assert.ok(scraped !== undefined, 'every agent is up and scraped');
    const at = Math.floor(scraped);
    const quantiles = await prom.query(
      `histogram_quantile(0.99, sum by (instance, disk) (rate(blkheat_device_latency_seconds[${WINDOW_S}s])))`,
      at,
    );
    const counts = await prom.query(
      `sum by (instance, disk) (histogram_count(increase(blkheat_device_latency_seconds[${WINDOW_S}s])))`,
      at,
    );

    for (const [i, h] of hosts.entries()) {
      const agent = agents[i];
      assert.ok(agent);
      const range = (await (await fetch(`${agent.url}api/v1/range?from=${at - WINDOW_S}&to=${at}&step=1`)).json()) as { frames: Frame[] };
      const dense = denseHist();
      for (const f of range.frames) for (const d of f.disks) for (const c of d.cls) addSparseInto(dense, c.d);
      const agentCount = denseTotal(dense);
      const agentP99 = quantileSeconds(dense, 0.99) ?? NaN;
      const promP99 = quantiles.find((r) => r.metric.instance === h.instance && r.metric.disk === h.disk)?.value ?? NaN;
      const promCount = counts.find((r) => r.metric.instance === h.instance && r.metric.disk === h.disk)?.value ?? NaN;
      t.diagnostic(
        `${h.instance} ${h.disk}: p99 agent ${(agentP99 * 1e3).toFixed(3)} ms, Prometheus ${(promP99 * 1e3).toFixed(3)} ms; ` +
          `count agent ${agentCount}, Prometheus ${promCount.toFixed(1)}`,
      );
      assert.ok(agentCount > 1000, `${h.instance}: ${agentCount} I/Os in the window`);
      assert.ok(
        Math.abs(bucketOfSeconds(promP99) - bucketOfSeconds(agentP99)) <= 1,
        `${h.instance}: p99 Prometheus ${promP99} s vs agent ${agentP99} s: more than one bucket apart`,
      );
      assert.ok(
        Math.abs(promCount - agentCount) <= 0.01 * agentCount,
        `${h.instance}: count Prometheus ${promCount} vs agent ${agentCount}`,
      );
    }
    const slowP99 = quantiles.find((r) => r.metric.instance === 'host-c')?.value ?? NaN;
    assert.ok(
      slowP99 >= SLOW_HOST_DELAY_MS / 1e3,
      `the ${SLOW_HOST_DELAY_MS} ms disk's p99 (${slowP99} s) is at least ${SLOW_HOST_DELAY_MS} ms`,
    );
  },
);

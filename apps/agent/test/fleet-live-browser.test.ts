// The fleet view's live edge in chromium at a real 15 s scrape interval (issue 30, "Any scrape
// interval, live"), no kernel: simulated hosts (fleet/simulated-hosts.ts, each keeping the seconds
// it served), two scraped every 15 s and one every 5 s by a real Prometheus (Debian's), the fleet
// server asking it, the page following live. The page's columns are 15 s wide (the coarsest
// interval), its live edge advances one column per 15 s scrape (watched over 3 scrapes), and each
// column of every host × disk row holds, bucket for bucket, what that host counted between the
// scrapes Prometheus stored whose differences start in it. Then the page shows queue latency: its
// ranges, asked for device latency alone until then (protocol 7), are asked again with it, and the
// same columns hold the hosts' queue latency, bucket for bucket. Needs apps/web/dist, chromium and
// prometheus.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BUCKET_SCHEMA, type DiskInfo } from '@blkheat/shared-types';
import {
  CHROMIUM,
  denseDevice,
  densePhase,
  expectedColumn,
  hook,
  idle,
  launch,
  prometheusUnavailable,
  screenshot,
  scrapesOf,
  sortedFigures,
  startFleetPrometheus,
} from '@blkheat/testkit';
import { startFleet } from '../src/fleet/service.js';
import { SIMULATED_DISKS, startSimulatedFleet, type SimulatedFleet } from '../src/fleet/simulated-hosts.js';
import { eventually, WEB_ROOT } from './lib/fleet-rig.js';

const missing = prometheusUnavailable();
const STEP = 15;
const FAST_S = 5;
/** Live edge advances watched (each one scrape of the 15 s hosts). */
const ADVANCES = 3;

test(
  'fleet view in chromium at a 15 s scrape: the live edge advances a column per scrape, each column the hosts’ exact counts',
  { timeout: 300_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t: TestContext) => {
    if (!existsSync(CHROMIUM)) return void t.skip(`no chromium at ${CHROMIUM}`);
    if (!existsSync(join(WEB_ROOT, 'index.html'))) return void t.skip('apps/web is not built');
    const slow = await startSimulatedFleet({ hosts: 2, seed: 41, prefix: 'every15', keepFrames: true });
    t.after(() => slow.stop());
    const fast = await startSimulatedFleet({ hosts: 1, seed: 42, prefix: 'every5', keepFrames: true });
    t.after(() => fast.stop());
    const prom = await startFleetPrometheus({
      targets: slow.targets,
      t,
      scrapeIntervalS: STEP,
      moreJobs: [{ targets: fast.targets, scrapeIntervalS: FAST_S }],
    });
    const fleet = await startFleet(
      { prometheus: prom.url, host: '127.0.0.1', port: 0, token: undefined, allowOrigins: [], schema: BUCKET_SCHEMA, webRoot: WEB_ROOT },
      () => {},
    );
    t.after(() => fleet.stop());

    // Every host's 4 disks listed; the page is asked for all of them (it picks 6 by itself).
    const rows = 3 * SIMULATED_DISKS.length;
    const disks = await eventually('every host × disk listed', async () => {
      const list = ((await (await fetch(`${fleet.url}api/v1/disks`)).json()) as { disks: DiskInfo[] }).disks;
      return list.length === rows ? list : undefined;
    });
    const s = await launch({ colorScheme: 'light', height: 2400 });
    t.after(() => s.close());
    const page = s.page;
    // What the page receives after it shows queue latency (said when a column disagrees).
    const afterSwitch: string[] = [];
    let recording = false;
    page.on('websocket', (ws) =>
      ws.on('framereceived', (f) => {
        if (recording && afterSwitch.length < 2000)
          afterSwitch.push(typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8'));
      }),
    );
    const cameFor = (ts: number, dev: string): string =>
      afterSwitch
        .flatMap((text) => {
          const m = JSON.parse(text) as {
            t: string;
            id?: number;
            phases?: unknown;
            frames?: { ts: number; disks: { dev: string; cls: { c: string; n: number; q: number[] }[] }[] }[];
            frame?: { ts: number; disks: { dev: string; cls: { c: string; n: number; q: number[] }[] }[] };
          };
          const frames = m.frames ?? (m.frame ? [m.frame] : []);
          return frames
            .filter((f) => f.ts === ts)
            .map(
              (f) =>
                `${m.t}${m.id !== undefined ? ` #${m.id}` : ''}${m.phases ? ` phases ${JSON.stringify(m.phases)}` : ''}: ${JSON.stringify(f.disks.find((d) => d.dev === dev)?.cls.map((c) => [c.c, c.n, c.q.length]) ?? 'no such disk')}`,
            );
        })
        .join('; ') || 'nothing';
    await page.goto(`${fleet.url}?disks=${disks.map((d) => d.dev).join(',')}`);
    const h = hook(page);
    // The first live column in the page, its step the coarsest interval. Until the 15 s hosts'
    // second scrape the fleet's coarsest interval is the fast host's 5 s: the page's newest frame
    // can then be a 5 s column (1796056805 in a failed CI run) that stays the newest after the
    // step becomes 15, until the first 15 s column arrives. So the start is a frame on the 15 s grid.
    await page.waitForFunction(
      ({ n, step }) => {
        const st = (
          globalThis as unknown as { __blkheat?: { state(): { shownDisks: readonly string[]; lastFrameTs?: number; step?: number } } }
        ).__blkheat?.state();
        return (
          st !== undefined && st.shownDisks.length === n && st.lastFrameTs !== undefined && st.lastFrameTs % step === 0 && st.step === step
        );
      },
      { n: rows, step: STEP },
      { timeout: 150_000, polling: 200 },
    );
    await idle(page);

    // The live edge, watched: each advance is one 15 s column, the view's end with it.
    const seen: { ts: number; wallMs: number }[] = [];
    let last = (await h.state()).lastFrameTs as number;
    while (seen.length < ADVANCES) {
      await page.waitForFunction(
        (prev) =>
          ((globalThis as unknown as { __blkheat: { state(): { lastFrameTs?: number } } }).__blkheat.state().lastFrameTs ?? 0) > prev,
        last,
        { timeout: 3 * STEP * 1000, polling: 100 },
      );
      const wallMs = Date.now();
      const st = await h.state();
      const ts = st.lastFrameTs as number;
      assert.equal(ts, last + STEP, `the live edge advanced one ${STEP} s column (from ${last} to ${ts})`);
      assert.ok(st.following, 'still following live');
      assert.equal(st.step, STEP, 'the heat maps’ columns are the live step');
      assert.equal(st.view.to, ts + STEP, 'the view ends at the newest column');
      seen.push({ ts, wallMs });
      last = ts;
    }
    await idle(page);
    await screenshot(page, 'fleet-live-15s', 'web-browser');

    // Each watched column, every host × disk row, bucket for bucket.
    const hosts: { sim: SimulatedFleet; instance: string }[] = [
      ...slow.instances.map((instance) => ({ sim: slow, instance })),
      ...fast.instances.map((instance) => ({ sim: fast, instance })),
    ];
    const at = Date.now() / 1000;
    const latencies: number[] = [];
    let cells = 0;
    for (const { ts, wallMs } of seen) {
      let completedAt = -Infinity;
      for (const { sim, instance } of hosts) {
        const scrapes = await scrapesOf(prom.url, instance, at);
        const want = expectedColumn(sim.framesOf(instance), scrapes, ts, STEP, BUCKET_SCHEMA);
        assert.ok(want.ios > 0, `${instance} counted I/O in column ${ts}`);
        for (const disk of SIMULATED_DISKS) {
          const name = `${instance}/${disk.name}`;
          const dev = disks.find((d) => d.name === name)?.dev;
          assert.ok(dev, `${name} is listed`);
          const shown = await h.column(dev, ts);
          assert.ok(shown, `${name}'s column ${ts} is in the page`);
          assert.equal(shown.from, ts);
          assert.equal(shown.step, STEP);
          const cls = want.frame.disks.find((d) => d.dev === disk.dev)?.cls ?? [];
          assert.deepEqual(
            shown.counts,
            denseDevice(cls, BUCKET_SCHEMA),
            `${name}, column ${ts} (spans ${JSON.stringify(want.spans)}), bucket for bucket`,
          );
          cells++;
        }
        const done = scrapes.find((x) => x.end >= ts + STEP);
        assert.ok(done, `${instance} was scraped past column ${ts}`);
        completedAt = Math.max(completedAt, done.at);
      }
      latencies.push(wallMs / 1000 - completedAt);
    }
    t.diagnostic(`columns ${seen.map((x) => x.ts).join(', ')}: ${cells} host × disk cells equal the hosts' counts, bucket for bucket`);

    // Queue latency: the frames the page held without it are asked again with it, and the same
    // columns hold each host's queue latency.
    recording = true;
    await page.click('[data-testid=kind-queue]');
    const firstDev = disks[0]?.dev as string;
    await page.waitForFunction(
      ({ dev, ts }) => {
        const hooked = globalThis as unknown as { __blkheat: { state(): { kind: string }; column(d: string, t: number): unknown } };
        return hooked.__blkheat.state().kind === 'queue' && hooked.__blkheat.column(dev, ts) !== undefined;
      },
      { dev: firstDev, ts: (seen[0] as { ts: number }).ts },
      { timeout: 60_000, polling: 100 },
    );
    await idle(page);
    const switched = await h.state();
    const held = `columns watched ${seen.map((x) => x.ts).join(', ')}; the page holds ${JSON.stringify(switched.window)}, view ${JSON.stringify(switched.view)}, newest frame ${switched.lastFrameTs}`;
    const newest = (seen[seen.length - 1] as { ts: number }).ts;
    // The frames dropped, the live edge stays where they reached (the fleet's clock alone is a column back).
    assert.ok(switched.view.to >= newest + STEP, `after the switch the view still ends past the newest column (${held})`);
    let queueCells = 0;
    let queueIos = 0;
    for (const { ts } of seen) {
      for (const { sim, instance } of hosts) {
        const want = expectedColumn(sim.framesOf(instance), await scrapesOf(prom.url, instance, at), ts, STEP, BUCKET_SCHEMA);
        for (const disk of SIMULATED_DISKS) {
          const name = `${instance}/${disk.name}`;
          const dev = disks.find((d) => d.name === name)?.dev as string;
          const shown = await h.column(dev, ts);
          assert.ok(shown, `${name}'s column ${ts} is in the page after the switch (${held})`);
          const queue = densePhase(want.frame.disks.find((d) => d.dev === disk.dev)?.cls ?? [], BUCKET_SCHEMA, 'q');
          assert.deepEqual(
            shown.counts,
            queue,
            `${name}, column ${ts}: queue latency, bucket for bucket (the page was sent: ${cameFor(ts, dev)})`,
          );
          queueIos += queue.reduce((a, b) => a + b, 0);
          queueCells++;
        }
      }
    }
    assert.ok(queueIos > 0, 'the hosts had queue latency in those columns');
    t.diagnostic(`queue latency: ${queueCells} host × disk cells equal the hosts' counts (${queueIos} I/Os), bucket for bucket`);
    t.diagnostic(`from the scrape that completed a column to the page showing it: ${sortedFigures(latencies)} s`);
    t.diagnostic(
      `between advances: ${seen
        .slice(1)
        .map((x, i) => ((x.wallMs - (seen[i] as { wallMs: number }).wallMs) / 1000).toFixed(1))
        .join(', ')} s`,
    );
  },
);

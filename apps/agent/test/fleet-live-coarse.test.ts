// The fleet view's live edge at scrape intervals over 1 s (issue 30, "Any scrape interval, live"),
// no kernel: simulated hosts (fleet/simulated-hosts.ts: the agent's own /metrics code, and each
// keeps the seconds it served), two scraped every 3 s and one every 5 s (two jobs) by a real
// Prometheus (Debian's), and the fleet server asking it. The stream's step is the coarsest interval
// (5 s); its frames come one column per scrape of the 5 s host, and each column holds, bucket for
// bucket, what every host counted between the scrapes Prometheus stored whose differences start
// in it (dated by the hosts' window ends), and equals the range answer for it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type DiskInfo, type Frame, type HelloMessage } from '@blkheat/shared-types';
import { expectedColumn, prometheusUnavailable, scrapesOf, sortedFigures, startFleetPrometheus, WsTestClient } from '@blkheat/testkit';
import { startFleet } from '../src/fleet/service.js';
import { SIMULATED_DISKS, startSimulatedFleet, type SimulatedFleet } from '../src/fleet/simulated-hosts.js';
import { eventually, WEB_ROOT } from './lib/fleet-rig.js';

const missing = prometheusUnavailable();
const FAST_S = 3;
const SLOW_S = 5;
const COLUMNS = 4;

test(
  'live columns at the coarsest scrape interval: one per scrape, each the hosts’ exact counts, hosts at 3 s and 5 s together',
  { timeout: 240_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t: TestContext) => {
    const fast = await startSimulatedFleet({ hosts: 2, seed: 31, prefix: 'fast', keepFrames: true });
    t.after(() => fast.stop());
    const slow = await startSimulatedFleet({ hosts: 1, seed: 32, prefix: 'slow', keepFrames: true });
    t.after(() => slow.stop());
    const prom = await startFleetPrometheus({
      targets: fast.targets,
      t,
      scrapeIntervalS: FAST_S,
      moreJobs: [{ targets: slow.targets, scrapeIntervalS: SLOW_S }],
    });
    const fleet = await startFleet(
      { prometheus: prom.url, host: '127.0.0.1', port: 0, token: undefined, allowOrigins: [], schema: BUCKET_SCHEMA, webRoot: WEB_ROOT },
      () => {},
    );
    t.after(() => fleet.stop());
    const streamUrl = `${fleet.url.replace('http', 'ws')}api/v1/stream`;

    // Until the targets say the intervals, the hello says 1 s; then the stream restarts at 5 s.
    // It restarts once more when the fleet's edge is first read (a hello without it is followed
    // by a 1012, fleet-live.ts noteComplete): a client that stays is one whose hello says it.
    const ws = await eventually(
      'a hello naming the 5 s live step and where the data ends',
      async () => {
        const c = await WsTestClient.connect(streamUrl);
        const hello = await c.nextJson<HelloMessage>((m) => m.t === 'hello');
        if (hello.step === SLOW_S && hello.fleet?.liveTo !== undefined) return c;
        c.destroy();
        await new Promise((r) => setTimeout(r, 1000));
        return undefined;
      },
      60_000,
    );
    t.after(() => ws.destroy());
    ws.sendJson({ t: 'subscribe' });
    const live: { frame: Frame; wallMs: number }[] = [];
    while (live.length < COLUMNS + 2) {
      const m = await ws.next(4 * SLOW_S * 1000 + 20_000);
      const msg = m.json<{ t: string; frame?: Frame }>();
      if (msg.t === 'frame' && msg.frame) live.push({ frame: msg.frame, wallMs: m.wallMs });
    }
    // The first columns may hold the hosts' first scrapes only in part: checked from the third on.
    const checked = live.slice(2);
    for (const [i, { frame }] of live.entries()) {
      assert.equal(frame.step, SLOW_S, 'live frames are columns of the coarsest interval');
      assert.equal(frame.ts % SLOW_S, 0, 'aligned as range columns are');
      if (i > 0) assert.equal(frame.ts, (live[i - 1] as { frame: Frame }).frame.ts + SLOW_S, 'one column after the other, none left out');
    }

    const disks = ((await (await fetch(`${fleet.url}api/v1/disks`)).json()) as { disks: DiskInfo[] }).disks;
    const hosts: { sim: SimulatedFleet; instance: string }[] = [
      ...fast.instances.map((instance) => ({ sim: fast, instance })),
      ...slow.instances.map((instance) => ({ sim: slow, instance })),
    ];
    const at = Date.now() / 1000;
    const latencies: number[] = [];
    for (const { frame, wallMs } of checked) {
      let completedAt = -Infinity;
      for (const { sim, instance } of hosts) {
        const scrapes = await scrapesOf(prom.url, instance, at);
        const want = expectedColumn(sim.framesOf(instance), scrapes, frame.ts, frame.step, BUCKET_SCHEMA);
        assert.ok(want.ios > 0, `${instance} counted I/O in column ${frame.ts}`);
        for (const disk of want.frame.disks) {
          const name = `${instance}/${SIMULATED_DISKS.find((d) => d.dev === disk.dev)?.name ?? '?'}`;
          const id = disks.find((d) => d.name === name)?.dev;
          assert.ok(id, `${name} is listed`);
          const got = frame.disks.find((d) => d.dev === id);
          assert.ok(got, `column ${frame.ts} has ${name}`);
          assert.deepEqual(
            got.cls.map((c) => ({ c: c.c, n: c.n, d: c.d, q: c.q })),
            disk.cls.map((c) => ({ c: c.c, n: c.n, d: c.d, q: c.q })),
            `${name} in column ${frame.ts} (spans ${JSON.stringify(want.spans)}), bucket for bucket`,
          );
        }
        // The scrape that completed the column for this host: its first with a window end past it.
        const done = scrapes.find((s) => s.end >= frame.ts + frame.step);
        assert.ok(done, `${instance} was scraped past column ${frame.ts}`);
        completedAt = Math.max(completedAt, done.at);
      }
      latencies.push(wallMs / 1000 - completedAt);
    }
    const ios = checked.map(({ frame }) => frame.disks.reduce((n, d) => n + d.cls.reduce((m, c) => m + c.n, 0), 0));
    t.diagnostic(`columns ${checked.map((c) => c.frame.ts).join(', ')}: ${ios.join(', ')} I/Os, every host's cells exact`);
    t.diagnostic(`from the scrape that completed a column to its frame: ${sortedFigures(latencies)} s`);
    const gaps = live.slice(1).map((l, i) => (l.wallMs - (live[i] as { wallMs: number }).wallMs) / 1000);
    t.diagnostic(`between frames: ${gaps.map((g) => g.toFixed(1)).join(', ')} s`);

    // The same columns as a range answer (the page's zoom) are the same counts.
    const first = (checked[0] as { frame: Frame }).frame.ts;
    const last = (checked[checked.length - 1] as { frame: Frame }).frame.ts + SLOW_S;
    const res = await fetch(`${fleet.url}api/v1/range?from=${first}&to=${last}&step=${SLOW_S}`);
    const range = ((await res.json()) as { step: number; frames: Frame[] }).frames;
    assert.deepEqual(
      range,
      checked.map((c) => c.frame),
      'live columns equal the range answer at the live step',
    );
  },
);

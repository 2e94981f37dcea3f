// A big fleet's clock (FleetLive.clockRound, nextClockReadingMs): its edge moves a step a scrape,
// so it is read every second only around the next move, and the lag a hello says (liveLag) is as
// exact as reading every second made it. Simulated time (FleetLive's clock) against a stand-in
// Prometheus answering the hosts' oldest newest window end; no Prometheus needed (the real one,
// through the page, is fleet-live-edge.test.ts).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUCKET_SCHEMA } from '@blkheat/shared-types';
import { FleetDirectory } from '../src/fleet/fleet-disks.js';
import { CLOCK_EVERY_S, FleetLive } from '../src/fleet/fleet-live.js';
import { PrometheusApi } from '../src/fleet/prometheus-api.js';

const STEP = 15;
/** Each column is complete this long after its end (the scrapes' spread and lag). */
const LAG_S = 4.25;

/** A stand-in Prometheus whose every host was scraped up to `completeTo(now)`. */
async function standIn(t: TestContext, completeTo: (nowS: number) => number): Promise<{ url: string; reads: () => number }> {
  let reads = 0;
  const server = createServer((req, res) => {
    reads++;
    const at = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('time'));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [at, String(completeTo(at))] }] } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reads: () => reads };
}

/** A FleetLive asking the stand-in at `url`, on the simulated clock `nowS`, closed (and its tail removed) after the test. */
function fleetLive(t: TestContext, url: string, nowS: () => number): FleetLive {
  const tailDir = mkdtempSync(join(tmpdir(), 'blkheat-clock-'));
  t.after(() => rmSync(tailDir, { recursive: true, force: true }));
  const live = new FleetLive({
    api: new PrometheusApi(url),
    dir: new FleetDirectory(),
    schema: BUCKET_SCHEMA,
    tailDir,
    log: () => undefined,
    nowS,
  });
  t.after(() => live.close());
  return live;
}

test('a big fleet’s clock is read around each move, not every second, and its lag stays within a reading of the truth', async (t) => {
  const T0 = 1_700_000_000 - (1_700_000_000 % STEP) + 7; // 7 s into a column
  // Every host scraped up to the end of the newest column that ended LAG_S ago (at STEP, the
  // window ends are the columns' ends: the oldest host's newest one).
  const { url, reads } = await standIn(t, (nowS) => Math.floor((nowS - LAG_S) / STEP) * STEP);
  let now = T0;
  const live = fleetLive(t, url, () => now);
  live.setStep(STEP);

  // Run the live loop as service.ts does, on simulated time, for ten minutes.
  const RUN_S = 600;
  const lags: number[] = [];
  let lastTo: number | undefined;
  while (now < T0 + RUN_S) {
    await live.clockRound();
    const clock = live.clock();
    assert.ok(clock, 'the clock is known after a reading');
    if (lastTo !== undefined && clock.liveTo > lastTo) lags.push(clock.liveLag);
    lastTo = clock.liveTo;
    now += live.nextClockReadingMs() / 1000;
  }
  const perMinute = (reads() * 60) / RUN_S;
  t.diagnostic(
    `${reads()} readings in ${RUN_S} s (${perMinute.toFixed(1)} a minute; every second was 60); liveLag at each move: ${[...new Set(lags)].join(', ')} s (true ${LAG_S})`,
  );
  assert.ok(lags.length >= RUN_S / STEP - 2, `the edge moved a step a scrape (${lags.length} moves)`);
  // After the first move seen to within a reading, every lag is the true one up to a reading's interval.
  for (const lag of lags.slice(1))
    assert.ok(lag >= LAG_S && lag < LAG_S + CLOCK_EVERY_S + 1e-9, `liveLag ${lag} s within a reading of ${LAG_S}`);
  assert.ok(perMinute <= (3 * 60) / STEP + 1, `${perMinute.toFixed(1)} readings a minute: about three a step`);
});

test('pages that connected before the fleet’s edge was first read reconnect once it is, for a hello that says it', async (t) => {
  const T0 = 1_700_000_000 - (1_700_000_000 % STEP) + 7;
  const { url } = await standIn(t, (nowS) => Math.floor((nowS - LAG_S) / STEP) * STEP);
  let now = T0;
  const live = fleetLive(t, url, () => now);
  const restarts: string[] = [];
  live.attach({ broadcastFrame: () => undefined, restartClients: (reason) => void restarts.push(reason) });
  // The hosts' step is known before any reading (their targets said it first): pages reconnect
  // for it, and their hello still has no edge.
  live.setStep(STEP);
  assert.deepEqual(restarts, [`the fleet's live step is now ${STEP} s`]);
  assert.equal(live.clock(), undefined, 'no edge before a reading');
  await live.clockRound();
  assert.equal(live.clock()?.liveTo, Math.floor((T0 - LAG_S) / STEP) * STEP, 'the edge read');
  assert.deepEqual(restarts.slice(1), ["the fleet's live edge is known"], 'the pages reconnect once the edge is known');
  // Later readings, the edge moving or not, and a new step (its edge known at once): no other reason.
  for (let i = 0; i < 40; i++) {
    now += 1;
    await live.clockRound();
  }
  live.setStep(2 * STEP);
  await live.clockRound();
  assert.deepEqual(restarts.slice(2), [`the fleet's live step is now ${2 * STEP} s`]);
});

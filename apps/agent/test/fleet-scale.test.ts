// The fleet view over a big fleet (issue 30, "Scale" and the ranked table), small enough for CI:
// 40 simulated hosts x 4 disks (apps/agent/src/fleet/simulated-hosts.ts: each its own target and
// instance, /metrics from the agent's own code, one host 64 times slower), a real Prometheus
// (Debian's) scraping them every second, the fleet server asking it. No kernel. The 1,000-host
// figures come from bench/fleet-scale.ts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOfNs, BUCKET_SCHEMA, type DiskInfo, FLEET_ROW_ID, type Frame } from '@blkheat/shared-types';
import { prometheusUnavailable } from '@blkheat/testkit';
import type { RunningFleet } from '../src/fleet/service.js';
import { DISKS_PER_HOST, SLOW_FACTOR } from '../src/fleet/simulated-hosts.js';
import { eventually } from './lib/fleet-rig.js';
import { startSimulatedFleetRig, type SimulatedFleetRig } from './lib/simulated-fleet-rig.js';

const missing = prometheusUnavailable();
const HOSTS = 40;

const bigFleet = (t: TestContext): Promise<SimulatedFleetRig> => startSimulatedFleetRig(t, HOSTS);

async function disksOf(fleet: RunningFleet): Promise<DiskInfo[]> {
  return ((await (await fetch(`${fleet.url}api/v1/disks`)).json()) as { disks: DiskInfo[] }).disks;
}

async function range(fleet: RunningFleet, query: string): Promise<Frame[]> {
  const res = await fetch(`${fleet.url}api/v1/range?${query}`);
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { frames: Frame[] }).frames;
}

/** Count per dense bucket over every frame, class and disk of `frames` with `dev` matching. */
function bucketTotals(frames: readonly Frame[], dev: (d: string) => boolean): Map<number, number> {
  const out = new Map<number, number>();
  for (const f of frames)
    for (const d of f.disks)
      if (dev(d.dev))
        for (const c of d.cls)
          for (let i = 0; i < c.d.length; i += 2) out.set(c.d[i] as number, (out.get(c.d[i] as number) ?? 0) + (c.d[i + 1] as number));
  return out;
}

const sum = (m: ReadonlyMap<number, number>, keep: (k: number) => boolean = () => true): number =>
  [...m].reduce((acc, [k, v]) => (keep(k) ? acc + v : acc), 0);

test(
  'a big fleet: the fleet row (sum by class, by Prometheus) matches the hosts’ exact rows, and the slow host ranks first',
  { timeout: 300_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t) => {
    const { sim, prom, fleet } = await bigFleet(t);
    // Every host scraped once (Prometheus applies its targets a few seconds after it is ready).
    await eventually('every host scraped', async () => ((await prom.targetsUp()).up === HOSTS ? true : undefined));
    const scrapedFrom = Date.now() / 1000;
    const disks = await eventually('every simulated disk listed', async () => {
      const list = await disksOf(fleet);
      return list.length === HOSTS * DISKS_PER_HOST + 1 ? list : undefined;
    });
    assert.equal(disks[0]?.dev, FLEET_ROW_ID, 'the fleet row first');
    assert.equal(disks[0]?.host, 'fleet');
    assert.equal(new Set(disks.slice(1).map((d) => d.host)).size, HOSTS);
    // 30 s of scrapes, then a 20 s range ending well behind the newest scrape.
    await new Promise((r) => setTimeout(r, 30_000));
    const to = Math.floor(Date.now() / 1000) - 4;
    const from = to - 20;

    const overview = await range(fleet, `from=${from}&to=${to}`);
    assert.ok(overview.length >= 8, `${overview.length} columns`);
    assert.ok(
      overview.every((f) => f.step === 2 && f.disks.every((d) => d.dev === FLEET_ROW_ID)),
      'a range naming no disk: the fleet row only, at 2 scrape intervals a column',
    );
    // The exact rows of every host (raw samples, scrape by scrape), asked for by name.
    const hostDisks = disks.slice(1);
    const exact = await range(fleet, `from=${from}&to=${to}&step=2&${hostDisks.map((d) => `disk=${d.dev}`).join('&')}`);
    const fleetBuckets = bucketTotals(overview, () => true);
    const exactBuckets = bucketTotals(exact, () => true);
    const slowDevs = new Set(hostDisks.filter((d) => d.host === sim.slowInstance).map((d) => d.dev));
    const slowExact = bucketTotals(exact, (d) => slowDevs.has(d));
    const slowFrom = bucketOfNs(100_000 * SLOW_FACTOR, BUCKET_SCHEMA);
    // increase() extrapolates each column to its edges: the fleet's total is within a scrape
    // interval's worth of I/O at each end of the range (docs/fleet.md): 2 of 20 s, 10 %.
    const total = sum(exactBuckets);
    assert.ok(total > 0);
    t.diagnostic(
      `fleet row ${sum(fleetBuckets)} I/Os vs the hosts' exact rows ${total}; over 6.4 ms ${sum(fleetBuckets, (k) => k >= slowFrom)} vs ${sum(slowExact, (k) => k >= slowFrom)}`,
    );
    assert.ok(Math.abs(sum(fleetBuckets) - total) <= 0.1 * total, `fleet row ${sum(fleetBuckets)} vs the hosts' rows ${total}`);
    // Bucket for bucket, not re-binned: only the slow host has I/Os over 6.4 ms, in the same buckets.
    const slowOnly = sum(slowExact, (k) => k >= slowFrom);
    assert.equal(
      sum(exactBuckets, (k) => k >= slowFrom),
      slowOnly,
      'only the slow host is that slow',
    );
    assert.ok(Math.abs(sum(fleetBuckets, (k) => k >= slowFrom) - slowOnly) <= 0.1 * slowOnly + 2);
    for (const [k, n] of fleetBuckets)
      if (k >= slowFrom) assert.ok((slowExact.get(k) ?? 0) > 0, `fleet row bucket ${k} (${n}) is one the slow host has`);
    for (const [k, n] of slowExact)
      if (n >= 10) assert.ok((fleetBuckets.get(k) ?? 0) > 0, `the slow host's bucket ${k} (${n}) in the fleet row`);

    // The ranked table, computed by Prometheus: the slow host's four disks first, then the rest.
    const ranked = await fleet.ranked({ from: to - 30, to, limit: 10 });
    assert.equal(ranked.disks.length, 10);
    assert.equal(ranked.hosts[0]?.instance, sim.slowInstance, 'the slow host first');
    const [a, b, c, d, next] = ranked.disks;
    for (const row of [a, b, c, d]) {
      assert.equal(row?.instance, sim.slowInstance);
      assert.ok((row?.p99 ?? 0) > 0.0096 && (row?.p99 ?? 1) < 0.06, `slow p99 ${row?.p99} s (its I/Os take 9.6-40 ms)`);
      assert.ok((row?.oldestInflightS ?? 0) >= 0.0096, `its oldest I/O in flight ${row?.oldestInflightS} s`);
      assert.ok((row?.p999 ?? 0) >= (row?.p99 ?? 1));
      assert.ok((row?.ios ?? 0) > 30 * 25, `${row?.ios} I/Os in 30 s`);
      assert.ok(row?.id !== undefined && slowDevs.has(row.id), 'the row’s fleet id');
    }
    assert.ok((next?.p99 ?? 1) < 0.002, `the next disk's p99 ${next?.p99} s (healthy disks: 150-600 µs)`);
    assert.equal(new Set(ranked.disks.map((r) => `${r.instance}/${r.dev}`)).size, 10, 'no row twice');
    // A fleet row over 40 minutes, a minute a column, against the hosts' exact rows for its
    // first whole minute of scrapes: 40 min of 1 s scrapes is 2,400 samples a series, so the
    // hosts' rows come in batches of hosts (RAW_SAMPLES_PER_REQUEST), every one of them.
    const minute = Math.ceil((scrapedFrom + 3) / 60) * 60;
    const end = minute + 60;
    while (Date.now() / 1000 < end + 4) await new Promise((r) => setTimeout(r, 1000));
    const span = `from=${end - 40 * 60}&to=${end}&step=60`;
    const fleetMinute = (await range(fleet, span)).find((f) => f.ts === minute);
    const exactMinute = (await range(fleet, `${span}&${hostDisks.map((d) => `disk=${d.dev}`).join('&')}`)).filter((f) => f.ts === minute);
    assert.ok(
      fleetMinute && fleetMinute.step === 60 && fleetMinute.disks.every((d) => d.dev === FLEET_ROW_ID),
      'the fleet row, a minute a column',
    );
    assert.equal(
      new Set(exactMinute.flatMap((f) => f.disks.map((d) => d.dev))).size,
      HOSTS * DISKS_PER_HOST,
      'every disk, batch after batch',
    );
    const minuteTotal = sum(bucketTotals([fleetMinute], () => true));
    const exactTotal = sum(bucketTotals(exactMinute, () => true));
    t.diagnostic(`minute ${minute}: fleet row ${minuteTotal} I/Os, the hosts' exact rows ${exactTotal}`);
    assert.ok(exactTotal > 0 && Math.abs(minuteTotal - exactTotal) <= 0.1 * exactTotal, `fleet row ${minuteTotal} vs exact ${exactTotal}`);
    t.diagnostic(`ranked: ${ranked.disks.map((r) => `${r.instance}/${r.disk} ${(r.p99 * 1000).toFixed(2)} ms`).join(', ')}`);
  },
);

// The ranked table at a 15 s scrape (issue 30): the table must count the same scrapes as the
// heat map beside it. A real Prometheus (Debian's) scrapes 4 simulated hosts × 4 disks
// (fleet/simulated-hosts.ts, I/O every second) every 15 s; for ranges of one and of three scrape
// intervals, in whole intervals as the page asks (model/fleetRanking.ts rankingRange), every disk
// the fleet's own range answer (the heat map's counts: differences between stored scrapes, dated
// by the agents' window ends, docs/fleet.md "What a cell counts") has I/O in must be ranked, with
// those I/Os. Before, a range of one interval held one scrape, `increase()` had nothing to
// difference and the table read "No disk with I/O in this range" beside rows full of I/O.
// No kernel, no chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type FleetRanking, type Frame, MAX_RANKED } from '@blkheat/shared-types';
import { prometheusUnavailable, scrapesOf } from '@blkheat/testkit';
import { DISKS_PER_HOST } from '../src/fleet/simulated-hosts.js';
import { eventually } from './lib/fleet-rig.js';
import { startSimulatedFleetRig } from './lib/simulated-fleet-rig.js';

const missing = prometheusUnavailable();
const HOSTS = 4;
const SCRAPE_S = 15;
/** Ranges of one and of three scrape intervals, ending at the same whole interval. */
const SPANS_S = [SCRAPE_S, 3 * SCRAPE_S];

test(
  'the fleet ranking at a 15 s scrape: a range of one or three scrapes ranks every disk with I/O, with the heat map’s I/O counts',
  { timeout: 240_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t) => {
    const { sim, prom, fleet } = await startSimulatedFleetRig(t, HOSTS, SCRAPE_S);
    // A range every host has whole: after each host's first stored scrape (seconds before it are
    // not recorded), and before its newest (the difference starting last must be in).
    const longest = Math.max(...SPANS_S);
    const to = await eventually(
      `every host scraped over ${longest} s and more`,
      async () => {
        const now = Date.now() / 1000;
        const ends = await Promise.all(sim.instances.map((i) => scrapesOf(prom.url, i, now).then((s) => s.map((x) => x.end))));
        if (ends.some((e) => e.length < 2)) return undefined;
        const end = Math.floor(Math.min(...ends.map((e) => e[e.length - 1] as number)) / SCRAPE_S) * SCRAPE_S;
        return end - longest >= Math.max(...ends.map((e) => e[0] as number)) ? end : undefined;
      },
      (longest + 4 * SCRAPE_S + 10) * 1000,
    );
    for (const spanS of SPANS_S) {
      const from = to - spanS;
      // The heat map's counts: the fleet's range at the scrape interval, per disk.
      const res = await fetch(`${fleet.url}api/v1/range?from=${from}&to=${to}&step=${SCRAPE_S}`);
      assert.equal(res.status, 200, `range ${from}..${to}`);
      const { frames } = (await res.json()) as { frames: Frame[] };
      const heat = new Map<string, number>();
      for (const f of frames)
        if (f.ts >= from && f.ts < to)
          for (const d of f.disks) heat.set(d.dev, (heat.get(d.dev) ?? 0) + d.cls.reduce((n, c) => n + (c.pt ? 0 : c.n), 0));
      const rres = await fetch(`${fleet.url}api/v1/fleet/ranking?from=${from}&to=${to}&limit=${MAX_RANKED}`);
      assert.equal(rres.status, 200, `ranking ${from}..${to}`);
      const ranking = (await rres.json()) as FleetRanking;
      const ranked = new Map(ranking.disks.map((d) => [d.id ?? `${d.instance}/${d.dev}`, d.ios]));
      const busy = [...heat].filter(([, n]) => n > 0);
      const compared = busy.map(([dev, n]) => `${dev} ${n}/${ranked.get(dev) ?? 'unranked'}`);
      t.diagnostic(
        `[${from}, ${to}) (${spanS} s): heat map has I/O on ${busy.length} disks, ${ranking.disks.length} ranked in ` +
          `${ranking.prometheusQueries} queries; I/Os heat map/table: ${compared.join(', ')}`,
      );
      assert.equal(busy.length, HOSTS * DISKS_PER_HOST, `every simulated disk did I/O in [${from}, ${to})`);
      assert.equal(ranking.disks.length, busy.length, `${spanS} s: every disk with I/O is ranked`);
      assert.equal(ranking.disks[0]?.instance, sim.slowInstance, `${spanS} s: the slow host first`);
      for (const [dev, n] of busy) {
        const got = ranked.get(dev);
        assert.ok(got !== undefined, `${dev} is ranked`);
        // Prometheus' rate over the range's scrapes times the range: exact for scrapes exactly an
        // interval apart; a scrape's few ms of jitter moves it by n × jitter / range (< 0.1 %).
        assert.ok(Math.abs(got - n) <= Math.max(1, n * 0.001), `${spanS} s: ${dev} counts ${got} I/Os, the heat map ${n}`);
      }
    }
  },
);

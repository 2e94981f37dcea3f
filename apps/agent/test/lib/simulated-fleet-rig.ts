/**
 * A simulated fleet on a real Prometheus, no kernel: `hosts` simulated hosts × 4 disks
 * (fleet/simulated-hosts.ts, one of them slow), Debian's Prometheus scraping them every second
 * (or every `scrapeIntervalS`),
 * and the fleet server asking it. Everything is torn down with the test.
 */
import type { TestContext } from 'node:test';
import { BUCKET_SCHEMA } from '@blkheat/shared-types';
import { startFleetPrometheus, type FleetPrometheus } from '@blkheat/testkit';
import { startFleet, type RunningFleet } from '../../src/fleet/service.js';
import { startSimulatedFleet, type SimulatedFleet } from '../../src/fleet/simulated-hosts.js';
import { WEB_ROOT } from './fleet-rig.js';

export interface SimulatedFleetRig {
  readonly sim: SimulatedFleet;
  readonly prom: FleetPrometheus;
  readonly fleet: RunningFleet;
}

export async function startSimulatedFleetRig(t: TestContext, hosts: number, scrapeIntervalS = 1): Promise<SimulatedFleetRig> {
  const sim = await startSimulatedFleet({ hosts, seed: 7 });
  t.after(() => sim.stop());
  const prom = await startFleetPrometheus({ targets: sim.targets, t, scrapeIntervalS });
  const fleet = await startFleet(
    { prometheus: prom.url, host: '127.0.0.1', port: 0, token: undefined, allowOrigins: [], schema: BUCKET_SCHEMA, webRoot: WEB_ROOT },
    () => {},
  );
  t.after(() => fleet.stop());
  return { sim, prom, fleet };
}

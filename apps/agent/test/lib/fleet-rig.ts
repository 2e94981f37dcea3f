/**
 * The fleet test rig, no kernel: three fake exporters standing in for three hosts' agents
 * (synthetic frames of known counts, /metrics protobuf from the agent's own exposition code;
 * host-c's reads take 5 ms), a real Prometheus scraping them every second, and the fleet server
 * (fleet/service.ts) asking it. Everything is torn down with the test.
 */
import { fileURLToPath } from 'node:url';
import { BUCKET_SCHEMA, bucketOfNs, mergeFrames, type Frame } from '@blkheat/shared-types';
import { startPrometheus, type CleanupContext, type PrometheusServer } from '@blkheat/testkit';
import { startFleet, type RunningFleet } from '../../src/fleet/service.js';
import { startFakeExporter, type FakeExporter, type FakeHost } from './fake-exporter.js';

/** Dense buckets of the synthetic latencies (schema 2). */
export const B_100US = bucketOfNs(100_000, BUCKET_SCHEMA);
export const B_300US = bucketOfNs(300_000, BUCKET_SCHEMA);
export const B_5MS = bucketOfNs(5_000_000, BUCKET_SCHEMA);
export const B_50US = bucketOfNs(50_000, BUCKET_SCHEMA);

export const FLEET_HOSTS: readonly FakeHost[] = [
  { instance: 'host-a', disk: 'nvme0n1', dev: '259:0', classes: [{ c: 'Read', d: { [B_100US]: 40, [B_300US]: 3 }, q: { [B_50US]: 43 } }] },
  {
    instance: 'host-b',
    disk: 'sda',
    dev: '8:0',
    classes: [
      { c: 'Read', d: { [B_100US]: 20 }, q: { [B_50US]: 20 } },
      { c: 'Sync-Write', d: { [B_300US]: 10 }, q: { [B_50US]: 10 } },
    ],
  },
  // The delayed host: every read in the 4–8 ms band.
  { instance: 'host-c', disk: 'vdb', dev: '252:16', classes: [{ c: 'Read', d: { [B_5MS]: 12 }, q: { [B_50US]: 12 } }] },
];

export interface FleetRig {
  readonly exporters: readonly FakeExporter[];
  readonly prom: PrometheusServer;
  readonly fleet: RunningFleet;
  /**
   * What the fleet view must show for a host, per second: the exporter's own frames, grouped by
   * the scrapes Prometheus stored. A stored scrape is dated by the agent's window end, so the
   * seconds between two stored scrapes [e0, e1) show as one entry at e0: one second each, unless
   * a scrape failed or came late (a loaded machine), when the later one carries both seconds
   * (docs/fleet.md). `merged` counts such groups.
   */
  attributed(instance: string): Promise<{ bySecond: Map<number, Frame>; merged: number }>;
}

export const WEB_ROOT = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

export async function startFleetRig(t: CleanupContext, log: (line: string) => void = () => {}): Promise<FleetRig> {
  const exporters = await Promise.all(FLEET_HOSTS.map((h) => startFakeExporter(h)));
  t.after(async () => {
    await Promise.all(exporters.map((e) => e.stop()));
  });
  const prom = await startPrometheus({ targets: exporters.map((e) => `127.0.0.1:${e.port}`), t });
  const fleet = await startFleet(
    { prometheus: prom.url, host: '127.0.0.1', port: 0, token: undefined, allowOrigins: [], schema: BUCKET_SCHEMA, webRoot: WEB_ROOT },
    log,
  );
  t.after(() => fleet.stop());
  return {
    exporters,
    prom,
    fleet,
    async attributed(instance) {
      const frames = exporters.find((e) => e.host.instance === instance)?.frames ?? [];
      const ends = await prom.windowEnds(instance);
      const bySecond = new Map<number, Frame>();
      let merged = 0;
      for (let i = 1; i < ends.length; i++) {
        const a = ends[i - 1] as number;
        const b = ends[i] as number;
        if (b - a > 1) merged++;
        bySecond.set(
          a,
          mergeFrames(
            frames.filter((f) => f.ts >= a && f.ts < b),
            a,
            1,
            BUCKET_SCHEMA,
          ),
        );
      }
      return { bySecond, merged };
    },
  };
}

/** Polls until `probe` returns a value (not undefined), or fails after timeoutMs. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Many simulated hosts in one process, for the fleet view at scale (bench/fleet-scale.ts and the
 * fleet-scale tests): each host is its own HTTP target on loopback, with its own `instance`, and
 * answers /metrics with the agent's own exposition (server/metrics.ts buildMetrics over a
 * LatencyTotals, rendered by server/native-histograms.ts or exposition.ts as the scraper asks),
 * so Prometheus stores exactly what it would store from real agents: native histograms at the
 * agent's schema, the window gauges, I/O, error and untimed counters, in-flight gauges and the
 * agent's self-metrics. Nothing is re-implemented of the format.
 *
 * Each host has DISKS_PER_HOST disks; each second of each disk has seeded reads and synchronous
 * writes, with a few errors, untimed I/Os and an I/O in flight. One host is slow: its latencies
 * are SLOW_FACTOR times the others'. A host closes its seconds when scraped, up to the last
 * whole second (a real agent closes them on the wall-clock edge: the exposition is the same).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bucketOfNs,
  BUCKET_SCHEMA,
  type BucketSchema,
  type ClassSeries,
  type DiskInfo,
  type Frame,
  seededRandom,
} from '@blkheat/shared-types';
import { HistoryStore } from '../history/store.js';
import { SampleSource } from '../history/sample-source.js';
import { SampleStore } from '../history/samples.js';
import type { AgentContext } from '../server/context.js';
import { type Exposition, renderText, TEXT_CONTENT_TYPE } from '../server/exposition.js';
import { buildMetrics, type StreamStats } from '../server/metrics.js';
import { PROTOBUF_CONTENT_TYPE, renderProtobuf, wantsProtobuf } from '../server/native-histograms.js';
import { LatencyTotals } from '../server/totals.js';
import { AGENT_VERSION } from '../version.js';

export const DISKS_PER_HOST = 4;
/** Every simulated host's disks: sda, sdb, … at 8:0, 8:16, … */
export const SIMULATED_DISKS: readonly DiskInfo[] = Array.from({ length: DISKS_PER_HOST }, (_, i) => ({
  dev: `8:${16 * i}`,
  name: `sd${String.fromCharCode(97 + i)}`,
  kind: 'request',
  present: true,
}));
/** The slow host's latencies, against the others'. */
export const SLOW_FACTOR = 64;
/** Typical device latency of a healthy simulated disk (ns). */
const BASE_NS = 150_000;

export interface SimulatedFleetOptions {
  readonly hosts: number;
  /** Index of the slow host (default: the middle one, so that it is neither first nor last seen). */
  readonly slow?: number;
  readonly schema?: BucketSchema;
  readonly seed?: number;
  /** Instances are `${prefix}-NN` (default "sim"): two fleets in one Prometheus need two prefixes. */
  readonly prefix?: string;
  /** Keep every second each host served (framesOf), for tests that compare columns with them. */
  readonly keepFrames?: boolean;
  /**
   * The hosts' first second (unix seconds; default now): a bench that back-fills Prometheus with
   * the hosts' past (exposeAt) starts them that far back, so that its scrapes continue the same
   * counters.
   */
  readonly since?: number;
}

export interface SimulatedFleet {
  /** host:port of every host, in host order. */
  readonly targets: readonly string[];
  /** Every host's `instance`, in host order. */
  readonly instances: readonly string[];
  /** The slow host's `instance`. */
  readonly slowInstance: string;
  /** Scrapes answered so far. */
  readonly scrapes: number;
  /** The seconds a host has served, oldest first (with keepFrames; else none): what it counted. */
  framesOf(instance: string): readonly Frame[];
  /**
   * What host `index` would answer a scrape at unix time `at` (its seconds closed up to it), for
   * a back-fill: times must not go back, and a scrape after it continues from `at`.
   */
  exposeAt(index: number, at: number): Exposition;
  stop(): Promise<void>;
}

/** The dense bucket of the k-th step above `base` (4 buckets an octave at schema 2). */
interface HostShape {
  readonly base: number;
  readonly queueBase: number;
  readonly slow: boolean;
}

/** `n` I/Os spread over base, base + 1, … (most in the first few), plus a rare tail 8 buckets up. */
function spread(n: number, base: number, random: () => number): number[] {
  const counts = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const r = random();
    const k = r < 0.004 ? base + 8 : base + Math.min(4, Math.floor(-Math.log2(1 - r) * 0.8));
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).flat();
}

function classSeries(c: string, n: number, shape: HostShape, random: () => number, errors: number): ClassSeries {
  return {
    c,
    n,
    d: spread(n, shape.base, random),
    q: spread(n, shape.queueBase, random),
    b: n * 4096,
    ...(errors > 0 ? { e: { IOERR: errors } } : {}),
  };
}

function frameOf(ts: number, devs: readonly string[], shape: HostShape, random: () => number): Frame {
  return {
    ts,
    step: 1,
    disks: devs.map((dev) => {
      const reads = 20 + Math.floor(random() * 40);
      const writes = 5 + Math.floor(random() * 10);
      const oldestNs = (shape.slow ? SLOW_FACTOR : 1) * BASE_NS * (1 + random() * 3);
      return {
        dev,
        cls: [classSeries('Read', reads, shape, random, random() < 0.01 ? 1 : 0), classSeries('Sync-Write', writes, shape, random, 0)],
        ...(random() < 0.05 ? { untimed: { flush: 1 } } : {}),
        inflight: { n: 1 + Math.floor(random() * 4), oldest_ns: Math.round(oldestNs), ios: [] },
      };
    }),
  };
}

/** What the simulated agents say of their streams (no WebSocket clients). */
const QUIET_STREAM: StreamStats = {
  clients: 0,
  framesSent: 0,
  framesSkipped: 0,
  laggingNotices: 0,
  slowClientsClosed: 0,
  floodsClosed: 0,
  bytesSent: 0,
  reads: { queued: 0, active: 0, parked: 0, refused: 0, dropped: 0, bytesRead: 0 },
  memory: { reclaims: 0, releasedBytes: 0 },
  lastFrameLagS: null,
};

export async function startSimulatedFleet(options: SimulatedFleetOptions): Promise<SimulatedFleet> {
  const schema = options.schema ?? BUCKET_SCHEMA;
  const slowIndex = options.slow ?? Math.floor(options.hosts / 2);
  const width = String(options.hosts).length;
  // The history gauges buildMetrics reads: one empty store serves every simulated host.
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-simulated-'));
  const history = HistoryStore.open({ dir: join(dir, 'history'), historySeconds: 60, maxBytes: 1024 ** 2, schema, log: () => {} });
  const samples = new SampleSource(new SampleStore({ capacity: 1, windowSeconds: 1 }), undefined, 0);
  const devs = SIMULATED_DISKS.map((d) => d.dev);
  const diskInfos = SIMULATED_DISKS;
  const servers: Server[] = [];
  const targets: string[] = [];
  const instances: string[] = [];
  let scrapes = 0;
  const served = new Map<string, Frame[]>();
  const startedAt = options.since ?? Math.floor(Date.now() / 1000);
  const exposers: ((at: number) => Exposition)[] = [];
  try {
    for (let h = 0; h < options.hosts; h++) {
      const instance = `${options.prefix ?? 'sim'}-${String(h).padStart(width, '0')}`;
      const slow = h === slowIndex;
      const random = seededRandom((options.seed ?? 1) * 100_003 + h);
      // Hosts differ a little (a bucket or two), the slow one by SLOW_FACTOR.
      const base = bucketOfNs(BASE_NS * (slow ? SLOW_FACTOR : 1), schema) + Math.floor(random() * 2);
      const shape: HostShape = { base, queueBase: bucketOfNs(20_000, schema), slow };
      const totals = new LatencyTotals(schema);
      const ctx: AgentContext = {
        version: AGENT_VERSION,
        host: { hostname: instance, kernel: 'simulated', instance },
        schema,
        history,
        samples,
        totals,
        startedAt,
        disks: () => diskInfos,
        collectorStats: () => undefined,
      };
      let next = startedAt;
      const kept: Frame[] = [];
      if (options.keepFrames) served.set(instance, kept);
      // The seconds that ended by `at`, closed as an agent closes them, then the exposition.
      const expose = (at: number): Exposition => {
        for (const now = Math.floor(at); next < now; next++) {
          const frame = frameOf(next, devs, shape, random);
          totals.add(frame);
          if (options.keepFrames) kept.push(frame);
        }
        return buildMetrics(ctx, QUIET_STREAM);
      };
      exposers.push(expose);
      const server = createServer((req, res) => {
        if (req.url !== '/metrics') {
          res.writeHead(404).end();
          return;
        }
        scrapes++;
        const exposition = expose(Date.now() / 1000);
        const proto = wantsProtobuf(req.headers.accept) ? renderProtobuf(exposition) : undefined;
        if (proto) res.writeHead(200, { 'Content-Type': PROTOBUF_CONTENT_TYPE }).end(proto);
        else res.writeHead(200, { 'Content-Type': TEXT_CONTENT_TYPE }).end(renderText(exposition));
      });
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      targets.push(`127.0.0.1:${(server.address() as AddressInfo).port}`);
      instances.push(instance);
    }
  } catch (e) {
    await closeAll(servers);
    history.close();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    targets,
    instances,
    slowInstance: instances[slowIndex] as string,
    get scrapes() {
      return scrapes;
    },
    framesOf: (instance) => served.get(instance) ?? [],
    exposeAt: (index, at) => {
      const expose = exposers[index];
      if (!expose) throw new Error(`no simulated host ${index} (of ${exposers.length})`);
      return expose(at);
    },
    stop: async () => {
      await closeAll(servers);
      history.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function closeAll(servers: readonly Server[]): Promise<void> {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
}

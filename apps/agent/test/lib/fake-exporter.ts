/**
 * A stand-in for one host's agent on /metrics, for fleet tests that must not load BPF: it makes
 * a synthetic frame of known counts per second and serves the cumulative totals in the protobuf
 * format built by the agent's own exposition code (Exposition + renderProtobuf), with the window
 * gauges the agent exports. Every frame it made is kept, so a test can compare what the fleet
 * view shows with what was counted.
 *
 * Its seconds close in step with the scrapes: a real agent closes a second at the wall-clock
 * edge, and a scrape that lands within milliseconds of that edge may see two seconds at once or
 * none (the fleet view then gives both to the first: docs/fleet.md). Here a second closes half
 * a scrape interval after the phase of the first scrape, so each scrape sees exactly one new
 * second and the test can demand exact columns.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BUCKET_SCHEMA, type BucketSchema, type Frame, type SparseHist } from '@blkheat/shared-types';
import { Exposition } from '../../src/server/exposition.js';
import { PROTOBUF_CONTENT_TYPE, renderProtobuf } from '../../src/server/native-histograms.js';
import { LatencyTotals } from '../../src/server/totals.js';

export interface FakeClass {
  readonly c: string;
  /** I/Os per second: dense bucket -> count. */
  readonly d: Readonly<Record<number, number>>;
  readonly q?: Readonly<Record<number, number>>;
}

export interface FakeHost {
  readonly instance: string;
  readonly disk: string;
  readonly dev: string;
  readonly classes: readonly FakeClass[];
}

export interface FakeExporter {
  readonly port: number;
  readonly host: FakeHost;
  /** Frames made so far, one per second, oldest first. */
  readonly frames: readonly Frame[];
  stop(): Promise<void>;
}

function sparse(rec: Readonly<Record<number, number>>): SparseHist {
  return Object.entries(rec)
    .map(([k, v]) => [Number(k), v] as const)
    .sort((a, b) => a[0] - b[0])
    .flatMap(([k, v]) => [k, v]);
}

export function fakeFrame(host: FakeHost, ts: number): Frame {
  return {
    ts,
    step: 1,
    disks: [
      {
        dev: host.dev,
        cls: host.classes.map((c) => {
          const d = sparse(c.d);
          let n = 0;
          for (let i = 1; i < d.length; i += 2) n += d[i] as number;
          return { c: c.c, n, d, q: c.q ? sparse(c.q) : [] };
        }),
      },
    ],
  };
}

export function exposition(host: FakeHost, totals: LatencyTotals, schema: BucketSchema): Exposition {
  const out = new Exposition(schema, { instance: host.instance });
  const all = totals.snapshot();
  out.family('blkheat_device_latency_seconds', 'histogram', 'device latency (fake exporter)');
  out.family('blkheat_queue_latency_seconds', 'histogram', 'queue latency (fake exporter)');
  for (const d of all.disks)
    for (const c of d.cls) {
      const labels = { disk: host.disk, dev: d.dev, class: c.c };
      out.histogram('blkheat_device_latency_seconds', labels, c.d);
      out.histogram('blkheat_queue_latency_seconds', labels, c.q);
    }
  const w = totals.window;
  out.single('blkheat_histogram_window_start_seconds', 'gauge', 'first second counted', w?.from ?? null);
  out.single('blkheat_histogram_window_end_seconds', 'gauge', 'end of the newest second counted', w?.to ?? null);
  return out;
}

/** Starts the exporter on loopback; its first scrape closes the seconds since it started. */
export async function startFakeExporter(host: FakeHost, schema: BucketSchema = BUCKET_SCHEMA): Promise<FakeExporter> {
  const totals = new LatencyTotals(schema);
  const frames: Frame[] = [];
  let next = Math.floor(Date.now() / 1000) - 1;
  /** Fraction of a second at which the first scrape came (scrapes come at a fixed phase). */
  let phase: number | undefined;
  // Closes every second up to the one before the current scrape period (see the header).
  const tick = (): void => {
    const now = Date.now() / 1000;
    phase ??= now % 1;
    const period = Math.round(now - phase);
    while (next < period) {
      const f = fakeFrame(host, next);
      frames.push(f);
      totals.add(f);
      next++;
    }
  };
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    tick();
    const body = renderProtobuf(exposition(host, totals, schema));
    if (!body) {
      res.writeHead(500).end('metrics.proto missing');
      return;
    }
    res.writeHead(200, { 'Content-Type': PROTOBUF_CONTENT_TYPE }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    host,
    frames,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

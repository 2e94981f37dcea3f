/**
 * The simulated fleet's past, written into Prometheus by remote write, so that bench/fleet-scale
 * can measure a page over an hour of history without an hour of scrapes (`--backfill MINUTES`).
 *
 * Why remote write: Prometheus 2.42 cannot back-fill native histograms from files (promtool's
 * OpenMetrics import has no native histograms), but its remote-write receiver
 * (`--web.enable-remote-write-receiver`) appends them like scraped samples, in time order. Each
 * simulated host's exposition at each past scrape time is the agent's own /metrics code over the
 * host's own seconds (SimulatedFleet.exposeAt), so Prometheus stores what scrapes would have
 * stored: the same series (honor_labels: the exposition's labels and the job), the same native
 * histograms at the agent's schema, the same counters, which the live scrapes after it continue.
 * What it does not write are the series Prometheus makes of a scrape itself (`up`,
 * `scrape_duration_seconds`, …): the fleet server reads those for links, from the live scrapes.
 *
 * The wire format is prometheus.WriteRequest (prompb/remote.proto and types.proto, the fields
 * used here), snappy block-compressed, as the remote-write spec (1.0) asks.
 */
import protobuf from 'protobufjs';
import snappy from 'snappyjs';
import { toNativeBuckets } from '../apps/agent/src/server/native-histograms.js';
import type { Exposition } from '../apps/agent/src/server/exposition.js';

/** prompb's WriteRequest, the fields remote write 1.0 sends (field numbers as in types.proto). */
const PROMPB = `
syntax = "proto3";
package prometheus;
message WriteRequest { repeated TimeSeries timeseries = 1; }
message TimeSeries {
  repeated Label labels = 1;
  repeated Sample samples = 2;
  repeated Histogram histograms = 4;
}
message Label { string name = 1; string value = 2; }
message Sample { double value = 1; int64 timestamp = 2; }
message BucketSpan { sint32 offset = 1; uint32 length = 2; }
message Histogram {
  oneof count { uint64 count_int = 1; double count_float = 2; }
  double sum = 3;
  sint32 schema = 4;
  double zero_threshold = 5;
  oneof zero_count { uint64 zero_count_int = 6; double zero_count_float = 7; }
  repeated BucketSpan positive_spans = 11;
  repeated sint64 positive_deltas = 12;
  int64 timestamp = 15;
}
`;
const WriteRequest = protobuf.parse(PROMPB).root.lookupType('prometheus.WriteRequest');

interface Series {
  labels: { name: string; value: string }[];
  samples?: { value: number; timestamp: number }[];
  histograms?: Record<string, unknown>[];
}

/** One exposition as remote-write series at `ms`, with the labels a scrape under `job` gets. */
export function seriesOf(exposition: Exposition, job: string, ms: number): Series[] {
  // Prometheus sorts a series' labels by name; the receiver takes them as sent.
  const labelsOf = (name: string, labels: Readonly<Record<string, string>>): Series['labels'] =>
    Object.entries({ ...labels, __name__: name, job })
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([n, value]) => ({ name: n, value }));
  const out: Series[] = [];
  for (const f of exposition.families) {
    for (const s of f.samples) out.push({ labels: labelsOf(f.name, s.labels), samples: [{ value: s.value, timestamp: ms }] });
    for (const h of f.histograms) {
      const b = toNativeBuckets(h.hist, exposition.schema);
      out.push({
        labels: labelsOf(f.name, h.labels),
        histograms: [
          {
            countInt: b.count,
            sum: 0,
            schema: exposition.schema.scale,
            zeroThreshold: b.zeroThreshold,
            zeroCountInt: b.zeroCount,
            positiveSpans: b.spans,
            positiveDeltas: b.deltas,
            timestamp: ms,
          },
        ],
      });
    }
  }
  return out;
}

/** POSTs series to Prometheus' receiver; throws with its answer if it refuses them. */
async function write(url: string, series: Series[]): Promise<number> {
  const body = snappy.compress(WriteRequest.encode(WriteRequest.fromObject({ timeseries: series })).finish());
  const res = await fetch(`${url}/api/v1/write`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-protobuf',
      'Content-Encoding': 'snappy',
      'X-Prometheus-Remote-Write-Version': '0.1.0',
    },
    body,
  });
  if (!res.ok) throw new Error(`remote write: HTTP ${res.status}: ${(await res.text()).slice(0, 500)}`);
  return body.byteLength;
}

export interface BackfillOptions {
  readonly prometheusUrl: string;
  readonly hosts: number;
  /** What host `index` answers at unix time `at` (SimulatedFleet.exposeAt). */
  readonly exposeAt: (index: number, at: number) => Exposition;
  /** The first scrape time (unix seconds) and the interval between a host's scrapes. */
  readonly from: number;
  readonly intervalS: number;
  readonly job: string;
  readonly log: (line: string) => void;
}

export interface BackfillFigures {
  readonly scrapes: number;
  /** Rounds of every host written; the last ended within an interval of now. */
  readonly rounds: number;
  readonly series: number;
  readonly bytes: number;
  readonly seconds: number;
}

/**
 * Every host's scrapes from `from` until now, a host's at its own offset inside the interval (as
 * Prometheus spreads a fleet's scrapes), written in time order, a round of every host at a time.
 * It ends when a round would reach past now (writing is faster than time passes), so that the
 * scrapes after it leave no hole longer than a late scrape leaves (an interval or two).
 */
export async function backfill(o: BackfillOptions): Promise<BackfillFigures> {
  const t0 = performance.now();
  const HOSTS_PER_REQUEST = 50;
  let scrapes = 0;
  let series = 0;
  let bytes = 0;
  let lastLog = t0;
  let round = 0;
  for (; o.from + (round + 1) * o.intervalS < Date.now() / 1000; round++) {
    for (let first = 0; first < o.hosts; first += HOSTS_PER_REQUEST) {
      const batch: Series[] = [];
      for (let h = first; h < Math.min(o.hosts, first + HOSTS_PER_REQUEST); h++) {
        const at = o.from + round * o.intervalS + (h / o.hosts) * o.intervalS;
        batch.push(...seriesOf(o.exposeAt(h, at), o.job, Math.round(at * 1000)));
        scrapes++;
      }
      bytes += await write(o.prometheusUrl, batch);
      series += batch.length;
    }
    if (performance.now() - lastLog > 15_000) {
      lastLog = performance.now();
      const behind = Date.now() / 1000 - (o.from + round * o.intervalS);
      o.log(`back-fill: ${round + 1} rounds written, ${((lastLog - t0) / 1000).toFixed(0)} s; ${(behind / 60).toFixed(1)} min behind now`);
    }
  }
  return { scrapes, rounds: round, series, bytes, seconds: (performance.now() - t0) / 1000 };
}

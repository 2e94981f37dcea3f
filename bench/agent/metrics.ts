/**
 * /metrics as a scraper sees it, in both formats: bytes per scrape and series (what Prometheus
 * stores: one per text sample line; one per protobuf metric, a native histogram being one).
 */
import protobuf from 'protobufjs';
import { DEFAULT_METRICS_PROTO } from '@blkheat/agent/server/native-histograms';

export interface MetricsFigures {
  readonly textBytes: number;
  readonly textSeries: number;
  readonly textHistogramSeries: number;
  readonly protoBytes: number;
  readonly protoSeries: number;
  readonly protoHistogramSeries: number;
}

const PROTO_ACCEPT = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';

export async function metricsFigures(agentUrl: string): Promise<MetricsFigures> {
  const text = await (await fetch(`${agentUrl}metrics`)).text();
  const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  const proto = Buffer.from(await (await fetch(`${agentUrl}metrics`, { headers: { accept: PROTO_ACCEPT } })).arrayBuffer());
  const MetricFamily = protobuf.loadSync(DEFAULT_METRICS_PROTO).lookupType('io.prometheus.client.MetricFamily');
  const reader = protobuf.Reader.create(proto);
  let protoSeries = 0;
  let protoHistogramSeries = 0;
  while (reader.pos < reader.len) {
    const f = MetricFamily.toObject(MetricFamily.decodeDelimited(reader), { enums: String, arrays: true }) as {
      type: string;
      metric: unknown[];
    };
    protoSeries += f.metric.length;
    if (f.type === 'HISTOGRAM') protoHistogramSeries += f.metric.length;
  }
  return {
    textBytes: Buffer.byteLength(text),
    textSeries: lines.length,
    textHistogramSeries: lines.filter((l) => /^blkheat_(device|queue)_latency_seconds_(bucket|count)\{/.test(l)).length,
    protoBytes: proto.length,
    protoSeries,
    protoHistogramSeries,
  };
}

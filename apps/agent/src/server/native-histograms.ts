/**
 * /metrics in the Prometheus protobuf exposition format (length-delimited
 * io.prometheus.client.MetricFamily messages), for scrapers that ask for it: the latency
 * histograms as Prometheus native histograms at the agent's own bucket schema (2, or 3 with
 * --schema 3), so they are stored and queried at full resolution with no re-binning, in a
 * handful of sparse buckets per series instead of one `le` series per bucket.
 *
 * The messages are the upstream metrics.proto (prometheus/client_model, from Debian's
 * golang-github-prometheus-client-model-dev), encoded by protobufjs. How the dense buckets map:
 *   - underflow (0 .. 2^-20 s) is the zero bucket, zero_threshold = 2^-20 s;
 *   - regular bucket k is native bucket index minIndex + k - 1 (the same bounds exactly);
 *   - overflow (above 2^6 s) has no native counterpart: its I/Os are counted in the first bucket
 *     above the schema's last bound (index maxIndex + 1), so counts stay whole and quantiles
 *     that land there read "just above 64 s";
 *   - no sum is kept in the kernel, so sample_sum is left out (reads as 0): use
 *     histogram_quantile/histogram_count/histogram_fraction, not histogram_sum/avg.
 */
import { existsSync } from 'node:fs';
import protobuf from 'protobufjs';
import { overflowIndex, prometheusIndex, lowerBoundSeconds, type SparseHist } from '@blkheat/shared-types';
import type { Exposition } from './exposition.js';

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';

/** Where Debian's golang-github-prometheus-client-model-dev puts the upstream metrics.proto. */
export const DEFAULT_METRICS_PROTO = '/usr/share/gocode/src/github.com/prometheus/client_model/io/prometheus/client/metrics.proto';

/** True when an Accept header asks for the delimited MetricFamily protobuf format (at any q > 0). */
export function wantsProtobuf(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (type !== 'application/vnd.google.protobuf') return false;
    const p = new Map(params.map((kv) => kv.split('=').map((x) => x.trim()) as [string, string]));
    return p.get('proto') === 'io.prometheus.client.metricfamily' && p.get('encoding') === 'delimited' && p.get('q') !== '0';
  });
}

/** Sparse native buckets: spans (gap-encoded offsets) and count deltas, as metrics.proto has them. */
export interface NativeBuckets {
  /** The zero bucket's width (s): the schema's first regular bucket's lower bound (see the header). */
  readonly zeroThreshold: number;
  readonly zeroCount: number;
  readonly spans: { offset: number; length: number }[];
  readonly deltas: number[];
  readonly count: number;
}

/** A dense sparse histogram of `schema` as native buckets (see the header for the mapping). */
export function toNativeBuckets(hist: SparseHist, schema: Exposition['schema']): NativeBuckets {
  const over = overflowIndex(schema);
  let zeroCount = 0;
  let count = 0;
  const spans: { offset: number; length: number }[] = [];
  const deltas: number[] = [];
  let prevIndex: number | undefined;
  let prevCount = 0;
  for (let k = 0; k < hist.length; k += 2) {
    const dense = hist[k] as number;
    const n = hist[k + 1] as number;
    count += n;
    if (dense === 0) {
      zeroCount += n;
      continue;
    }
    const index = dense >= over ? schema.maxIndex + 1 : (prometheusIndex(dense, schema) as number);
    const last = spans[spans.length - 1];
    if (last && prevIndex !== undefined && index === prevIndex + 1) last.length++;
    else spans.push({ offset: prevIndex === undefined ? index : index - prevIndex - 1, length: 1 });
    deltas.push(n - prevCount);
    prevCount = n;
    prevIndex = index;
  }
  return { zeroThreshold: lowerBoundSeconds(1, schema), zeroCount, spans, deltas, count };
}

let metricFamily: protobuf.Type | undefined;
let loadProblem: string | undefined;

/** The MetricFamily type from metrics.proto, loaded once; undefined (with a reason) when it cannot be. */
export function metricFamilyType(path = process.env.BLKHEAT_METRICS_PROTO ?? DEFAULT_METRICS_PROTO): protobuf.Type | undefined {
  if (metricFamily || loadProblem !== undefined) return metricFamily;
  try {
    if (!existsSync(path)) throw new Error(`${path} is missing (install golang-github-prometheus-client-model-dev)`);
    metricFamily = protobuf.loadSync(path).lookupType('io.prometheus.client.MetricFamily');
  } catch (e) {
    loadProblem = e instanceof Error ? e.message : String(e);
  }
  return metricFamily;
}

/** Why the protobuf format is not offered, if it is not. */
export function protobufProblem(): string | undefined {
  metricFamilyType();
  return loadProblem;
}

const TYPE_CODE = { counter: 0, gauge: 1, histogram: 4 } as const;

/** The exposition as delimited MetricFamily messages; undefined when metrics.proto is unavailable. */
export function renderProtobuf(exposition: Exposition): Buffer | undefined {
  const MetricFamily = metricFamilyType();
  if (!MetricFamily) return undefined;
  const chunks: Uint8Array[] = [];
  for (const f of exposition.families) {
    const label = (labels: Readonly<Record<string, string>>): { name: string; value: string }[] =>
      Object.entries(labels).map(([name, value]) => ({ name, value }));
    const metric = [
      ...f.samples.map((s) => ({ label: label(s.labels), [f.type === 'counter' ? 'counter' : 'gauge']: { value: s.value } })),
      ...f.histograms.map((h) => {
        const b = toNativeBuckets(h.hist, exposition.schema);
        return {
          label: label(h.labels),
          histogram: {
            sampleCount: b.count,
            schema: exposition.schema.scale,
            zeroThreshold: b.zeroThreshold,
            zeroCount: b.zeroCount,
            // A histogram with no buckets still needs a (no-op) span to read as native.
            positiveSpan: b.spans.length > 0 ? b.spans : [{ offset: 0, length: 0 }],
            positiveDelta: b.deltas,
          },
        };
      }),
    ];
    const message = MetricFamily.fromObject({ name: f.name, help: f.help, type: TYPE_CODE[f.type], metric });
    chunks.push(MetricFamily.encodeDelimited(message).finish());
  }
  return Buffer.concat(chunks);
}

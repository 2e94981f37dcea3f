// /metrics in the protobuf exposition: native histograms at the agent's own schema, decoded here
// with the upstream metrics.proto (an independent reading of the bytes), against the same
// window's histograms from the API, bucket for bucket. The text format stays for everyone else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import {
  bucketCount,
  FINE_BUCKET_SCHEMA,
  lowerBoundSeconds,
  mergeFrames,
  overflowIndex,
  prometheusIndex,
  type BucketSchema,
  type Frame,
  type SparseHist,
} from '@blkheat/shared-types';
import { DEFAULT_METRICS_PROTO, PROTOBUF_CONTENT_TYPE, toNativeBuckets, wantsProtobuf } from '../src/server/native-histograms.js';
import { randomFrames } from './history-fixtures.js';
import { nowS, startTestAgent } from './server-fixtures.js';

const PROMETHEUS_ACCEPT =
  'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';

interface DecodedHistogram {
  sampleCount: number;
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  positiveSpan: { offset?: number; length?: number }[];
  positiveDelta: number[];
}
interface DecodedFamily {
  name: string;
  type: string;
  metric: {
    label: { name: string; value: string }[];
    counter?: { value: number };
    gauge?: { value: number };
    histogram?: DecodedHistogram;
  }[];
}

function decodeAll(bytes: Buffer): DecodedFamily[] {
  const MetricFamily = protobuf.loadSync(DEFAULT_METRICS_PROTO).lookupType('io.prometheus.client.MetricFamily');
  const reader = protobuf.Reader.create(bytes);
  const out: DecodedFamily[] = [];
  while (reader.pos < reader.len) {
    const msg = MetricFamily.decodeDelimited(reader);
    out.push(MetricFamily.toObject(msg, { longs: Number, enums: String, defaults: false, arrays: true }) as DecodedFamily);
  }
  return out;
}

/** Native buckets back to a dense histogram of the schema (the inverse of the documented mapping). */
function denseOf(h: DecodedHistogram, schema: BucketSchema): number[] {
  const dense = new Array<number>(bucketCount(schema)).fill(0);
  dense[0] = h.zeroCount ?? 0;
  let index = 0;
  let count = 0;
  let d = 0;
  h.positiveSpan.forEach((span, i) => {
    index = i === 0 ? (span.offset ?? 0) : index + 1 + (span.offset ?? 0);
    for (let j = 0; j < (span.length ?? 0); j++, d++) {
      if (j > 0) index++;
      count += h.positiveDelta[d] as number;
      const k = index > schema.maxIndex ? overflowIndex(schema) : index - schema.minIndex + 1;
      dense[k] = (dense[k] as number) + count;
    }
  });
  return dense;
}

test('native buckets: zero bucket, spans with gaps, deltas, and overflow just above the last bound', () => {
  const schema = FINE_BUCKET_SCHEMA;
  const hist: SparseHist = [0, 4, 10, 3, 11, 5, 15, 1, overflowIndex(schema), 2];
  const b = toNativeBuckets(hist, schema);
  assert.equal(b.zeroCount, 4);
  assert.equal(b.count, 15);
  const i10 = prometheusIndex(10, schema) as number;
  assert.deepEqual(b.spans, [
    { offset: i10, length: 2 },
    { offset: 3, length: 1 },
    { offset: schema.maxIndex + 1 - (i10 + 5) - 1, length: 1 },
  ]);
  assert.deepEqual(b.deltas, [3, 2, -4, 1]);
});

test('the Accept header decides the format: protobuf only when the delimited MetricFamily is asked for', () => {
  assert.equal(wantsProtobuf(PROMETHEUS_ACCEPT), true);
  assert.equal(wantsProtobuf('text/plain;version=0.0.4'), false);
  assert.equal(wantsProtobuf(undefined), false);
  assert.equal(wantsProtobuf('application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text'), false);
  assert.equal(wantsProtobuf('application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0'), false);
});

for (const schema of [undefined, FINE_BUCKET_SCHEMA]) {
  const scale = schema?.scale ?? 2;
  test(`protobuf /metrics at schema ${scale}: native histograms equal the window's histograms; counters and the instance label too`, async (t) => {
    const a = await startTestAgent(t, { instance: 'host-a', ...(schema ? { schema } : {}) });
    const used = schema ?? a.agent.context.schema;
    const start = nowS() - 300;
    // Frames in the running schema: schema-2 fixtures' bucket indexes are valid schema-3 ones too.
    const frames = randomFrames(46, start, 120);
    for (const f of frames) a.collector.emit(f);

    const res = await fetch(`${a.base}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } });
    assert.equal(res.headers.get('content-type'), PROTOBUF_CONTENT_TYPE);
    const families = decodeAll(Buffer.from(await res.arrayBuffer()));
    const byName = new Map(families.map((f) => [f.name, f]));

    const range = (await (await fetch(`${a.base}/api/v1/range?from=${start}&to=${start + 120}&step=1`)).json()) as { frames: Frame[] };
    const total = mergeFrames(range.frames, start, 120, used);
    let checked = 0;
    for (const [name, kind] of [
      ['blkheat_device_latency_seconds', 'd'],
      ['blkheat_queue_latency_seconds', 'q'],
    ] as const) {
      const fam = byName.get(name);
      assert.equal(fam?.type, 'HISTOGRAM', name);
      for (const m of fam?.metric ?? []) {
        const label = new Map(m.label.map((l) => [l.name, l.value]));
        assert.equal(label.get('instance'), 'host-a');
        const h = m.histogram as DecodedHistogram;
        assert.equal(h.schema, scale);
        assert.equal(h.zeroThreshold, lowerBoundSeconds(1, used));
        const series = total.disks.find((d) => d.dev === label.get('dev'))?.cls.find((c) => c.c === label.get('class'));
        assert.ok(series, `${name} ${label.get('dev')} ${label.get('class')} is in the window`);
        const want = new Array<number>(bucketCount(used)).fill(0);
        const sparse = series[kind];
        for (let k = 0; k < sparse.length; k += 2) want[sparse[k] as number] = sparse[k + 1] as number;
        assert.deepEqual(denseOf(h, used), want, `${name}{dev=${label.get('dev')},class=${label.get('class')}}`);
        assert.equal(
          h.sampleCount,
          want.reduce((x, y) => x + y, 0),
        );
        checked++;
      }
    }
    assert.ok(checked > 10, `${checked} native histograms checked`);
    const ios = byName.get('blkheat_ios_total');
    assert.equal(ios?.type, 'COUNTER');
    const ioSum = (ios?.metric ?? []).reduce((n, m) => n + (m.counter?.value ?? 0), 0);
    assert.equal(
      ioSum,
      total.disks.reduce((n, d) => n + d.cls.reduce((x, c) => x + c.n, 0), 0),
      'blkheat_ios_total sums to the window',
    );
    assert.equal(byName.get('blkheat_history_failing')?.metric[0]?.gauge?.value ?? 0, 0);

    // Anyone else still gets the text format, with the instance label.
    const text = await (await fetch(`${a.base}/metrics`)).text();
    assert.match(text, /^blkheat_ios_total\{instance="host-a",/m);
  });
}

test('protobuf /metrics (protocol 4): submit wait and total as native histograms of request-based disks, unseen submissions and causes as counters', async (t) => {
  const a = await startTestAgent(t, { instance: 'host-a' });
  const schema = a.agent.context.schema;
  const start = nowS() - 100;
  const top = overflowIndex(schema);
  const second = (ts: number, w: SparseHist, tt: SparseHist, wu: number, frozen: number): Frame => ({
    ts,
    step: 1,
    disks: [
      { dev: '7:0', cls: [{ c: 'Read', n: 20, d: [40, 20], q: [0, 20], w, t: tt, wu }], causes: { frozen } },
      // A bio-based disk: its total is its device latency; whatever a frame says, no submit or total series.
      { dev: '253:0', cls: [{ c: 'Write', n: 3, d: [50, 3], q: [], w: [10, 3], t: [50, 3] }] },
    ],
  });
  a.collector.emit(second(start, [0, 4, 30, 10, 60, 2], [41, 15, 90, 3], 4, 1));
  a.collector.emit(second(start + 1, [30, 5, 61, 1], [41, 2, top, 1], 14, 2));

  const res = await fetch(`${a.base}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } });
  const byName = new Map(decodeAll(Buffer.from(await res.arrayBuffer())).map((f) => [f.name, f]));
  const dense = (pairs: [number, number][]): number[] => {
    const out = new Array<number>(bucketCount(schema)).fill(0);
    for (const [k, n] of pairs) out[k] = n;
    return out;
  };
  for (const [name, want, count] of [
    [
      'blkheat_submit_latency_seconds',
      dense([
        [0, 4],
        [30, 15],
        [60, 2],
        [61, 1],
      ]),
      22,
    ],
    [
      'blkheat_total_latency_seconds',
      dense([
        [41, 17],
        [90, 3],
        [top, 1],
      ]),
      21,
    ],
  ] as const) {
    const fam = byName.get(name);
    assert.equal(fam?.type, 'HISTOGRAM', name);
    assert.equal(fam?.metric.length, 1, `${name}: the request-based disk's class only`);
    const m = fam?.metric[0];
    const labels = Object.fromEntries((m?.label ?? []).map((l) => [l.name, l.value]));
    assert.deepEqual(labels, { instance: 'host-a', disk: 'loop0', dev: '7:0', class: 'Read' });
    const h = m?.histogram as DecodedHistogram;
    assert.equal(h.sampleCount, count, name);
    assert.equal(h.schema, schema.scale);
    assert.deepEqual(denseOf(h, schema), want, name);
  }
  assert.equal(byName.get('blkheat_submit_latency_seconds')?.metric[0]?.histogram?.zeroCount, 4, 'bucket 0 is the zero bucket');
  const counter = (name: string): [string, number | undefined][] =>
    (byName.get(name)?.metric ?? []).map((m) => [m.label.map((l) => `${l.name}=${l.value}`).join(','), m.counter?.value]);
  assert.deepEqual(counter('blkheat_submit_unseen_ios_total'), [['instance=host-a,disk=loop0,dev=7:0,class=Read', 18]]);
  assert.deepEqual(counter('blkheat_submit_wait_causes_total'), [['instance=host-a,disk=loop0,dev=7:0,cause=frozen', 3]]);
  // Device and queue stay as they were: the bio-based disk keeps its device latency series.
  assert.deepEqual(
    byName.get('blkheat_device_latency_seconds')?.metric.map((m) => m.histogram?.sampleCount),
    [40, 6],
  );
  const text = await (await fetch(`${a.base}/metrics`)).text();
  assert.match(text, /^blkheat_total_latency_seconds_count\{instance="host-a",disk="loop0",dev="7:0",class="Read"\} 21$/m);
  assert.match(text, /^blkheat_submit_latency_seconds_count\{instance="host-a",disk="loop0",dev="7:0",class="Read"\} 22$/m);
  assert.doesNotMatch(text, /^blkheat_(submit|total)_latency_seconds_\w+\{[^}]*dev="253:0"/m);
});

// Offset vs time over the whole visible range: the scatter asks the agent to spread its samples
// (`pick: 'spread'`), copes with an agent that cannot (the oldest, said so), thins a cgroup's
// samples as the agent spreads, and fits its colour scale to the latencies of the points drawn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketOfNs,
  formatLatency,
  type HelloMessage,
  type IoSample,
  lowerBoundSeconds,
  overflowIndex,
  type RangeAnswer,
  type RangeRequest,
  type SamplesAnswer,
  type SamplesRequest,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { seededRandom } from '@blkheat/testkit';
import { scaleLabels, scatterLatencyScale } from '../src/model/offsetScatter.ts';
import { matchSamples, matchSamplesInSteps, type SamplesQuery, spreadSamples } from '../src/model/samples.ts';
import type { AgentSource } from '../src/pipeline/source.ts';
import { dataHarness, LOOP0 } from './fixtures/dataLayer.ts';
import { readSample } from './fixtures/samples.ts';

const T0 = 1_700_000_000;

/** `perSecond` samples a second of loop0 over [T0, T0 + seconds), half of them in cgroup /a. */
function samples(seconds: number, perSecond: number): IoSample[] {
  const r = seededRandom(5);
  const out: IoSample[] = [];
  for (let s = 0; s < seconds; s++)
    for (let i = 0; i < perSecond; i++)
      out.push({
        ts_us: (T0 + s) * 1e6 + Math.floor(r() * 1e6),
        dev: '7:0',
        c: 'Read',
        sector: Math.floor(r() * 1e6) * 8,
        bytes: 4096,
        q_ns: 1000,
        d_ns: Math.floor(50_000 * Math.exp(4 * r())),
        pid: 1,
        comm: 'fio',
        cgroup: 1,
        cg: r() < 0.5 ? '/a' : '/b',
        outlier: false,
      });
  return out.sort((a, b) => a.ts_us - b.ts_us);
}

function hello(protocol: number): HelloMessage {
  return {
    t: 'hello',
    protocol,
    agent: 'test',
    host: { hostname: 'h', kernel: 'k' },
    schema: BUCKET_SCHEMA,
    step: 1,
    disks: [LOOP0],
    now: T0 + 60,
    historyFrom: T0 - 3600,
    tiers: [1, 10, 60],
  };
}

/** A connected agent answering samples requests from `all`: spreading as the agent does, or as one from before `pick`. */
function samplesAgent(protocol: number, all: IoSample[], behaviour: 'spreads' | 'ignores' | 'refuses') {
  const asked: Omit<SamplesRequest, 'id'>[] = [];
  const client = {
    connected: true,
    hello: hello(protocol),
    request: (msg: Omit<SamplesRequest, 'id'> | Omit<RangeRequest, 'id'>): Promise<SamplesAnswer | RangeAnswer> => {
      // The window loader asks for frames too: none here.
      if (msg.t === 'range') return Promise.resolve({ t: 'range', id: 0, from: msg.from, to: msg.to, step: msg.step ?? 1, frames: [] });
      asked.push(msg);
      if (msg.pick !== undefined && behaviour === 'refuses') return Promise.reject(new Error('Unrecognized key: "pick"'));
      const pick = behaviour === 'spreads' ? msg.pick : undefined;
      const q = {
        ...msg,
        kind: msg.kind ?? 'device',
        minNs: msg.minNs ?? 0,
        maxNs: msg.maxNs ?? Number.MAX_SAFE_INTEGER,
        disks: msg.disks ?? [],
      };
      const r = matchSamples(all, { ...q, ...(pick ? { pick } : { pick: 'first' }) }, msg.limit ?? 1000);
      return Promise.resolve({
        t: 'samples',
        id: asked.length,
        samples: r.samples,
        truncated: r.truncated,
        ...(pick ? { pick, matched: r.matched } : {}),
      });
    },
  } as AgentSource;
  return { client, asked };
}

const request = { dev: '7:0', from: T0, to: T0 + 60, kind: 'device', classes: [] } as const;
/** The scatter's requests (every latency) among the samples requests the data layer made (other parts ask for some too). */
const scatterAsks = (asked: readonly Omit<SamplesRequest, 'id'>[]): Omit<SamplesRequest, 'id'>[] =>
  asked.filter((m) => m.minNs === 0 && m.maxNs === Number.MAX_SAFE_INTEGER);
const tenths = (rows: readonly IoSample[]): number[] => {
  const n = new Array<number>(10).fill(0);
  for (const s of rows) {
    const i = Math.floor((s.ts_us / 1e6 - T0) / 6);
    n[i] = (n[i] ?? 0) + 1;
  }
  return n;
};

test('the scatter asks for a spread: 2,000 points over the whole minute, the count of all that matched, the slowest in', async () => {
  const all = samples(60, 300);
  const agent = samplesAgent(4, all, 'spreads');
  const h = dataHarness({ disks: [LOOP0], client: agent.client });
  await h.dm.loadOffsetSamples(request);
  const o = h.store.getState().offset;
  assert.ok(o && o.status === 'done');
  assert.equal(scatterAsks(agent.asked)[0]?.pick, 'spread');
  assert.equal(o.pick, 'spread');
  assert.equal(o.truncated, true);
  assert.equal(o.matched, all.length);
  assert.equal(o.rows.length, 2000);
  assert.ok(
    tenths(o.rows).every((n) => n > 100),
    `every tenth of the window has points: ${tenths(o.rows).join(', ')}`,
  );
  const slowest = all.reduce((a, b) => (b.d_ns > a.d_ns ? b : a));
  assert.ok(o.rows.includes(slowest), 'the slowest sample of the range is drawn');
});

test('an agent that ignores pick: the oldest 2,000, said so (pick first); one that refuses it: asked again without, and not asked with it again', async () => {
  const all = samples(60, 300);
  const ignoring = samplesAgent(4, all, 'ignores');
  const h = dataHarness({ disks: [LOOP0], client: ignoring.client });
  await h.dm.loadOffsetSamples(request);
  const o = h.store.getState().offset;
  assert.ok(o && o.status === 'done');
  assert.equal(o.pick, 'first');
  assert.equal(o.truncated, true);
  assert.deepEqual(o.rows, all.slice(0, 2000));
  assert.equal(o.matched, undefined);

  const refusing = samplesAgent(4, all, 'refuses');
  const r = dataHarness({ disks: [LOOP0], client: refusing.client });
  await r.dm.loadOffsetSamples(request);
  const ro = r.store.getState().offset;
  assert.ok(ro && ro.status === 'done', ro?.error);
  assert.equal(ro.pick, 'first');
  assert.deepEqual(ro.rows, all.slice(0, 2000));
  assert.deepEqual(
    scatterAsks(refusing.asked).map((m) => m.pick),
    ['spread', undefined],
  );
  await r.dm.loadOffsetSamples({ ...request, from: T0 + 1, to: T0 + 61 });
  assert.deepEqual(
    scatterAsks(refusing.asked).map((m) => m.pick),
    ['spread', undefined, undefined],
    'the refusal is remembered for this connection',
  );

  // An agent before protocol 4 refuses unknown fields: never asked with pick.
  const old = samplesAgent(3, all, 'refuses');
  const p3 = dataHarness({ disks: [LOOP0], client: old.client });
  await p3.dm.loadOffsetSamples(request);
  assert.deepEqual(
    scatterAsks(old.asked).map((m) => m.pick),
    [undefined],
  );
  assert.equal(p3.store.getState().offset?.pick, 'first');
});

test('a cgroup filter (applied here): the agent’s spread narrowed to the cgroup, thinned to the bound as the agent spreads', async () => {
  const all = samples(60, 300);
  const agent = samplesAgent(4, all, 'spreads');
  const h = dataHarness({ disks: [LOOP0], client: agent.client });
  await h.dm.loadOffsetSamples({ ...request, cgroup: '/a' });
  const o = h.store.getState().offset;
  assert.ok(o && o.status === 'done');
  assert.equal(scatterAsks(agent.asked)[0]?.limit, 5000, 'as many as an answer carries, to filter here');
  assert.ok(o.rows.every((s) => s.cg === '/a'));
  assert.equal(o.rows.length, 2000);
  assert.equal(o.pick, 'spread');
  assert.equal(o.matched, undefined, 'the agent’s count is of every cgroup');
  assert.ok(tenths(o.rows).every((n) => n > 100));
  const agentRows = matchSamples(
    all,
    { from: T0, to: T0 + 60, kind: 'device', minNs: 0, maxNs: Number.MAX_SAFE_INTEGER, disks: ['7:0'], pick: 'spread' },
    5000,
  );
  const inA = agentRows.samples.filter((s) => s.cg === '/a');
  assert.deepEqual(o.rows, spreadSamples(inA, request, 2000).items);
});

test('a snapshot’s samples are spread by the same rule as the agent’s', () => {
  const all = samples(60, 300);
  const q = { from: T0, to: T0 + 60, kind: 'device', minNs: 0, maxNs: Number.MAX_SAFE_INTEGER, disks: ['7:0'], pick: 'spread' } as const;
  const r = matchSamples(all, q, 2000);
  assert.equal(r.samples.length, 2000);
  assert.equal(r.matched, all.length);
  assert.deepEqual(r.samples, spreadSamples(all, q, 2000).items);
  assert.deepEqual(matchSamples(all, { ...q, pick: 'first' }, 2000).samples, all.slice(0, 2000));
});

test('matched a step at a time (a big snapshot, a task at a time), the answer is the one matched at once, for any step', () => {
  const all = samples(60, 300);
  const base = { from: T0 + 5, to: T0 + 50, kind: 'device', minNs: 200_000, maxNs: Number.MAX_SAFE_INTEGER, disks: ['7:0'] } as const;
  const queries: SamplesQuery[] = [
    { ...base, pick: 'spread' },
    { ...base, pick: 'first' },
    { ...base, pick: 'spread', cgroup: '/a' },
  ];
  for (const q of queries) {
    for (const limit of [2000, 50_000, Infinity]) {
      const atOnce = matchSamples(all, q, limit);
      for (const step of [1, 7, 1000, 17_999]) {
        const steps = matchSamplesInSteps(all, q, limit, step);
        let yields = 0;
        let r = steps.next();
        for (; !r.done; r = steps.next()) yields++;
        assert.deepEqual(r.value, atOnce, `${q.pick}${q.cgroup ?? ''}, limit ${limit}, step ${step}`);
        // Stepping stops early only where the answer is complete: the first `limit` of a 'first' pick.
        const looked = q.pick === 'first' && atOnce.truncated ? all.indexOf(atOnce.samples.at(-1) as IoSample) + 1 : all.length;
        const passes = q.pick === 'spread' && atOnce.truncated ? all.length + 2 * (atOnce.matched ?? 0) : looked;
        assert.ok(Math.abs(yields - Math.floor(passes / step)) <= 2, `yields ${yields} for ${passes} looked at, step ${step}`);
      }
    }
  }
});

test('the colour scale is fitted to the points drawn: its top is the upper edge of the slowest point’s bucket', () => {
  const s = (tsS: number, dNs: number, sector: number | null = 8): IoSample => readSample(tsS, sector, dNs);
  const rows = [
    s(T0 + 1, 2_000_000),
    s(T0 + 2, 416_000_000),
    s(T0 + 3, 150_000),
    // Not drawn: a flush (no sector) and one outside the visible range.
    s(T0 + 4, 9_000_000_000, null),
    s(T0 + 70, 20_000_000_000),
  ];
  const scale = scatterLatencyScale(rows, 'device', BUCKET_SCHEMA, T0, T0 + 60);
  assert.ok(scale);
  assert.equal(scale.maxNs, 416_000_000);
  assert.equal(scale.bucketHi, bucketOfNs(416_000_000, BUCKET_SCHEMA));
  assert.equal(scale.bucketLo, bucketOfNs(150_000, BUCKET_SCHEMA));
  assert.deepEqual([scale.uLo, scale.uHi], [scale.bucketLo, scale.bucketHi + 1]);
  const top = upperBoundSeconds(scale.bucketHi, BUCKET_SCHEMA);
  assert.ok(top >= 0.416 && lowerBoundSeconds(scale.bucketHi, BUCKET_SCHEMA) < 0.416, `the top (${top} s) is within one bucket of 416 ms`);
  assert.deepEqual(scaleLabels(scale, BUCKET_SCHEMA), [
    formatLatency(lowerBoundSeconds(scale.bucketLo, BUCKET_SCHEMA)),
    formatLatency(top),
  ]);
  assert.equal(scatterLatencyScale([rows[3] as IoSample], 'device', BUCKET_SCHEMA, T0, T0 + 60), undefined, 'nothing drawn, no scale');
  assert.equal(scatterLatencyScale(rows, 'queue', BUCKET_SCHEMA, T0, T0 + 60), undefined, 'no point tells its queue latency');
  // Past the last regular bucket: "> 64 s", not a made-up edge.
  const over = scatterLatencyScale([s(T0 + 1, 100e9)], 'device', BUCKET_SCHEMA, T0, T0 + 60);
  assert.ok(over);
  assert.equal(over.bucketHi, overflowIndex(BUCKET_SCHEMA));
  assert.match(scaleLabels(over, BUCKET_SCHEMA)[1], /^> /);
});

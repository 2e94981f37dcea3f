// Fleet mode, no kernel: `blkheat fleet` answers the dashboard's protocol from a real Prometheus
// (Debian's 2.42, native histograms) that scrapes three fake exporters serving the agent's own
// protobuf exposition of synthetic frames with known counts. Checked against those counts: the
// disks (host × disk, with links to each host's agent), range answers at the scrape interval
// (exact, bucket for bucket), coarser steps, increase() for long ranges (within the stated
// extrapolation bound), live frames on the WebSocket, and clear errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addSparseInto, denseHist, mergeFrames, type DiskInfo, type Frame, type HelloMessage } from '@blkheat/shared-types';
import { prometheusUnavailable, WsTestClient } from '@blkheat/testkit';
import { startFleet } from '../src/fleet/service.js';
import { BUCKET_SCHEMA } from '@blkheat/shared-types';
import { eventually, FLEET_HOSTS, startFleetRig, WEB_ROOT, B_5MS } from './lib/fleet-rig.js';

const missing = prometheusUnavailable();

interface RangeAnswer {
  from: number;
  to: number;
  step: number;
  frames: Frame[];
}

async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}

/** A disk's classes in a frame, as {c, n, d, q} (canonical order: merged frames sort classes by name). */
function classesOf(frame: Frame, dev: string): { c: string; n: number; d: readonly number[]; q: readonly number[] }[] {
  return (frame.disks.find((d) => d.dev === dev)?.cls ?? []).map((c) => ({ c: c.c, n: c.n, d: c.d, q: c.q }));
}

/** Σ of one fleet disk's class `c` counts per dense bucket, over frames. */
function classCounts(frames: readonly Frame[], dev: string, c: string): number[] {
  const out = denseHist(BUCKET_SCHEMA);
  for (const f of frames) for (const d of f.disks) if (d.dev === dev) for (const cls of d.cls) if (cls.c === c) addSparseInto(out, cls.d);
  return [...out];
}

test(
  'fleet mode: a real Prometheus over three fake agents; ranges equal the synthetic counts',
  { timeout: 120_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t) => {
    const rig = await startFleetRig(t);
    const base = rig.fleet.url;

    // Disks: one per host × disk, each linked to its host's agent (the exporter Prometheus scrapes).
    const disks = await eventually('three linked disks', async () => {
      const r = await getJson<{ disks: DiskInfo[] }>(`${base}api/v1/disks`);
      return r.body.disks.length === 3 && r.body.disks.every((d) => d.link) ? r.body.disks : undefined;
    });
    for (const [i, h] of FLEET_HOSTS.entries()) {
      const d = disks.find((x) => x.host === h.instance);
      assert.ok(d, `a row for ${h.instance}`);
      assert.equal(d.name, `${h.instance}/${h.disk}`);
      assert.equal(d.link, `http://127.0.0.1:${rig.exporters[i]?.port}/`, `${h.instance} links to its own agent`);
    }
    const devOf = (instance: string): string => disks.find((d) => d.host === instance)?.dev ?? '?';

    // Ten seconds on 5 s column edges, scraped by every host and then some.
    const start = Math.ceil(Date.now() / 1000 / 5) * 5;
    const from = start;
    const to = start + 10;
    await eventually('the range scraped', async () => ((await rig.prom.lastScrapes()) ?? 0) > to + 3 || undefined);

    // Step 1 (the scrape interval): every column is the agent's own second, bucket for bucket.
    const r1 = await getJson<RangeAnswer>(`${base}api/v1/range?from=${from}&to=${to}&step=1`);
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.equal(r1.body.step, 1);
    assert.equal(r1.body.frames.length, 10, 'one column per second');
    const attributed = new Map(await Promise.all(FLEET_HOSTS.map(async (h) => [h.instance, await rig.attributed(h.instance)] as const)));
    const expect = (instance: string, from: number, to: number): Frame => {
      const groups = [...(attributed.get(instance)?.bySecond ?? new Map<number, Frame>()).entries()].filter(
        ([ts]) => ts >= from && ts < to,
      );
      return mergeFrames(
        groups.map(([, f]) => f),
        from,
        to - from,
        BUCKET_SCHEMA,
      );
    };
    let exact = 0;
    for (const f of r1.body.frames) {
      for (const h of FLEET_HOSTS) {
        assert.deepEqual(
          classesOf(f, devOf(h.instance)),
          classesOf(expect(h.instance, f.ts, f.ts + 1), h.dev),
          `${h.instance} at ${f.ts}: the fleet's column equals what the agent counted`,
        );
        exact += h.classes.length;
      }
    }
    const merged = [...attributed.values()].reduce((a, x) => a + x.merged, 0);
    t.diagnostic(
      `step 1: ${exact} host × class × second cells equal the synthetic counts exactly (${merged} late scrapes carried two seconds)`,
    );

    // A finer step than the scrape interval is answered at it; the answer says so.
    const r0 = await getJson<RangeAnswer>(`${base}api/v1/range?from=${from}&to=${to}`);
    assert.equal(r0.body.step, 1);

    // Step 5: each column is the sum of its 5 seconds, bucket for bucket.
    const r5 = await getJson<RangeAnswer>(`${base}api/v1/range?from=${from}&to=${to}&step=5`);
    assert.equal(r5.body.step, 5);
    assert.deepEqual(
      r5.body.frames.map((f) => f.ts),
      [from, from + 5],
    );
    for (const f of r5.body.frames) {
      for (const h of FLEET_HOSTS) {
        const want = classesOf(expect(h.instance, f.ts, f.ts + 5), h.dev);
        assert.deepEqual(classesOf(f, devOf(h.instance)), want, `${h.instance} at ${f.ts}, step 5`);
        assert.equal(
          want.reduce((a, c) => a + c.n, 0),
          h.classes.reduce((a, c) => a + 5 * Object.values(c.d).reduce((x, y) => x + y, 0), 0),
        );
      }
    }

    // The delayed host's reads are all in the 4–8 ms rows.
    const slow = classCounts(r1.body.frames, devOf('host-c'), 'Read');
    const slowN = classesOf(expect('host-c', from, to), '252:16')[0]?.n;
    assert.ok(slowN !== undefined && slowN >= 12 * 9, `host-c did ${slowN} reads`);
    assert.equal(slow[B_5MS], slowN);
    assert.equal(
      slow.reduce((a, b) => a + b, 0),
      slowN,
    );

    // A long range goes through increase() per step: Prometheus extrapolates each window's first
    // and last scrape to its edges, and a second is scraped up to one interval after it ends.
    // Bound: within 2 s worth of counts (one scrape interval at each edge) of the exact sum.
    // Columns whose window Prometheus saw whole: from two seconds after host-a's first stored
    // scrape difference (before, increase() has no earlier sample to start from), to three
    // seconds before now (the last scrapes). Wait until two such columns have passed: the wait
    // for the step-1 range alone leaves only one when the data began just before a 5 s edge.
    const firstSecond = Math.min(...(await rig.attributed('host-a')).bySecond.keys());
    const firstInside = Math.ceil((firstSecond + 2) / 5) * 5;
    await eventually('two whole increase() columns', async () => Date.now() / 1000 >= firstInside + 2 * 5 + 3 || undefined);
    const now = Math.floor(Date.now() / 1000);
    const rl = await getJson<RangeAnswer>(`${base}api/v1/range?from=${now - 7200}&to=${now}&step=5`);
    assert.equal(rl.status, 200);
    assert.equal(rl.body.step, 5);
    const seenA = (await rig.attributed('host-a')).bySecond;
    const inside = rl.body.frames.filter((f) => f.ts >= firstSecond + 2 && f.ts + 5 <= now - 3);
    assert.ok(inside.length >= 2, `increase() columns inside the data: ${inside.length}`);
    const checked: string[] = [];
    for (const f of inside) {
      const n = f.disks.find((d) => d.dev === devOf('host-a'))?.cls.find((c) => c.c === 'Read')?.n ?? 0;
      const exactN = [...seenA.entries()]
        .filter(([ts]) => ts >= f.ts && ts < f.ts + 5)
        .reduce((a, [, x]) => a + (x.disks[0]?.cls[0]?.n ?? 0), 0);
      assert.ok(Math.abs(n - exactN) <= 2 * 43, `increase() column ${f.ts}: ${n} vs exact ${exactN}, bound ±${2 * 43}`);
      checked.push(`${n} vs ${exactN}`);
    }
    t.diagnostic(`increase() at step 5, host-a Read, fleet vs exact: ${checked.join(', ')}`);

    // The WebSocket: hello says it is a fleet view; live frames are the hosts' seconds.
    const ws = await WsTestClient.connect(`${base.replace('http', 'ws')}api/v1/stream`);
    t.after(() => ws.destroy());
    const hello = await ws.nextJson<HelloMessage>((m) => m.t === 'hello');
    assert.equal(hello.fleet?.prometheus, rig.prom.url);
    assert.equal(hello.fleet?.scrapeInterval, 1);
    assert.equal(hello.disks.length, 3);
    ws.sendJson({ t: 'subscribe' });
    const live = await ws.nextJson<{ t: string; frame: Frame }>((m) => m.t === 'frame' && m.frame.disks.length === 3, 15_000);
    const attributedNow = new Map(await Promise.all(FLEET_HOSTS.map(async (h) => [h.instance, await rig.attributed(h.instance)] as const)));
    for (const h of FLEET_HOSTS) {
      const want = attributedNow.get(h.instance)?.bySecond.get(live.frame.ts)?.disks[0];
      const got = live.frame.disks.find((d) => d.dev === devOf(h.instance));
      assert.deepEqual(
        got?.cls.map((c) => [c.c, c.n, c.d]),
        want?.cls.map((c) => [c.c, c.n, c.d]),
        `live second ${live.frame.ts} of ${h.instance}`,
      );
    }
    ws.sendJson({ t: 'range', id: 7, from, to, step: 1 });
    const wr = await ws.nextJson<RangeAnswer & { t: string; id: number }>((m) => m.t === 'range');
    assert.equal(wr.id, 7);
    assert.deepEqual(wr.frames, r1.body.frames, 'the WebSocket range answer is the REST one');

    const health = await getJson<{ status: string }>(`${base}healthz`);
    assert.equal(health.status, 200);
  },
);

test('fleet mode: Prometheus unreachable is said plainly, and the server keeps serving', { timeout: 30_000 }, async (t) => {
  const lines: string[] = [];
  const fleet = await startFleet(
    {
      prometheus: 'http://127.0.0.1:9',
      host: '127.0.0.1',
      port: 0,
      token: undefined,
      allowOrigins: [],
      schema: BUCKET_SCHEMA,
      webRoot: WEB_ROOT,
    },
    (l) => lines.push(l),
  );
  t.after(() => fleet.stop());
  const health = await eventually('a degraded /healthz', async () => {
    const r = await getJson<{ status: string; reasons?: string[] }>(`${fleet.url}healthz`);
    return r.status === 503 && r.body.reasons?.[0]?.includes('unreachable') ? r.body : undefined;
  });
  assert.match(health.reasons?.[0] ?? '', /Prometheus at http:\/\/127\.0\.0\.1:9 is unreachable/);
  assert.ok(
    lines.some((l) => l.includes('is unreachable') && l.includes('retrying')),
    lines.join('\n'),
  );
  const range = await getJson<{ error: string }>(`${fleet.url}api/v1/range?from=1795000000&to=1795000060`);
  assert.equal(range.status, 502);
  assert.match(range.body.error, /unreachable/);
  const page = await fetch(fleet.url);
  assert.equal(page.status, 200, 'the dashboard is served regardless');
  // The page is told too: the hello's status names the problem.
  const ws = await WsTestClient.connect(`${fleet.url.replace('http', 'ws')}api/v1/stream`);
  t.after(() => ws.destroy());
  const hello = await ws.nextJson<HelloMessage>((m) => m.t === 'hello');
  assert.match(hello.status?.fleetProblem?.message ?? '', /Prometheus at http:\/\/127\.0\.0\.1:9 is unreachable/);
});

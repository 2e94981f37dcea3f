import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { checkHistogram, parsePrometheusText, WsHandshakeError, WsTestClient } from '@blkheat/testkit';
import {
  bucketCount,
  coarsenFrames,
  filterFrame,
  mergeFrames,
  overflowIndex,
  parseSnapshot,
  samplePhaseNs,
  SNAPSHOT_VERSION,
  upperBoundSeconds,
  type DiskFrame,
  type Frame,
  type HelloMessage,
  type IoSample,
} from '@blkheat/shared-types';
import { BIO_DEV, randomFrames, randomSample, rng } from './history-fixtures.js';
import { nowS, startTestAgent } from './server-fixtures.js';

/** Raw HTTP/1.1 GET with the path sent exactly as given (fetch and URL would normalize "../"). */
function rawGet(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; head: string; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const s = netConnect(Number(u.port), u.hostname, () => {
      const extra = Object.entries({ Host: u.host, Connection: 'close', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      s.write(`GET ${path} HTTP/1.1\r\n${extra}\r\n`);
    });
    let data = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (data += d));
    s.on('end', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body });
    });
    s.on('error', reject);
  });
}

test('REST: disks, range and samples answer like the WebSocket does', async (t) => {
  const a = await startTestAgent(t);
  const start = nowS() - 600 - (nowS() % 60);
  const frames = randomFrames(41, start, 600);
  for (const f of frames) a.collector.emit(f);
  const r = rng(42);
  const samples = Array.from({ length: 100 }, (_, i) => randomSample(r, (start + 500) * 1e6 + i * 1000));
  a.collector.emitSamples(samples);

  const disks = (await (await fetch(`${a.base}/api/v1/disks`)).json()) as { disks: { dev: string; name: string }[] };
  assert.equal(disks.disks.length, 4);

  const range = await fetch(`${a.base}/api/v1/range?from=${start}&to=${start + 600}&step=10&disk=loop0&disk=8:0&class=Read`);
  assert.equal(range.status, 200);
  assert.equal(range.headers.get('cache-control'), 'no-store');
  const body = (await range.json()) as { from: number; to: number; step: number; frames: Frame[] };
  assert.equal(body.step, 10);
  const filter = { disks: ['7:0', '8:0'], classes: ['Read'] };
  assert.deepEqual(
    body.frames,
    coarsenFrames(frames, 10).map((f) => filterFrame(f, filter)),
  );

  const s = await fetch(`${a.base}/api/v1/samples?from=${start + 500}&to=${start + 501}&kind=device&minNs=0&maxNs=10000000&limit=20`);
  const sb = (await s.json()) as { samples: unknown[]; truncated: boolean };
  const want = samples.filter((x) => x.d_ns <= 10_000_000);
  assert.deepEqual(sb.samples, want.slice(0, 20));
  assert.equal(sb.truncated, want.length > 20);
  // Added in 4: the submit wait and total phases (samplePhaseNs's rule, the same on both sides).
  for (const kind of ['submit', 'total'] as const) {
    const res = await fetch(`${a.base}/api/v1/samples?from=${start + 500}&to=${start + 501}&kind=${kind}&minNs=1000000&maxNs=20000000`);
    const got = (await res.json()) as { samples: IoSample[] };
    const match = samples.filter((x) => {
      const v = samplePhaseNs(x, kind);
      return v !== null && v >= 1_000_000 && v <= 20_000_000;
    });
    assert.ok(match.length > 10 && match.length < samples.length, `${kind}: ${match.length} of ${samples.length} match`);
    assert.deepEqual(got.samples, match, kind);
  }
});

test('REST: every bad parameter is a 400 naming it', async (t) => {
  const a = await startTestAgent(t);
  const now = nowS();
  const cases: [string, string][] = [
    [`/api/v1/range?to=${now}`, 'from'],
    [`/api/v1/range?from=abc&to=${now}`, 'from'],
    [`/api/v1/range?from=${now}&to=${now - 10}`, 'to'],
    [`/api/v1/range?from=${now - 10}&to=${now}&step=0`, 'step'],
    [`/api/v1/range?from=${now - 10}&to=${now}&from=${now - 5}`, 'from'],
    [`/api/v1/range?from=${now - 10}&to=${now}&bogus=1`, 'bogus'],
    [`/api/v1/range?from=${now - 10}&to=${now}&disk=nosuchdisk`, 'disk'],
    [`/api/v1/range?from=${now - 10}&to=${now}&class=Bad%20Class`, 'class'],
    [`/api/v1/samples?from=${now - 10}&to=${now}&kind=sideways`, 'kind'],
    [`/api/v1/samples?from=${now - 10}&to=${now}&minNs=-1`, 'minNs'],
    [`/api/v1/samples?from=${now - 10}&to=${now}&minNs=10&maxNs=5`, 'maxNs'],
    [`/api/v1/samples?from=${now - 10}&to=${now}&limit=999999`, 'limit'],
    [`/api/v1/snapshot?from=${now - 10}`, 'to'],
    ['/api/v1/disks?x=1', 'x'],
    [`/api/v1/range?from=${now - 10}&to=${now}&__proto__=1`, '__proto__'],
    [`/api/v1/range?from=${now - 10}&to=${now}&constructor=1`, 'constructor'],
    ['/metrics?x=1', 'x'],
  ];
  for (const [path, field] of cases) {
    const res = await fetch(`${a.base}${path}`);
    const body = (await res.json()) as { error: string; field?: string };
    assert.equal(res.status, 400, path);
    assert.equal(body.field, field, `${path}: ${body.error}`);
    assert.ok(body.error.length > 0);
  }
  const nf = await fetch(`${a.base}/api/v1/nothing`);
  assert.equal(nf.status, 404);
  // The fleet's ranked table is a fleet server's only: an agent says so, whatever the query.
  const ranking = await fetch(`${a.base}/api/v1/fleet/ranking?from=${now - 10}&to=${now}`);
  assert.equal(ranking.status, 404);
  assert.match(((await ranking.json()) as { error: string }).error, /only a fleet server/);
  const post = await fetch(`${a.base}/api/v1/disks`, { method: 'POST' });
  assert.equal(post.status, 405);
});

test('snapshot: a valid snapshot (current version) of the range, as an attachment', async (t) => {
  const a = await startTestAgent(t);
  const start = nowS() - 120;
  const frames = randomFrames(43, start, 100, { idle: 0.3, cgroups: true, submit: true });
  for (const f of frames) a.collector.emit(f);
  const r = rng(44);
  const samples = Array.from({ length: 50 }, (_, i) => randomSample(r, (start + 10) * 1e6 + i * 100_000));
  a.collector.emitSamples(samples);
  const res = await fetch(`${a.base}/api/v1/snapshot?from=${start}&to=${start + 100}`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="blkheat-.*\.json"$/);
  const parsed = parseSnapshot(await res.text());
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
  const snap = parsed.value;
  assert.deepEqual(snap.range, { from: start, to: start + 100, step: 1 });
  assert.deepEqual(
    snap.frames,
    frames.filter((f) => f.disks.length > 0),
    'steps without I/O are left out',
  );
  assert.equal(snap.version, SNAPSHOT_VERSION);
  assert.deepEqual(snap.samples, samples, 'samples as emitted, w_ns absent, null or known included');
  assert.equal(snap.disks.length, 4);
});

test('/metrics parses strictly and its buckets equal the histograms of the same window', async (t) => {
  const a = await startTestAgent(t);
  const start = nowS() - 300;
  const frames = randomFrames(45, start, 200, { cgroups: true, submit: true });
  for (const f of frames) a.collector.emit(f);
  const res = await fetch(`${a.base}/metrics`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusText(await res.text());
  const from = families.get('blkheat_histogram_window_start_seconds')?.samples[0]?.value;
  const to = families.get('blkheat_histogram_window_end_seconds')?.samples[0]?.value;
  assert.equal(from, start);
  assert.equal(to, start + 200);

  // The same window, from the API, summed by brute force per bucket.
  const range = (await (await fetch(`${a.base}/api/v1/range?from=${from}&to=${to}&step=1`)).json()) as { frames: Frame[] };
  const total = mergeFrames(range.frames, start, 200);
  const bounds = Array.from({ length: overflowIndex() }, (_, i) => upperBoundSeconds(i));
  for (const [metric, kind] of [
    ['blkheat_device_latency_seconds', 'd'],
    ['blkheat_queue_latency_seconds', 'q'],
    ['blkheat_submit_latency_seconds', 'w'],
    ['blkheat_total_latency_seconds', 't'],
  ] as const) {
    const fam = families.get(metric);
    assert.equal(fam?.type, 'histogram');
    const series = checkHistogram(fam);
    let checked = 0;
    for (const d of total.disks) {
      for (const c of d.cls) {
        const s = [...series.values()].find((x) => x.labels.dev === d.dev && x.labels.class === c.c);
        if (kind !== 'd' && d.dev === BIO_DEV) {
          assert.equal(s, undefined, `no ${metric} for bio-based disks`);
          continue;
        }
        assert.ok(s, `${metric} ${d.dev} ${c.c}`);
        const dense = new Array<number>(bucketCount()).fill(0);
        const h = c[kind] ?? [];
        for (let k = 0; k < h.length; k += 2) dense[h[k] as number] = h[k + 1] as number;
        let cum = 0;
        assert.equal(s.buckets.length, bounds.length + 1);
        bounds.forEach((b, i) => {
          cum += dense[i] as number;
          assert.equal(s.buckets[i]?.[0], b);
          assert.equal(s.buckets[i]?.[1], cum, `${metric}{dev=${d.dev},class=${c.c},le=${b}}`);
        });
        cum += dense[overflowIndex()] as number;
        assert.equal(s.count, cum);
        checked++;
      }
    }
    assert.ok(checked > 5);
  }
  const n = families.get('blkheat_ios_total');
  assert.equal(
    n?.samples.reduce((x, s) => x + s.value, 0),
    frames.reduce((x, f) => x + f.disks.reduce((y, d) => y + d.cls.reduce((z, c) => z + c.n, 0), 0), 0),
  );
  // Protocol 4: unseen submissions per class, causes per disk, and the newest second's waiting bios.
  const sumOf = (name: string): number => families.get(name)?.samples.reduce((x, s) => x + s.value, 0) ?? NaN;
  const wu = total.disks.reduce((x, d) => x + d.cls.reduce((y, c) => y + (c.wu ?? 0), 0), 0);
  assert.ok(wu > 0);
  assert.equal(sumOf('blkheat_submit_unseen_ios_total'), wu);
  assert.equal(
    sumOf('blkheat_submit_wait_causes_total'),
    total.disks.reduce((x, d) => x + (d.causes?.frozen ?? 0), 0),
  );
  assert.ok(sumOf('blkheat_submit_wait_causes_total') > 0);
  // The disk marks (wbt added in 4, tags_full in 5), summed since start.
  for (const [metric, mark] of [
    ['blkheat_wbt_limited_windows_total', (d: DiskFrame) => d.wbt],
    ['blkheat_tags_full_seconds_total', (d: DiskFrame) => d.tags_full],
  ] as const) {
    const want = total.disks.reduce((x, d) => x + (mark(d) ?? 0), 0);
    assert.ok(want > 0, `the fixture has no ${metric}`);
    assert.equal(sumOf(metric), want, metric);
  }
  const newest = frames.at(-1) as Frame;
  for (const d of newest.disks) {
    const gauge = (name: string): number | undefined => families.get(name)?.samples.find((s) => s.labels.dev === d.dev)?.value;
    // Fixture frames carry in flight only for request-based disks, whose submit wait is timed; 0 when none waited.
    assert.equal(gauge('blkheat_inflight_waiting_bios'), d.inflight ? (d.inflight.waiting ?? 0) : undefined, d.dev);
    assert.equal(gauge('blkheat_inflight_waiting_oldest_seconds'), d.inflight ? (d.inflight.oldest_wait_ns ?? 0) / 1e9 : undefined, d.dev);
    assert.equal(gauge('blkheat_queue_frozen'), d.inflight ? (d.inflight.frozen ? 1 : 0) : undefined, d.dev);
  }
  // Per cgroup: the window's counts by cgroup path, exactly.
  const byCgroup = new Map<string, number>();
  for (const s of families.get('blkheat_cgroup_ios_total')?.samples ?? [])
    byCgroup.set(`${s.labels.dev} ${s.labels.cgroup}`, (byCgroup.get(`${s.labels.dev} ${s.labels.cgroup}`) ?? 0) + s.value);
  const expected = new Map<string, number>();
  for (const d of total.disks) for (const g of d.cg ?? []) expected.set(`${d.dev} ${g.g}`, g.n);
  assert.ok(expected.size >= 8, `${expected.size} disk x cgroup series`);
  assert.deepEqual(byCgroup, expected);
  for (const name of [
    'blkheat_bpf_ns_per_io',
    'blkheat_clients',
    'blkheat_frame_lag_seconds',
    'blkheat_history_bytes',
    'blkheat_samples_dropped_total',
  ]) {
    assert.ok(families.has(name), name);
  }
});

test('token: required on HTTP (401) and on the WebSocket upgrade, accepted by header or ?token=', async (t) => {
  const token = 'correct-horse-battery-staple';
  const a = await startTestAgent(t, { token });
  const ws = a.streamUrl;
  for (const path of ['/api/v1/disks', '/metrics']) {
    assert.equal((await fetch(`${a.base}${path}`)).status, 401, path);
    assert.equal((await fetch(`${a.base}${path}?token=wrong-token-wrong-token`)).status, 401, path);
    assert.equal((await fetch(`${a.base}${path}`, { headers: { Authorization: 'Bearer nope' } })).status, 401, path);
    assert.equal((await fetch(`${a.base}${path}?token=${token}`)).status, 200, path);
    assert.equal((await fetch(`${a.base}${path}`, { headers: { Authorization: `Bearer ${token}` } })).status, 200, path);
  }
  const body = (await (await fetch(`${a.base}/api/v1/disks`)).json()) as { field: string };
  assert.equal(body.field, 'token');
  // The page itself loads without the token (the dashboard reads it from #token=...).
  assert.equal((await fetch(`${a.base}/`)).status, 200);

  await assert.rejects(WsTestClient.connect(ws), (e: unknown) => e instanceof WsHandshakeError && e.status === 401);
  await assert.rejects(WsTestClient.connect(`${ws}?token=wrong`), (e: unknown) => e instanceof WsHandshakeError && e.status === 401);
  const ok = await WsTestClient.connect(`${ws}?token=${token}`);
  assert.equal((await ok.next()).json<HelloMessage>().t, 'hello');
  ok.destroy();
});

test('Origin: the served origin and --allow-origin are accepted, anything else refused', async (t) => {
  const a = await startTestAgent(t, { allowOrigins: ['https://grafana.example.org'] });
  const port = new URL(a.base).port;
  for (const origin of [`http://127.0.0.1:${port}`, 'https://grafana.example.org']) {
    const c = await WsTestClient.connect(a.streamUrl, { origin });
    assert.equal((await c.next()).json<HelloMessage>().t, 'hello', origin);
    c.destroy();
  }
  for (const origin of ['https://evil.example.com', `http://localhost:${port}`, 'null', `http://127.0.0.1:${Number(port) + 1}`]) {
    await assert.rejects(
      WsTestClient.connect(a.streamUrl, { origin }),
      (e: unknown) => e instanceof WsHandshakeError && e.status === 403,
      origin,
    );
  }
});

test('without a token, only loopback Host names are served (DNS rebinding)', async (t) => {
  const a = await startTestAgent(t);
  assert.equal((await rawGet(a.base, '/api/v1/disks', { Host: 'attacker.example.com' })).status, 403);
  assert.equal((await rawGet(a.base, '/api/v1/disks', { Host: 'localhost' })).status, 200);
  await assert.rejects(
    WsTestClient.connect(a.streamUrl, { headers: { Host: 'attacker.example.com' } }),
    (e: unknown) => e instanceof WsHandshakeError && e.status === 403,
  );
});

test('static files: the build is served with security headers; traversal and dotfiles are refused', async (t) => {
  const a = await startTestAgent(t);
  const page = await fetch(`${a.base}/`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<title>blkheat/);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /connect-src 'self' ws:\/\/127\.0\.0\.1:\d+ wss:\/\/127\.0\.0\.1:\d+/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
  const asset = await fetch(`${a.base}/assets/app-1234.js`);
  assert.equal(asset.status, 200);
  assert.match(asset.headers.get('content-type') ?? '', /javascript/);
  assert.match(asset.headers.get('cache-control') ?? '', /immutable/);

  for (const path of [
    '/../../../../etc/passwd',
    '/assets/../../../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    '/..%5c..%5cetc%5cpasswd',
    '/.secret',
    '/%00',
    '/%zz',
  ]) {
    const r = await rawGet(a.base, path);
    assert.ok(r.status === 400 || r.status === 404, `${path}: ${r.status}`);
    assert.doesNotMatch(r.body, /root:|hidden/, path);
  }
  assert.equal((await fetch(`${a.base}/nope.js`)).status, 404);
});

test('without a dashboard build the page says how to build it, and the API still works', async (t) => {
  const a = await startTestAgent(t, { withSite: false });
  const page = await fetch(`${a.base}/`);
  assert.equal(page.status, 503);
  assert.match(await page.text(), /node scripts\/build\.mjs/);
  assert.equal((await fetch(`${a.base}/api/v1/disks`)).status, 200);
  assert.ok(a.logs.some((l) => l.includes('no dashboard build')));
});

test('/healthz reports whether frames are flowing', async (t) => {
  const a = await startTestAgent(t);
  const before = await fetch(`${a.base}/healthz`);
  assert.equal(before.status, 503);
  a.collector.emit({ ts: nowS() - 1, step: 1, disks: [] });
  const after = await fetch(`${a.base}/healthz`);
  assert.equal(after.status, 200);
  assert.equal(((await after.json()) as { status: string }).status, 'ok');
});

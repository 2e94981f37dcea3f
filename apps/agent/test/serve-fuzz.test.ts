// Hostile input: >= 1,000 each of malformed or random WebSocket messages, query strings and
// snapshots (to the import validator), each refused, while another client keeps getting every
// frame, /healthz (probed from a process of its own) answers within 200 ms and the agent's RSS
// stays under 400 MB. The seed is printed; BLKHEAT_FUZZ_SEED repeats a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep, startHealthProbe, WsTestClient } from '@blkheat/testkit';
import { MAX_CLIENT_MESSAGE_BYTES, parseSnapshot } from '@blkheat/shared-types';
import { REQUEST_RATE } from '../src/server/limits.js';
import { agentOnLoop, gapOrDuplicate, needsRootAndFio, readFrames, subscriber, type TestContextLike } from './serve-fixtures.js';
import { seededRandom as rng } from '@blkheat/testkit';

const NOW = Math.floor(Date.now() / 1000);
const WEIRD: unknown[] = [
  null,
  true,
  -1,
  0.5,
  1e308,
  -0,
  '',
  'x'.repeat(300),
  '7:0',
  '../../etc/passwd',
  '<script>',
  '\u0000',
  '\ud800',
  [],
  {},
  [1, 2],
  { $gt: 0 },
  2 ** 53 + 2,
  '1700000000',
  NOW + 86400 * 365 * 300,
];

/** A message that is invalid by construction (so every one must get an error), of many kinds. */
function badMessage(r: () => number): string | Buffer {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const valid = [
    { t: 'subscribe', backfillFrom: NOW - 10 },
    { t: 'range', id: 1, from: NOW - 60, to: NOW, step: 1 },
    { t: 'samples', id: 2, from: NOW - 60, to: NOW, kind: 'device', minNs: 0, maxNs: 1000, limit: 10 },
  ];
  switch (Math.floor(r() * 9)) {
    case 0: // random bytes (mostly invalid UTF-8 / not JSON)
      return Buffer.from(Array.from({ length: 1 + Math.floor(r() * 200) }, () => Math.floor(r() * 256)));
    case 1: // random printable noise
      return Array.from({ length: 1 + Math.floor(r() * 100) }, () => String.fromCharCode(32 + Math.floor(r() * 95))).join('');
    case 2: {
      // a valid message with one field replaced by a weird value
      const m: Record<string, unknown> = { ...pick(valid) };
      // Not `id`: any short string is a valid id, which would make the message valid.
      const keys = Object.keys(m).filter((k) => k !== 't' && k !== 'id');
      const key = pick(keys);
      // A time may not be past 2200; a latency bound or limit may be any whole number >= 0.
      const isTime = key === 'from' || key === 'to' || key === 'backfillFrom';
      m[key] = pick(WEIRD.filter((w) => typeof w !== 'number' || !Number.isInteger(w) || w < 0 || (isTime && w > 7258118400)));
      return JSON.stringify(m);
    }
    case 3: // an unknown field
      return JSON.stringify({ ...pick(valid), [`f${Math.floor(r() * 1000)}`]: pick(WEIRD) });
    case 4: // wrong or missing t
      return JSON.stringify({ ...pick(valid), t: pick(['Subscribe', 'RANGE', '', 'hello', 'frame', 1, null]) });
    case 5: // a required field missing
      return JSON.stringify({ t: pick(['range', 'samples']), id: 3, [pick(['from', 'to'])]: NOW });
    case 6: // not an object
      return JSON.stringify(pick([[], 'subscribe', 42, null, [{ t: 'subscribe' }]]));
    case 7: // deep nesting
      return '['.repeat(1 + Math.floor(r() * 5000)) + ']'.repeat(Math.floor(r() * 5000));
    default: // bad spans and steps
      return JSON.stringify(
        pick([
          { t: 'range', id: 4, from: NOW, to: NOW - 1 },
          { t: 'range', id: 5, from: NOW - 40 * 86400, to: NOW },
          { t: 'range', id: 6, from: NOW - 10, to: NOW, step: 0 },
          { t: 'samples', id: 7, from: NOW - 10, to: NOW, limit: 100000 },
          { t: 'samples', id: 8, from: NOW - 10, to: NOW, minNs: 5, maxNs: 1 },
          { t: 'subscribe', disks: Array.from({ length: 300 }, (_, i) => `7:${i}`) },
          { t: 'subscribe', classes: ['Read', 'bad class'] },
        ]),
      );
  }
}

function badQuery(r: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const endpoint = pick(['/api/v1/range', '/api/v1/samples', '/api/v1/snapshot', '/api/v1/disks', '/metrics']);
  const good: Record<string, string[]> = {
    '/api/v1/range': [`from=${NOW - 60}`, `to=${NOW}`],
    '/api/v1/samples': [`from=${NOW - 60}`, `to=${NOW}`],
    '/api/v1/snapshot': [`from=${NOW - 60}`, `to=${NOW}`],
    '/api/v1/disks': [],
    '/metrics': [],
  };
  const params = [...(good[endpoint] ?? [])];
  const noise = (): string =>
    Array.from({ length: 1 + Math.floor(r() * 20) }, () =>
      pick(['%', '%zz', '%00', '&', '=', 'a', '9', '-', '.', '/', '+', '%2e', '\u00e9', '[', ']']),
    ).join('');
  switch (Math.floor(r() * 5)) {
    case 0: // unknown parameter
      params.push(`${pick(['bogus', 'From', 'to[]', '__proto__', 'constructor', 'x'])}=${encodeURIComponent(noise())}`);
      break;
    case 1: // non-integer or out-of-range value for a known numeric parameter
      if (endpoint === '/api/v1/disks' || endpoint === '/metrics') params.push(`${noise().replace(/[&=]/g, '')}z=1`);
      else params[0] = `from=${pick(['', 'abc', '1e9', '-5', '99999999999999999999', '1.5', '0x10', NOW + 9e9])}`;
      break;
    case 2: // duplicated single parameter
      if (params.length > 0) params.push(params[0] as string);
      else params.push('token=a', 'y=2');
      break;
    case 3: // a missing required parameter, or reversed span
      if (params.length > 0) params[1] = pick(['', `to=${NOW - 120}`]);
      else params.push(`${pick(['from', 'to', 'step'])}=1`);
      break;
    default: // an invalid list value
      if (endpoint === '/api/v1/disks' || endpoint === '/metrics') params.push('disk=7:0');
      else
        params.push(
          pick(['disk=../../x', `disk=${encodeURIComponent(noise())}`, 'class=a%20b', `class=${'A'.repeat(100)}`, 'kind=queue', 'step=0']),
        );
      if (endpoint !== '/api/v1/samples' && params[params.length - 1] === 'kind=queue') params[params.length - 1] = 'kind=x';
      if (endpoint === '/api/v1/samples' && params[params.length - 1] === 'kind=queue') params[params.length - 1] = 'kind=both';
      if (endpoint === '/api/v1/samples' && params[params.length - 1] === 'step=0') params[params.length - 1] = 'limit=0';
  }
  return `${endpoint}?${params.filter((p) => p !== '').join('&')}`;
}

/** Text that is not UTF-8: the WebSocket layer fails the connection with 1007 (RFC 6455 8.1). */
function isInvalidUtf8(b: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return false;
  } catch {
    return true;
  }
}

/** A snapshot made invalid by construction from a valid one (parsed JSON), or as broken text. */
function badSnapshot(r: () => number, valid: Record<string, unknown>, text: string): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const copy = JSON.parse(text) as Record<string, unknown>;
  const frames = copy.frames as { ts: unknown; disks: { cls: { n: unknown }[] }[] }[];
  switch (Math.floor(r() * 7)) {
    case 0: // a required field missing
      delete copy[pick(['format', 'version', 'range', 'disks', 'frames', 'schema', 'host'])];
      return JSON.stringify(copy);
    case 1: // a required field of the wrong type
      copy[pick(['version', 'range', 'disks', 'frames', 'schema'])] = pick([null, 'x', 7.5, { a: 1 }, true]);
      return JSON.stringify(copy);
    case 2: // a prototype key somewhere
      return JSON.stringify(copy)
        .replace(/\{/g, (m) => (r() < 0.02 ? '{"__proto__":{"x":1},' : m))
        .replace(/^\{(?!"__proto__")/, '{"__proto__":{},');
    case 3: // truncated text
      return text.slice(0, Math.floor(r() * (text.length - 1)));
    case 4: // a frame second that is not a whole number
      if (frames.length === 0) return '{}';
      (pick(frames) as { ts: unknown }).ts = pick(['1700000000', -1, 1.5, null]);
      return JSON.stringify(copy);
    case 5: // a negative count
      for (const f of frames) for (const d of f.disks) for (const c of d.cls) c.n = -1;
      return frames.length > 0 ? JSON.stringify(copy) : '[]';
    default: // another format or version
      return JSON.stringify({
        ...valid,
        ...pick([{ format: 'blkheat-snapshot-x' }, { version: 999 }, { version: '3' }, { format: null }]),
      });
  }
}

test(
  '>= 1,000 malformed WebSocket messages, query strings and snapshots: each refused, /healthz prompt, memory bounded',
  { timeout: 300_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const seed = Number(process.env.BLKHEAT_FUZZ_SEED ?? 20261127);
    console.log(`serve-fuzz: seed ${seed} (BLKHEAT_FUZZ_SEED=${seed} repeats this run)`);
    t.diagnostic(`seed ${seed}`);
    const r = rng(seed);
    const { agent } = await agentOnLoop(t, 64, { rw: 'randrw', runtimeS: 240, rateIops: 1000 });
    const bystander = await subscriber(t, agent);
    const before = (await readFrames(bystander.client, 1)).frames;
    const probe = startHealthProbe(agent.url, 200);
    const rssStart = agent.rssBytes();
    let rssMax = rssStart;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, agent.rssBytes())), 200);
    t.after(() => clearInterval(sampler));

    // WebSocket: 1,200 messages, each answered by exactly one error, or (text that is not
    // UTF-8) by closing with 1007. At most 60 per connection, paced under the message rate
    // (REQUEST_RATE a second, bursts of REQUEST_BURST), which closes a flood with 1008.
    let wsAnswered = 0;
    let c: WsTestClient | undefined;
    let onThis = 0;
    const open = async (): Promise<WsTestClient> => {
      const conn = await WsTestClient.connect(agent.streamUrl);
      t.after(() => conn.destroy());
      await conn.next(); // hello
      onThis = 0;
      return conn;
    };
    for (let i = 0; i < 1200; i++) {
      if (!c || c.isClosed || onThis >= 60) {
        c?.destroy();
        c = await open();
      }
      const m = badMessage(r);
      onThis++;
      if (typeof m === 'string') c.sendText(m);
      else c.sendFrame(0x1, m); // raw bytes as a text frame: may be invalid UTF-8
      const what = `seed ${seed}, message ${JSON.stringify(m.toString()).slice(0, 300)}`;
      if (typeof m !== 'string' && isInvalidUtf8(m)) {
        assert.equal((await c.closed).code, 1007, `${what}: not UTF-8`);
      } else {
        const reply = (await c.next(10_000)).json<{ t: string; message?: string }>();
        assert.equal(reply.t, 'error', `${what} got ${JSON.stringify(reply).slice(0, 200)}`);
        assert.ok(reply.message && reply.message.length > 0);
      }
      wsAnswered++;
      await sleep(1000 / (REQUEST_RATE * 1.5));
    }
    // Binary frames and an oversize message end the list: the latter closes with 1009.
    if (!c || c.isClosed) c = await open();
    c.sendBinary(Buffer.from([0, 1, 2]));
    assert.equal((await c.next()).json<{ t: string }>().t, 'error');
    c.sendText('x'.repeat(MAX_CLIENT_MESSAGE_BYTES + 1));
    assert.equal((await c.closed).code, 1009);
    wsAnswered += 2;

    // HTTP: 1,000 query strings, each a 400 naming a parameter.
    let httpAnswered = 0;
    for (let i = 0; i < 1000; i++) {
      const q = badQuery(r);
      const res = await fetch(`${agent.url.slice(0, -1)}${q}`);
      const body = (await res.json()) as { error?: string; field?: string };
      assert.equal(res.status, 400, `seed ${seed}: ${q} -> ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      assert.ok(body.error && body.field, `${q}: ${JSON.stringify(body)}`);
      httpAnswered++;
    }

    // Snapshots: the agent's own export of the last 5 s is valid; 1,000 broken copies of it are
    // each refused by the import validator the dashboard uses, with a message. (Short, so that
    // parsing them does not hold this process: the bystander must keep answering pings.)
    const now = Math.floor(Date.now() / 1000);
    const text = await (await fetch(`${agent.url}api/v1/snapshot?from=${now - 5}&to=${now}`)).text();
    const valid = parseSnapshot(text);
    assert.ok(valid.ok, `the agent's snapshot is valid: ${valid.ok ? '' : valid.message}`);
    let snapshotsRefused = 0;
    for (let i = 0; i < 1000; i++) {
      const bad = badSnapshot(r, JSON.parse(text) as Record<string, unknown>, text);
      const result = parseSnapshot(bad);
      assert.ok(!result.ok, `seed ${seed}: a broken snapshot was accepted: ${bad.slice(0, 300)}`);
      assert.ok(result.message.length > 0);
      snapshotsRefused++;
      await new Promise((r) => setImmediate(r));
    }

    const health = await probe.stop();
    clearInterval(sampler);
    t.diagnostic(
      `seed ${seed}: ${wsAnswered} WebSocket messages and ${httpAnswered} query strings answered with errors, ${snapshotsRefused} snapshots refused; ` +
        `/healthz ${health.answered} answers, slowest ${health.maxMs.toFixed(0)} ms; RSS ${(rssStart / 2 ** 20).toFixed(0)} -> max ${(rssMax / 2 ** 20).toFixed(0)} MiB`,
    );
    assert.ok(wsAnswered + httpAnswered + snapshotsRefused >= 3000);
    assert.equal(health.failed + health.slow + health.not200, 0, `seed ${seed}: /healthz: ${JSON.stringify(health)}`);
    assert.ok(rssMax < 400 * 2 ** 20, `seed ${seed}: RSS reached ${(rssMax / 2 ** 20).toFixed(0)} MiB`);

    // The bystander got every second throughout (and three more after), and the agent still works.
    const pending = bystander.client.drain().flatMap((m) => {
      const v = m.json<{ t: string; frame?: { ts: number } }>();
      return v.t === 'frame' && v.frame ? [v.frame.ts] : [];
    });
    const after = (await readFrames(bystander.client, 3)).frames.map((f) => f.ts);
    const seen = [...before.map((f) => f.ts), ...pending, ...after];
    assert.equal(gapOrDuplicate(seen), undefined, seen.join(','));
    assert.ok(seen.length >= 4);
    assert.equal((await fetch(`${agent.url}healthz`)).status, 200);
  },
);

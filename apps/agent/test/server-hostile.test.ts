// Hostile requests, in process on a real socket: every answer is the agent's own (a JSON error with
// the security headers, whatever Node's parser thought of the request), error words that read, a
// "__proto__" key refused on the WebSocket, and logs that never echo a client's text unbounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { WsTestClient } from '@blkheat/testkit';
import type { ErrorMessage } from '@blkheat/shared-types';
import { MAX_QUERY_BYTES } from '../src/server/http-query.js';
import { MAX_CONNECTIONS } from '../src/server/limits.js';
import { clip, securityHeaders } from '../src/server/security.js';
import { startTestAgent } from './server-fixtures.js';

interface RawAnswer {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Map<string, string>;
  readonly body: string;
}

/**
 * Sends `parts` as written (each its own write, `gapMs` apart) and reads until the agent
 * closes. The last answer on the connection is returned (keep-alive answers may precede it).
 */
function rawExchange(base: string, parts: readonly string[], gapMs = 0): Promise<RawAnswer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const s = netConnect(Number(u.port), u.hostname, () => {
      void (async () => {
        for (const p of parts) {
          if (s.destroyed) return;
          s.write(p);
          if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        }
      })();
    });
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', () => {
      // The agent may reset a connection it answered while we were still writing: what it sent counts.
    });
    s.setTimeout(5000, () => {
      s.destroy();
      reject(new Error(`no close within 5 s; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))}`));
    });
    s.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const starts = [...text.matchAll(/HTTP\/1\.1 \d{3} /g)].map((m) => m.index);
      const last = text.slice(starts.at(-1) ?? 0);
      const [head = '', body = ''] = last.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

/** The answer is a JSON error with every security header an API answer has. */
function assertOurs(a: RawAnswer, status: number, error: RegExp, what: string): void {
  assert.equal(a.status, status, `${what}: status (body ${a.body.slice(0, 200)})`);
  assert.match(a.headers.get('content-type') ?? '', /^application\/json/, `${what}: content type`);
  const body = JSON.parse(a.body) as { error?: unknown };
  assert.equal(typeof body.error, 'string', `${what}: {"error": "..."}`);
  assert.match(body.error as string, error, what);
  for (const [name, value] of Object.entries(securityHeaders(undefined, false))) {
    assert.equal(a.headers.get(name.toLowerCase()), value, `${what}: ${name}`);
  }
}

test('every status is ours: JSON errors with the security headers, even where express never sees the request', async (t) => {
  const a = await startTestAgent(t);
  const host = new URL(a.base).host;
  const get = (target: string, headers = ''): string => `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n${headers}\r\n`;
  const long = (n: number): string => `/api/v1/disks?x=${'a'.repeat(n)}`;
  const cases: [string, readonly string[], number, RegExp][] = [
    // The documented 414: from express just past the limit, and from the parser far past it.
    ['a target just over the limit', [get(long(MAX_QUERY_BYTES))], 414, /request target longer than 16384 bytes/],
    ['a target past what the parser holds', [get(long(40_000))], 414, /request target longer than 16384 bytes/],
    ['headers past what the parser holds', [get('/healthz', `X-Big: ${'b'.repeat(40_000)}\r\n`)], 431, /headers longer than/],
    [
      'many headers past what the parser holds',
      [get('/healthz', Array.from({ length: 40 }, (_, i) => `X-H${i}: ${'c'.repeat(1000)}\r\n`).join(''))],
      431,
      /headers longer than/,
    ],
    // A long target sent in pieces: the parser's packet no longer shows the request line.
    ['a target sent in pieces', [`GET /${'d'.repeat(8000)}`, 'd'.repeat(30_000), 'd'.repeat(30_000)], 431, /longer than/],
    ['an unknown method', [`FOO / HTTP/1.1\r\nHost: ${host}\r\n\r\n`], 501, /method FOO is not implemented/],
    ['CONNECT', [`CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n`], 405, /CONNECT/],
    ['POST', [`POST /api/v1/disks HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`], 405, /POST/],
    ['no Host (HTTP/1.1)', ['GET /api/v1/disks HTTP/1.1\r\nConnection: close\r\n\r\n'], 400, /missing Host header/],
    ['no Host (HTTP/1.0, no token: not a loopback name)', ['GET /healthz HTTP/1.0\r\n\r\n'], 403, /Host header not allowed/],
    [
      'a WebSocket upgrade without Host',
      ['GET /api/v1/stream HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n'],
      400,
      /missing Host header/,
    ],
    [
      'a WebSocket handshake without a key',
      [`GET /api/v1/stream HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`],
      400,
      /WebSocket handshake: Missing or invalid Sec-WebSocket-Key/,
    ],
    ['not HTTP at all (a TLS hello)', ['\x16\x03\x01\x02\x00\x01\x00\x01\r\n\r\n'], 400, /not HTTP/],
    ['an HTTP version that does not exist', [`GET / HTTP/9.9\r\nHost: ${host}\r\n\r\n`], 400, /malformed request/],
    ['a bad Content-Length', [`GET / HTTP/1.1\r\nHost: ${host}\r\nContent-Length: abc\r\n\r\n`], 400, /malformed request/],
    ['an Expect Node does not meet', [get('/healthz', 'Expect: teapot\r\n')], 417, /Expect: "teapot" is not met/],
  ];
  for (const [what, parts, status, error] of cases) {
    const answer = await rawExchange(a.base, parts, parts.length > 1 ? 30 : 0);
    assertOurs(answer, status, error, what);
    if (status === 501 || status === 405) assert.equal(answer.headers.get('allow'), 'GET, HEAD', `${what}: Allow`);
  }

  // Keep-alive: a long target after an answered request on the same connection is still a 414.
  const second = await rawExchange(a.base, [`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`, get(long(40_000))], 300);
  assertOurs(second, 414, /request target longer than/, 'a long target after a keep-alive request');

  // And the agent still answers afterwards.
  assert.equal((await fetch(`${a.base}/api/v1/disks`)).status, 200);
});

test('parameter errors read: no "(expected )" for endpoints without parameters', async (t) => {
  const a = await startTestAgent(t);
  const cases: [string, string][] = [
    ['/api/v1/disks?foo=1', 'foo: unknown parameter (this endpoint takes no parameters)'],
    ['/metrics?foo=1', 'foo: unknown parameter (this endpoint takes no parameters)'],
    [`/api/v1/range?from=1795290000&to=1795290001&foo=1`, 'foo: unknown parameter (expected from, to, step, disk, class or phase)'],
    [`/api/v1/snapshot?from=1795290000&to=1795290001&step=1`, 'step: unknown parameter (expected from, to, disk or class)'],
  ];
  for (const [path, error] of cases) {
    const res = await fetch(`${a.base}${path}`);
    assert.equal(res.status, 400, path);
    assert.deepEqual(await res.json(), { error, field: error.split(':')[0] }, path);
  }
});

test('a "__proto__" key in a WebSocket message is refused, naming where it is', async (t) => {
  const a = await startTestAgent(t);
  const c = await WsTestClient.connect(a.streamUrl);
  t.after(() => c.destroy());
  await c.nextJson((m) => m.t === 'hello');
  c.sendText('{"t":"range","id":7,"from":1795290000,"to":1795290001,"__proto__":{"step":1}}');
  const e = await c.nextJson<ErrorMessage>((m) => m.t === 'error');
  assert.deepEqual(e, { t: 'error', id: 7, message: '__proto__: a key named "__proto__" is not allowed', field: '__proto__' });
});

test('clip: client text in a log line is quoted, escaped and cut, with its length', () => {
  assert.equal(clip('http://a.example'), '"http://a.example"');
  assert.equal(clip('a"b\n\x1b'), '"a\\"b\\n\\u001b"');
  const long = clip('x'.repeat(5000));
  assert.equal(long, `"${'x'.repeat(120)}"…(5000 chars)`);
  assert.equal(clip('y'.repeat(50), 10), `"${'y'.repeat(10)}"…(50 chars)`);
});

test('a refused Origin is logged clipped, at most once a second, with a count of the rest', async (t) => {
  const a = await startTestAgent(t);
  const host = new URL(a.base).host;
  const origin = `http://${'o'.repeat(5000)}.example`;
  const upgrade = [
    `GET /api/v1/stream HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`,
    `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: ${origin}\r\n\r\n`,
  ].join('');
  const refusedLines = (): string[] => a.logs.filter((l) => l.includes('refused Origin'));
  for (let i = 0; i < 5; i++) assertOurs(await rawExchange(a.base, [upgrade]), 403, /Origin not allowed/, 'a foreign Origin');
  assert.equal(refusedLines().length, 1, `one line for a burst: ${refusedLines().join('\n')}`);
  const first = refusedLines()[0] as string;
  assert.ok(first.length < 250, `a ${first.length}-character line for a 5,000-character Origin`);
  assert.ok(first.includes(`…(${origin.length} chars)`), first);

  await new Promise((r) => setTimeout(r, 1100));
  assertOurs(await rawExchange(a.base, [upgrade]), 403, /Origin not allowed/, 'a foreign Origin, a second later');
  assert.equal(refusedLines().length, 2);
  assert.match(refusedLines()[1] as string, /\(and 4 more like it since the last one logged\)$/);
});

test('connections past the limit are closed as they come, said in the log and counted; the agent answers again once they go', async (t) => {
  const a = await startTestAgent(t);
  const u = new URL(a.base);
  const open = (): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const s = netConnect(Number(u.port), u.hostname, () => resolve(s));
      s.on('error', reject);
    });
  const held: Socket[] = [];
  t.after(() => {
    for (const s of held) s.destroy();
  });
  for (let i = 0; i < MAX_CONNECTIONS; i++) held.push(await open());
  // Past the limit: accepted by the kernel, closed by the agent at once, each one.
  const closedAtOnce = await Promise.all(
    Array.from({ length: 3 }, async () => {
      const s = await open();
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 3000);
        s.on('close', () => {
          clearTimeout(timer);
          resolve(true);
        });
        s.on('error', () => {});
      });
    }),
  );
  assert.deepEqual(closedAtOnce, [true, true, true], 'each connection past the limit is closed');
  await new Promise((r) => setTimeout(r, 50));
  const said = a.logs.filter((l) =>
    l.includes(`closed a connection from 127.0.0.1 as it came: ${MAX_CONNECTIONS} connections are open already`),
  );
  assert.equal(said.length, 1, `logged once (throttled): ${a.logs.join('\n')}`);
  for (const s of held.splice(0, 8)) s.destroy();
  await new Promise((r) => setTimeout(r, 100));
  const metrics = await (await fetch(`${a.base}/metrics`)).text();
  assert.match(metrics, /^blkheat_connections_dropped_total\{instance="test-host"\} 3$/m);
});

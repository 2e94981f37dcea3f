// The fleet view reaches a Prometheus that asks for credentials, as users run it (issue 30, 5):
// the real Prometheus of the fleet rig (no kernel) behind a reverse proxy that requires a bearer
// token, over plain http and over https with a certificate of a private CA (made here with
// openssl). Without the token file the fleet says why, plainly (/healthz and the page's status);
// with a wrong one, that it was refused; with the right one (and the CA file for https) its
// answers are the same as the rig's own fleet server's, which reaches Prometheus directly.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, get as httpGet, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prometheusUnavailable } from '@blkheat/testkit';
import type { DiskInfo, Frame } from '@blkheat/shared-types';

interface RangeAnswer {
  readonly frames: Frame[];
}
import { parseFleetArgs } from '../src/fleet/options.js';
import { startFleet } from '../src/fleet/service.js';
import { eventually, startFleetRig, WEB_ROOT } from './lib/fleet-rig.js';

const missing = prometheusUnavailable();
const TOKEN = 'fleet-reader-3f9c2a7d51e84b06';

/** A reverse proxy to `target` that answers 401 unless the request bears TOKEN. */
function tokenProxy(target: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' });
      res.end('Unauthorized\n');
      return;
    }
    httpGet(`${target}${req.url ?? '/'}`, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    }).on('error', (e) => {
      res.writeHead(502);
      res.end(e.message);
    });
  };
}

async function listen(t: TestContext, server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** A private CA and a certificate it signed for 127.0.0.1. */
function privateCa(dir: string): { ca: string; key: string; cert: string } {
  const at = (name: string): string => join(dir, name);
  const ssl = (...args: string[]): void => void execFileSync('openssl', args, { stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=blkheat test CA',
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.pem'),
  );
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', at('srv.key'), '-out', at('srv.csr'));
  writeFileSync(at('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  ssl(
    'x509',
    '-req',
    '-in',
    at('srv.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    at('san.ext'),
    '-out',
    at('srv.pem'),
  );
  return { ca: at('ca.pem'), key: readFileSync(at('srv.key'), 'utf8'), cert: readFileSync(at('srv.pem'), 'utf8') };
}

async function healthReasons(url: string): Promise<{ status: number; reasons: string[] }> {
  const res = await fetch(`${url}healthz`);
  const body = (await res.json()) as { reasons?: string[] };
  return { status: res.status, reasons: body.reasons ?? [] };
}

test(
  'fleet: a Prometheus behind a proxy that wants a bearer token, over http and https with a private CA',
  { timeout: 120_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t) => {
    const rig = await startFleetRig(t);
    const dir = mkdtempSync(join(tmpdir(), 'blkheat-fleet-auth-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const plainPort = await listen(t, createHttpServer(tokenProxy(rig.prom.url)));
    const tls = privateCa(dir);
    const tlsPort = await listen(t, createHttpsServer({ key: tls.key, cert: tls.cert }, tokenProxy(rig.prom.url)));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    chmodSync(tokenFile, 0o600);
    const wrongFile = join(dir, 'wrong');
    writeFileSync(wrongFile, 'not-the-token-at-all\n');
    chmodSync(wrongFile, 0o600);

    const start = async (argv: string[]) => {
      const o = parseFleetArgs([...argv, '--port', '0', '--web-root', WEB_ROOT]);
      assert.ok(o !== 'help');
      const fleet = await startFleet(o, () => {});
      t.after(() => fleet.stop());
      return fleet;
    };
    const plain = `http://127.0.0.1:${plainPort}`;
    const secure = `https://127.0.0.1:${tlsPort}`;

    // Without credentials, a wrong token, https without the CA: each says why.
    const cases: [string[], RegExp][] = [
      [['--prometheus', plain], /asks for credentials \(HTTP 401\): none were sent: give --prometheus-bearer-token-file/],
      [
        ['--prometheus', plain, '--prometheus-bearer-token-file', wrongFile],
        /asks for credentials \(HTTP 401\): the bearer token sent was refused/,
      ],
      [
        ['--prometheus', secure, '--prometheus-bearer-token-file', tokenFile],
        /is unreachable \(.*certificate.*; for a private CA give --prometheus-ca-file\)/,
      ],
    ];
    for (const [argv, why] of cases) {
      const fleet = await start(argv);
      const h = await eventually(`a reason for ${argv.join(' ')}`, async () => {
        const r = await healthReasons(fleet.url);
        return r.status === 503 && r.reasons.some((x) => why.test(x)) ? r : undefined;
      });
      t.diagnostic(`${argv.slice(1).join(' ')}: ${h.reasons.join('; ')}`);
    }

    // With the token (and the CA for https): the same disks and the same range as the rig's own fleet.
    // What the rig's own fleet showed last, for the message if it never gets there.
    let seen = 'nothing';
    const direct = await eventually('the direct fleet sees three disks, each linked', async () => {
      const r = (await (await fetch(`${rig.fleet.url}api/v1/disks`)).json()) as { disks: DiskInfo[] };
      const health = await healthReasons(rig.fleet.url);
      seen = `${r.disks.map((d) => `${d.name} link ${d.link ?? 'none'}`).join(', ')}; /healthz ${health.status} ${health.reasons.join('; ')}`;
      return r.disks.length === 3 && r.disks.every((d) => d.link) ? r.disks : undefined;
    }).catch((e: unknown) => {
      throw new Error(`${e instanceof Error ? e.message : String(e)} (last seen: ${seen})`);
    });
    for (const argv of [
      ['--prometheus', plain, '--prometheus-bearer-token-file', tokenFile],
      ['--prometheus', secure, '--prometheus-bearer-token-file', tokenFile, '--prometheus-ca-file', tls.ca],
    ]) {
      const fleet = await start(argv);
      const disks = await eventually(`disks through ${argv[1]}`, async () => {
        const r = (await (await fetch(`${fleet.url}api/v1/disks`)).json()) as { disks: DiskInfo[] };
        return r.disks.length === 3 && r.disks.every((d) => d.link) ? r.disks : undefined;
      });
      const named = (list: readonly DiskInfo[]): string[][] => list.map((d) => [d.name, d.link ?? '']).sort();
      assert.deepEqual(named(disks), named(direct));
      // A range the direct fleet server already has several seconds of data in.
      const q = await eventually('a range with data', async () => {
        const to = Math.floor(Date.now() / 1000) - 5;
        const range = `api/v1/range?from=${to - 30}&to=${to}`;
        const r = (await (await fetch(rig.fleet.url + range)).json()) as RangeAnswer;
        return r.frames.length >= 5 ? range : undefined;
      });
      const [mine, theirs] = await Promise.all([fetch(fleet.url + q), fetch(rig.fleet.url + q)]);
      assert.equal(mine.status, 200);
      // Each fleet server numbers host × disk in the order it found them: compared by name.
      const byName = async (res: Response, list: readonly DiskInfo[]): Promise<unknown> => {
        const answer = (await res.json()) as RangeAnswer;
        const name = (dev: string): string => list.find((d) => d.dev === dev)?.name ?? dev;
        return answer.frames.map((f) => ({
          ...f,
          disks: f.disks.map((d) => ({ ...d, dev: name(d.dev) })).sort((a, b) => a.dev.localeCompare(b.dev)),
        }));
      };
      const ours = await byName(mine, disks);
      assert.ok(Array.isArray(ours) && ours.length >= 5, `frames through ${argv[1]}: ${JSON.stringify(ours).slice(0, 200)}`);
      assert.deepEqual(ours, await byName(theirs, direct), `the range through ${argv[1]} is the direct one`);
      assert.equal((await healthReasons(fleet.url)).status, 200);
      const metrics = await (await fetch(`${fleet.url}metrics`)).text();
      const asked = Number(/^blkheat_fleet_prometheus_requests_total\S* (\d+)$/m.exec(metrics)?.[1]);
      assert.ok(asked > 3, `the fleet server counts its requests of Prometheus: ${asked}`);
    }
  },
);

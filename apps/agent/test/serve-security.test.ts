// Secure by default: token, Origin, path traversal and privilege drop, checked against the real
// agent started the way a user starts it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { AGENT_CLI, readCredentials, startFio, WsHandshakeError, WsTestClient } from '@blkheat/testkit';
import type { HelloMessage } from '@blkheat/shared-types';
import {
  agentOnLoop,
  diskCount,
  needsRootAndFio,
  readFrames,
  startRealAgent,
  subscriber,
  tempDataDir,
  type TestContextLike,
} from './serve-fixtures.js';

function rawStatus(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const s = netConnect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
    let data = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (data += d));
    s.on('end', () => resolve({ status: Number(data.split(' ')[1]), body: data.split('\r\n\r\n')[1] ?? '' }));
    s.on('error', reject);
  });
}

test('a non-loopback --host without a token refuses to start, with a clear message', (t: TestContextLike) => {
  const dataDir = tempDataDir(t);
  for (const host of ['0.0.0.0', '::', '10.1.2.3']) {
    const r = spawnSync(process.execPath, [AGENT_CLI, 'serve', '--host', host, '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 2, `--host ${host}: ${r.stderr}`);
    assert.match(r.stderr, /refusing to listen on .* without a token/);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one message');
  }
});

test(
  'with a token on 0.0.0.0: wrong token is 401 on HTTP and a refused upgrade; wrong Origin refused; ../ refused',
  { timeout: 120_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const dataDir = tempDataDir(t);
    const token = 'a1b2c3d4e5f6a7b8c9d0e1f2';
    const tokenFile = join(dataDir, '..', `blkheat-token-${process.pid}`);
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    t.after(() => rmSync(tokenFile, { force: true }));
    const agent = await startRealAgent(t, dataDir, ['--host', '0.0.0.0', '--token-file', tokenFile]);
    const base = `http://127.0.0.1:${agent.port}`;
    const ws = `ws://127.0.0.1:${agent.port}/api/v1/stream`;

    assert.equal((await fetch(`${base}/api/v1/disks`)).status, 401);
    assert.equal((await fetch(`${base}/api/v1/disks?token=${token}x`)).status, 401);
    assert.equal((await fetch(`${base}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await fetch(`${base}/api/v1/disks`, { headers: { Authorization: `Bearer ${token}` } })).status, 200);
    assert.equal((await fetch(`${base}/metrics?token=${token}`)).status, 200);

    await assert.rejects(WsTestClient.connect(`${ws}?token=nope`), (e: unknown) => e instanceof WsHandshakeError && e.status === 401);
    await assert.rejects(WsTestClient.connect(ws), (e: unknown) => e instanceof WsHandshakeError && e.status === 401);
    await assert.rejects(
      WsTestClient.connect(`${ws}?token=${token}`, { origin: 'https://evil.example.com' }),
      (e: unknown) => e instanceof WsHandshakeError && e.status === 403,
    );
    const good = await WsTestClient.connect(`${ws}?token=${token}`, { origin: base });
    t.after(() => good.destroy());
    assert.equal((await good.next()).json<HelloMessage>().t, 'hello');

    for (const path of [
      '/../../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/shadow',
      '/assets/..%2f..%2f..%2fpackage.json',
      '/..%5c..%5cetc%5cpasswd',
    ]) {
      const r = await rawStatus(agent.port, path);
      assert.ok(r.status === 400 || r.status === 404, `${path}: ${r.status}`);
      assert.doesNotMatch(r.body, /root:/);
    }
  },
);

test(
  'after starting as root the agent runs as nobody with no capabilities, and still collects',
  { timeout: 120_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const { loop, agent, dataDir } = await agentOnLoop(t, 64);
    const cred = readCredentials(agent.pid);
    assert.deepEqual(cred.uid, [65534, 65534, 65534, 65534], 'real, effective, saved and fs uid');
    assert.deepEqual(cred.gid, [65534, 65534, 65534, 65534], 'real, effective, saved and fs gid');
    assert.deepEqual(cred.groups, [], 'no supplementary groups');
    assert.equal(cred.capEff, 0n, 'no effective capabilities');
    assert.equal(cred.capPrm, 0n, 'no permitted capabilities');
    assert.equal(cred.capAmb, 0n, 'no ambient capabilities');
    assert.equal(cred.capInh, 0n, 'no inheritable capabilities');
    assert.equal(statSync(dataDir).uid, 65534, 'the data directory was given to nobody');
    assert.match(agent.stderr(), /now running as nobody/);

    // The probes keep working through the descriptors opened as root.
    startFio({ filename: loop.path, rw: 'randrw', runtimeS: 8, rateIops: 500 }, t);
    const { client } = await subscriber(t, agent);
    const { frames } = await readFrames(client, 4);
    assert.ok(
      frames.some((f) => diskCount(f, loop.dev) > 0),
      'I/O on the loop device is still seen',
    );
  },
);

// `blkheat fleet` flags: --prometheus is required and must be a base http(s) URL; listening
// follows serve's rules (loopback unless a token is given); --help says how to use it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FINE_BUCKET_SCHEMA } from '@blkheat/shared-types';
import { FLEET_DEFAULT_PORT, parseFleetArgs } from '../src/fleet/options.js';
import { UsageError } from '../src/service/flags.js';

const refuses = (argv: string[], pattern: RegExp): void =>
  assert.throws(
    () => parseFleetArgs(argv),
    (e: unknown) => e instanceof UsageError && pattern.test(e.message),
    argv.join(' '),
  );

test('fleet options: defaults, and what is refused', () => {
  const o = parseFleetArgs(['--prometheus', 'http://prom:9090/']);
  assert.ok(o !== 'help');
  assert.equal(o.prometheus, 'http://prom:9090');
  assert.equal(o.host, '127.0.0.1');
  assert.equal(o.port, FLEET_DEFAULT_PORT);
  assert.equal(o.token, undefined);
  assert.equal(o.schema.scale, 2);
  const fine = parseFleetArgs(['--prometheus', 'https://prom.example.org/prometheus', '--schema', '3', '--port', '0']);
  assert.ok(fine !== 'help');
  assert.deepEqual(fine.schema, FINE_BUCKET_SCHEMA);
  assert.equal(fine.prometheus, 'https://prom.example.org/prometheus');
  assert.equal(parseFleetArgs(['--help']), 'help');

  refuses([], /--prometheus URL is required/);
  refuses(['--prometheus', 'prom:9090'], /not an http\(s\) URL|not a URL/);
  refuses(['--prometheus', 'ftp://prom'], /not an http\(s\) URL/);
  refuses(['--prometheus', 'http://prom:9090/?x=1'], /without \?query/);
  refuses(['--prometheus', 'http://prom:9090', '--schema', '4'], /--schema: expected 2/);
  refuses(['--prometheus', 'http://prom:9090', '--host', '0.0.0.0'], /refusing to listen on 0\.0\.0\.0 without a token/);
  refuses(['--prometheus', 'http://prom:9090', '--bogus'], /bogus/);
  const wide = parseFleetArgs(['--prometheus', 'http://prom:9090', '--host', '0.0.0.0', '--token', 'abcdefghijklmnop0123']);
  assert.ok(wide !== 'help');
  assert.equal(wide.token, 'abcdefghijklmnop0123');
});

test('fleet options: credentials and a CA for Prometheus, read from files, and what is refused', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-fleet-opts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string, mode = 0o600): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };
  const bearer = file('bearer', 'eyJhbGciOi.secret.token\n');
  const basic = file('basic', 'reader:pa:ss word\nignored\n');
  const ca = file('ca.pem', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', 0o644);
  const p = 'https://prom:9090';
  const withBearer = parseFleetArgs(['--prometheus', p, '--prometheus-bearer-token-file', bearer, '--prometheus-ca-file', ca]);
  assert.ok(withBearer !== 'help');
  assert.deepEqual(withBearer.prometheusAuth, { bearer: 'eyJhbGciOi.secret.token' });
  assert.match(withBearer.prometheusCa ?? '', /^-----BEGIN CERTIFICATE-----/);
  const withBasic = parseFleetArgs(['--prometheus', p, '--prometheus-basic-auth-file', basic]);
  assert.ok(withBasic !== 'help');
  assert.deepEqual(withBasic.prometheusAuth, { user: 'reader', password: 'pa:ss word' });

  refuses(['--prometheus', p, '--prometheus-bearer-token-file', bearer, '--prometheus-basic-auth-file', basic], /give one, not both/);
  refuses(
    ['--prometheus', p, '--prometheus-bearer-token-file', file('open', 'x\n', 0o644)],
    /readable by its group and others .*chmod 600/,
  );
  refuses(['--prometheus', p, '--prometheus-basic-auth-file', file('nocolon', 'justauser\n')], /is not USER:PASSWORD/);
  refuses(['--prometheus', p, '--prometheus-bearer-token-file', join(dir, 'nowhere')], /--prometheus-bearer-token-file: cannot read/);
  refuses(['--prometheus', p, '--prometheus-ca-file', file('notpem', 'hello\n')], /holds no PEM certificate/);
  refuses(['--prometheus', 'http://prom:9090', '--prometheus-ca-file', ca], /only for an https --prometheus URL/);
});

test('blkheat fleet --help, and blkheat lists the command', () => {
  const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
  const help = spawnSync(process.execPath, ['--import', 'tsx', main, 'fleet', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /Usage: blkheat fleet --prometheus URL/);
  assert.match(help.stdout, /honor_labels: true/);
  const top = spawnSync(process.execPath, ['--import', 'tsx', main, '--help'], { encoding: 'utf8' });
  assert.match(top.stdout, /fleet +one dashboard for many agents/);
  const bad = spawnSync(process.execPath, ['--import', 'tsx', main, 'fleet'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /blkheat fleet: --prometheus URL is required/);
});

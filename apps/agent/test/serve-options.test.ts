import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_TOKEN_CHARS, UsageError } from '../src/service/flags.js';
import { DEFAULTS, helpText, parseServeArgs, type ServeOptions } from '../src/service/options.js';
import { parseDuration, parseSize } from '../src/service/units.js';

const asRoot = { isRoot: true };
const notRoot = { isRoot: false };

function parse(argv: string[], env = asRoot): ServeOptions {
  const r = parseServeArgs(argv, env);
  assert.notEqual(r, 'help');
  return r as ServeOptions;
}

function refused(argv: string[], re: RegExp, env = asRoot): void {
  assert.throws(
    () => parseServeArgs(argv, env),
    (e: unknown) => e instanceof UsageError && re.test(e.message),
    argv.join(' '),
  );
}

test('defaults: loopback, no token, 24 h history, nobody when root', () => {
  const o = parse([]);
  assert.equal(o.host, '127.0.0.1');
  assert.equal(o.port, DEFAULTS.port);
  assert.equal(o.token, undefined);
  assert.equal(o.historySeconds, 86400);
  assert.equal(o.dataDir, '/var/lib/blkheat');
  assert.equal(o.user, 'nobody');
  assert.equal(o.samplesBudget, 2000);
  assert.deepEqual(o.disks, []);
  assert.equal(parse([], notRoot).user, undefined, 'no switch when not root');
  assert.equal(parse(['--user', 'root']).user, undefined, '"root" keeps root');
});

test('every flag is parsed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-opt-'));
  try {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'abcdefghijklmnopqrstuvwxyz\nignored second line\n', { mode: 0o600 });
    const o = parse([
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--token-file',
      tokenFile,
      '--allow-origin',
      'https://Grafana.Example.org:443',
      '--allow-origin',
      'http://h:8080',
      '--history',
      '7d',
      '--max-history-size',
      '2G',
      '--max-sample-size',
      '64M',
      '--data-dir',
      dir,
      '--user',
      '65534:65534',
      '--disk',
      'vda',
      '--disk',
      '7:3',
      '--samples-budget',
      '0',
      '--web-root',
      dir,
    ]);
    assert.equal(o.token, 'abcdefghijklmnopqrstuvwxyz');
    assert.deepEqual(o.allowOrigins, ['https://grafana.example.org', 'http://h:8080']);
    assert.equal(o.historySeconds, 7 * 86400);
    assert.equal(o.maxHistoryBytes, 2 * 1024 ** 3);
    assert.equal(o.maxSampleBytes, 64 * 1024 ** 2);
    assert.equal(o.user, '65534:65534');
    assert.deepEqual(o.disks, ['vda', '7:3']);
    assert.equal(o.samplesBudget, 0);
    assert.equal(o.port, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bad values are refused with a message naming the flag', () => {
  refused(['--host', '0.0.0.0'], /without a token/);
  refused(['--host', '::'], /without a token/);
  refused(['--host', 'bad host!'], /--host/);
  refused(['--port', '70000'], /--port.*0\.\.65535/);
  refused(['--port', 'http'], /--port: expected a whole number/);
  refused(['--token', 'short'], /at least 16 characters/);
  refused(['--token', 'has spaces in it, too many'], /printable ASCII/);
  refused(['--token', 'abcdefghijklmnopq', '--token-file', '/etc/hostname'], /give one, not both/);
  refused(['--token-file', '/nonexistent/token'], /--token-file: cannot read/);
  refused(['--allow-origin', 'javascript:alert(1)'], /--allow-origin/);
  refused(['--allow-origin', 'https://x.org/path'], /--allow-origin/);
  refused(['--history', '1y'], /--history.*duration/);
  refused(['--history', '1m'], /--history: 1m is outside/);
  refused(['--history', '40d'], /--history: 40d is outside/);
  refused(['--max-history-size', 'lots'], /--max-history-size/);
  refused(['--max-history-size', '1M'], /at least 16M/);
  refused(['--max-sample-size', 'all'], /--max-sample-size: "all" is not a size/);
  refused(['--max-sample-size', '1K'], /--max-sample-size: at least 16M/);
  refused(['--user', 'a b'], /--user/);
  refused(['--user', 'daemon'], /needs root/, notRoot);
  refused(['--disk', '../sda'], /--disk/);
  refused(['--samples-budget', '-1'], /--samples-budget/);
  refused(['--bogus'], /bogus/);
  refused(['extra'], /extra|positional/i);
  assert.equal(parseServeArgs(['--help']), 'help');
  assert.equal(parseServeArgs(['-h']), 'help');
});

test('--token-file: a file others may read or write is refused with the chmod that fixes it (ssh-style)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-opt-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'token');
  writeFileSync(file, 'abcdefghijklmnopqrstuvwxyz\n');
  const cases: [number, string][] = [
    [0o644, 'readable by its group and others (mode 0644)'],
    [0o666, 'readable by its group and others, writable by its group and others (mode 0666)'],
    [0o640, 'readable by its group (mode 0640)'],
    [0o604, 'readable by others (mode 0604)'],
    [0o620, 'writable by its group (mode 0620)'],
  ];
  for (const [mode, words] of cases) {
    chmodSync(file, mode);
    refused(['--token-file', file], new RegExp(`^--token-file: ${file} is ${words.replace(/[()]/g, '\\$&')}.*: chmod 600 ${file}$`));
  }
  for (const mode of [0o600, 0o400]) {
    chmodSync(file, mode);
    assert.equal(parse(['--token-file', file]).token, 'abcdefghijklmnopqrstuvwxyz', mode.toString(8));
  }
  // A path the shell would split is quoted in the fix.
  const spaced = join(dir, "my token's");
  writeFileSync(spaced, 'abcdefghijklmnopqrstuvwxyz\n', { mode: 0o644 });
  chmodSync(spaced, 0o644);
  refused(['--token-file', spaced], /chmod 600 '.*my token'\\''s'$/);
});

test(`tokens are at most ${MAX_TOKEN_CHARS} characters, and --token-file reads only a line's worth`, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-opt-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const longest = 'a'.repeat(MAX_TOKEN_CHARS);
  assert.equal(parse(['--token', longest]).token, longest);
  refused(['--token', `${longest}a`], new RegExp(`token: at most ${MAX_TOKEN_CHARS} characters`));

  const file = join(dir, 'token');
  writeFileSync(file, `${longest}\r\nsecond line\n`, { mode: 0o600 });
  assert.equal(parse(['--token-file', file]).token, longest, 'a longest token with CRLF');
  writeFileSync(file, `${longest}a`, { mode: 0o600 });
  refused(['--token-file', file], new RegExp(`token: at most ${MAX_TOKEN_CHARS} characters`));
  // 5 MB without a line end (the tester's case): refused from the first read, whatever follows.
  writeFileSync(file, 'x'.repeat(5 * 1024 * 1024), { mode: 0o600 });
  refused(['--token-file', file], new RegExp(`^--token-file: the first line of ${file} is longer than ${MAX_TOKEN_CHARS} characters`));
  writeFileSync(file, '\n' + 'x'.repeat(1000), { mode: 0o600 });
  refused(['--token-file', file], /is empty/);
  refused(['--token-file', dir], /is not a regular file/);
});

test('--help documents every flag and its default', () => {
  const help = helpText();
  for (const flag of [
    '--host',
    '--port',
    '--token ',
    '--token-file',
    '--allow-origin',
    '--history',
    '--max-history-size',
    '--data-dir',
    '--user',
    '--disk',
    '--samples-budget',
    '--web-root',
    '--help',
  ]) {
    assert.ok(help.includes(flag), `${flag} in --help`);
  }
  for (const d of ['127.0.0.1', String(DEFAULTS.port), '24h', '512M', '/var/lib/blkheat', 'nobody', '2000'])
    assert.ok(help.includes(d), `default ${d} in --help`);
  assert.match(help, new RegExp(`16 to ${MAX_TOKEN_CHARS} printable ASCII characters`), 'token length in --help');
  assert.match(help, /chmod 600 F/, '--token-file mode in --help');
});

test('units', () => {
  assert.equal(parseDuration('90'), 90);
  assert.equal(parseDuration('90m'), 5400);
  assert.equal(parseDuration('24h'), 86400);
  assert.equal(parseDuration('2D'), 172800);
  assert.equal(parseDuration('1.5h'), undefined);
  assert.equal(parseSize('512M'), 512 * 1024 ** 2);
  assert.equal(parseSize('1GiB'), 1024 ** 3);
  assert.equal(parseSize('100'), 100);
  assert.equal(parseSize('-1M'), undefined);
});

test('the CLI prints help (exit 0) and refuses a bad flag with one line (exit 2)', () => {
  const cli = join(import.meta.dirname, '../src/cli/main.ts');
  const help = spawnSync(process.execPath, ['--import', 'tsx', cli, 'serve', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /Usage: blkheat serve/);
  const bad = spawnSync(process.execPath, ['--import', 'tsx', cli, 'serve', '--port', 'x'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr.trim(), 'blkheat serve: --port: expected a whole number, got "x"');
});

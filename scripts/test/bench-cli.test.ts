// Every bench script's command line (bench/cli.ts): `--help` prints its usage and exits 0, a
// flag it does not know is named in one line with the usage and exit code 2, and nothing is
// started for either (no root, no kernel, no browser needed). bench/fleet-scale, bench/agent and
// bench/soak once answered `--help` with Node's parse_args stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
/** The runnable scripts: bench/*.ts whose text says how to run it (`node --import tsx bench/<itself>`); the rest are their parts. */
const SCRIPTS = readdirSync(join(ROOT, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .filter((f) => readFileSync(join(ROOT, 'bench', f), 'utf8').includes(`node --import tsx bench/${f}`));

function run(script: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join('bench', script), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('every bench script answers --help with its usage (exit 0) and an unknown flag with it and exit 2', () => {
  assert.ok(SCRIPTS.length >= 6, `the runnable scripts found: ${SCRIPTS.join(', ')}`);
  for (const script of SCRIPTS) {
    const help = run(script, ['--help']);
    assert.equal(help.status, 0, `${script} --help: exit 0 (stderr: ${help.stderr.slice(0, 300)})`);
    assert.match(help.stdout, new RegExp(`^usage: .*bench/${script.replace('.', '\\.')}`, 'i'), `${script} --help prints its usage`);
    const bad = run(script, ['--no-such-flag']);
    assert.equal(bad.status, 2, `${script} --no-such-flag: exit 2`);
    const [first] = bad.stderr.split('\n');
    assert.equal(first, `bench/${script.replace(/\.ts$/, '')}: Unknown option '--no-such-flag'`, `${script}: one line naming the flag`);
    assert.match(bad.stderr, /usage: /i, `${script}: the usage follows`);
    assert.doesNotMatch(bad.stderr, /at .*parse_args/, `${script}: no stack`);
  }
});

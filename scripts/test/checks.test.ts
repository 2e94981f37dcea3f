// Static checks run as part of the suite, so CI fails on a type error or a lint finding in any
// package, including code that only tests, benchmarks or the browser bundle use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '../..');

function check(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
}

test('typescript: every project type-checks (node, browser, tests, benchmarks)', { timeout: 300_000 }, () => {
  check(process.execPath, ['node_modules/typescript/bin/tsc', '-b']);
  check(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.tests.json', '--noEmit']);
  check(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'apps/web/tsconfig.json', '--noEmit']);
});

test('eslint: no findings', { timeout: 300_000 }, () => {
  check(process.execPath, ['node_modules/eslint/bin/eslint.js', '--max-warnings=0', '.']);
});

test('prettier: every file formatted', { timeout: 300_000 }, () => {
  check(process.execPath, ['node_modules/prettier/bin/prettier.cjs', '--check', '--log-level=warn', '.']);
});

#!/usr/bin/env node
// Runs the whole test suite with node's test runner, one file at a time (kernel tests share
// the machine: BPF stats, loop devices, /proc/diskstats), unit tests first, end-to-end last.
// Usage: node scripts/run-tests.mjs [substring ...]   (only files whose path contains one)
// Prints the spec report, then a closing line "tests: N passed, N failed, N skipped".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const filters = process.argv.slice(2);

// Order matters: cheap and pure first, so a broken model fails in seconds, not after e2e.
const suites = ['scripts/test', 'packages/shared-types/test', 'apps/web/test', 'packages/bpf-loader/test', 'apps/agent/test', 'e2e'];

function testFiles(dir) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  const out = [];
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    const p = join(abs, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'fixtures') out.push(...testFiles(relative(root, p)));
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) out.push(p);
  }
  return out.sort();
}

const files = suites.flatMap(testFiles).filter((f) => filters.length === 0 || filters.some((s) => relative(root, f).includes(s)));
if (files.length === 0) {
  console.error(`run-tests: no test file matches ${filters.join(', ') || '(any)'}`);
  console.log('tests: 0 passed, 0 failed');
  process.exit(1);
}

const artifacts = process.env.BLKHEAT_ARTIFACTS ?? join(root, 'artifacts');
mkdirSync(artifacts, { recursive: true });
// Each run writes its own results file (runs in parallel must not read each other's summary)
// and publishes it as test-results.tap when done.
const tap = join(artifacts, 'test-results.tap');
const ownTap = join(artifacts, `.test-results-${process.pid}.tap`);

const args = [
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=1',
  '--test-timeout=900000',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=tap',
  `--test-reporter-destination=${ownTap}`,
  ...files,
];
const started = Date.now();
const r = spawnSync(process.execPath, args, {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, BLKHEAT_ARTIFACTS: artifacts, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
});

// node's TAP reporter ends with "# pass N", "# fail N", "# skipped N", "# todo N", "# cancelled N".
const summary = {};
if (existsSync(ownTap)) {
  const tapText = readFileSync(ownTap, 'utf8');
  for (const m of tapText.matchAll(/^# (tests|pass|fail|skipped|todo|cancelled) (\d+)$/gm)) {
    summary[m[1]] = Number(m[2]);
  }
  renameSync(ownTap, tap);
}
const passed = summary.pass ?? 0;
const failed = (summary.fail ?? 0) + (summary.cancelled ?? 0);
const skipped = (summary.skipped ?? 0) + (summary.todo ?? 0);
console.log(
  `\nrun-tests: ${files.length} files in ${Math.round((Date.now() - started) / 1000)} s; results in ${relative(root, tap)}, artifacts in ${relative(root, artifacts)}/`,
);
if (skipped > 0) console.log(`run-tests: WARNING: ${skipped} test(s) skipped; see the SKIP lines above for why`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(r.status === 0 && failed === 0 && passed > 0 ? 0 : 1);

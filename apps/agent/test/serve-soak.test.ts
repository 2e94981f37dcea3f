// bench/soak for 60 s in the suite: real I/O, the real agent, and faults at random (disk full,
// SIGSTOP, client churn, loop devices coming and going, kill -9 with restart). It fails unless
// every second was delivered live while the agent ran, counts are conserved exactly since the
// last restart, and RSS stayed bounded. The seed changes per run and is printed, so a failure
// reproduces with bench/soak --seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { needsRootAndFio } from './serve-fixtures.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

test('bench/soak, 60 s of faults: every second live, counts conserved, RSS bounded', { timeout: 240_000 }, async (t) => {
  if (!needsRootAndFio(t)) return;
  const seed = Math.floor(Date.now() / 1000) % 100_000;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/soak.ts', '--seconds', '60', '--seed', String(seed)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  for (const line of out.trim().split('\n')) t.diagnostic(line);
  assert.equal(code, 0, `bench/soak --seconds 60 --seed ${seed} failed:\n${out}`);
  assert.match(out, /live: (\d+) of \1 seconds delivered/);
});

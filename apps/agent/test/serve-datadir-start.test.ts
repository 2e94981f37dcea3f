// The data directory on a started agent: these load the probes. The refusals, which stop before the
// probes, are in serve-datadir-refusals.test.ts (the in-process checks in serve-datadir.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isRoot, NOBODY, waitFor } from '@blkheat/testkit';
import { HISTORY_DIR, MARKER_FILE } from '../src/service/datadir.js';
import { resolveUser } from '../src/service/drop-root.js';
import { LOCK_FILE } from '../src/service/lock.js';
import { plantForeignTree, tempDir, treeState } from './datadir-fixtures.js';
import { startRealAgent, type TestContextLike } from './serve-fixtures.js';

function needsRoot(t: TestContextLike): boolean {
  if (isRoot()) return true;
  t.skip('needs root: loads BPF programs');
  return false;
}

function segments(dataDir: string): string[] {
  const dir = join(dataDir, HISTORY_DIR);
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.seg')) : [];
}

test(
  '--adopt-data-dir: the agent keeps history in a foreign directory, and no file it did not create changes owner',
  { timeout: 120_000 },
  async (t: TestContextLike) => {
    if (!needsRoot(t)) return;
    const nobody = resolveUser('nobody');
    const root = tempDir(t);
    chmodSync(root, 0o755);
    const dataDir = join(root, 'srv');
    mkdirSync(dataDir, { mode: 0o700 });
    plantForeignTree(dataDir);
    chownSync(dataDir, NOBODY, nobody.gid); // the fix the refusal names: the directory only
    const foreign = treeState(dataDir);

    const agent = await startRealAgent(t, dataDir, ['--adopt-data-dir']);
    assert.match(agent.stderr(), /used as --adopt-data-dir says: nothing in it changed owner; what blkheat adds is nobody's/);
    // Recorded as nobody: a segment file appears within a few seconds.
    await waitFor(
      () => segments(dataDir).length > 0,
      20_000,
      () => `a segment in ${dataDir}/history; stderr:\n${agent.stderr()}`,
    );
    const exit = await agent.stop('SIGTERM', 15_000);
    assert.equal(exit.code, 0, JSON.stringify(exit));

    const after = treeState(dataDir);
    for (const [entry, state] of foreign) assert.equal(after.get(entry), state, `${entry}: owner, mode and content unchanged`);
    const added = [...after.keys()].filter((entry) => !foreign.has(entry));
    assert.ok(added.includes(`./${MARKER_FILE}`) && added.includes(`./${HISTORY_DIR}`), `added: ${added.join(', ')}`);
    for (const entry of added) assert.equal(lstatSync(join(dataDir, entry)).uid, NOBODY, `${entry}: blkheat's, so nobody's`);
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false, 'the lock was removed at exit, as nobody');
  },
);

test(
  'an agent started on a fresh directory creates it; started again on it, it recognises its marker and starts',
  { timeout: 120_000 },
  async (t: TestContextLike) => {
    if (!needsRoot(t)) return;
    const root = tempDir(t);
    chmodSync(root, 0o755);
    const dataDir = join(root, 'fresh', 'data');

    const first = await startRealAgent(t, dataDir);
    assert.match(first.stderr(), new RegExp(`serve: data directory ${dataDir} \\(created for nobody\\)`));
    await waitFor(
      () => segments(dataDir).length > 0,
      20_000,
      () => `a segment in ${dataDir}/history; stderr:\n${first.stderr()}`,
    );
    assert.equal((await first.stop('SIGTERM', 15_000)).code, 0);
    assert.equal(lstatSync(join(root, 'fresh')).uid, 0, 'a parent it created stays root’s');
    assert.equal(lstatSync(join(root, 'fresh')).mode & 0o777, 0o755);
    for (const entry of ['', MARKER_FILE, HISTORY_DIR, ...segments(dataDir).map((s) => join(HISTORY_DIR, s))]) {
      assert.equal(lstatSync(join(dataDir, entry)).uid, NOBODY, `${entry || 'the directory'}: nobody's`);
    }

    const second = await startRealAgent(t, dataDir);
    assert.match(second.stderr(), new RegExp(`serve: data directory ${dataDir} \\(blkheat's\\)`));
    assert.match(second.stderr(), /now running as nobody/);
    assert.equal((await second.stop('SIGTERM', 15_000)).code, 0);
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false);
  },
);

// The real `serve` refusing the data directories it must never take over, before it loads any
// probe: a foreign tree, a symbolic link, an empty value, a path under /proc, and a relative
// path resolved and printed; and a --disk that is not here, before any data directory is made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isRoot, NOBODY } from '@blkheat/testkit';
import { MARKER_FILE } from '../src/service/datadir.js';
import { LOCK_FILE } from '../src/service/lock.js';
import { nobodyOrSkip, owner, plantForeignTree, serveUntilRefused, tempDir, treeState } from './datadir-fixtures.js';

test('serve refuses an existing foreign tree (a root-only 0600 file in it): exit 1, the fix, and nothing in it changes owner or content', async (t) => {
  const dataDir = tempDir(t);
  const secret = plantForeignTree(dataDir);
  const before = treeState(dataDir);
  const r = await serveUntilRefused(['--data-dir', dataDir]);
  t.diagnostic(r.stderr.trim());
  assert.equal(r.status, 1, `exit ${r.status} ${r.signal ?? ''}`);
  assert.match(r.stderr, new RegExp(`--data-dir ${dataDir} is not empty and is not blkheat's: it holds notes, secret\\.key`));
  assert.match(r.stderr, /Fix: .*--adopt-data-dir/);
  assert.doesNotMatch(r.stdout, /listening on/);
  assert.deepEqual(treeState(dataDir), before, 'no owner, mode or content changed; nothing added');
  if (isRoot()) assert.equal(owner(secret), '0:0 600');
});

test('serve refuses a symlinked data directory, and the tree it points to is unchanged (empty or not)', async (t) => {
  const root = tempDir(t);
  const full = join(root, 'full');
  mkdirSync(full);
  plantForeignTree(full);
  const empty = join(root, 'empty'); // followed, an empty target would be taken
  mkdirSync(empty);
  for (const target of [full, empty]) {
    const link = join(root, `link-to-${relative(root, target)}`);
    symlinkSync(target, link);
    const before = treeState(root);
    const r = await serveUntilRefused(['--data-dir', link]);
    t.diagnostic(r.stderr.trim());
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      new RegExp(`--data-dir ${link} is a symbolic link \\(to ${target}\\).*Fix: pass the directory itself, --data-dir ${target}\\.`),
    );
    assert.deepEqual(treeState(root), before, `${target}: unchanged`);
  }
});

test('serve refuses --data-dir "": the current directory gets no history/ and keeps its owner', async (t) => {
  const cwd = tempDir(t);
  writeFileSync(join(cwd, 'work.txt'), 'mine');
  const before = treeState(cwd);
  const r = await serveUntilRefused(['--data-dir', ''], { cwd });
  assert.equal(r.status, 2, 'a usage error');
  assert.equal(r.stderr.trim(), 'blkheat serve: --data-dir: empty; give a directory, e.g. --data-dir /var/lib/blkheat');
  assert.deepEqual(treeState(cwd), before);
});

test('serve --data-dir /proc/blkheat-x exits at once with a message naming the path and the errno', async () => {
  const r = await serveUntilRefused(['--data-dir', '/proc/blkheat-x'], { timeoutMs: 15_000 });
  assert.equal(r.signal, null, 'it exited by itself (did not hang until the timeout)');
  assert.ok(r.ms < 5000, `${r.ms} ms`);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^blkheat serve: --data-dir \/proc\/blkheat-x: creating \/proc\/blkheat-x: ENOENT/m);
  assert.equal(existsSync('/proc/blkheat-x'), false);
});

test('serve resolves a relative --data-dir against the current directory and prints it in the start-up log', async (t) => {
  const nobody = nobodyOrSkip(t);
  if (!nobody) return;
  const cwd = tempDir(t);
  chmodSync(cwd, 0o755);
  const dataDir = join(cwd, 'rel', 'data');
  mkdirSync(dataDir, { recursive: true });
  chownSync(dataDir, NOBODY, nobody.gid);
  // Only agent.pid, held by a live process (this test): a directory of an older version's, and
  // a lock the agent cannot take, so that it stops after preparing the directory, before probes.
  writeFileSync(join(dataDir, LOCK_FILE), `${process.pid}\n`);
  const r = await serveUntilRefused(['--data-dir', 'rel/data/'], { cwd });
  t.diagnostic(r.stderr.trim());
  assert.equal(r.status, 1);
  assert.match(
    r.stderr,
    new RegExp(`serve: data directory ${dataDir} \\(blkheat's, from a version before \\.blkheat-data-dir: marked now\\)`),
  );
  assert.match(r.stderr, new RegExp(`another blkheat agent \\(pid ${process.pid}\\) is using ${dataDir};`));
  assert.equal(statSync(join(dataDir, MARKER_FILE)).uid, NOBODY, 'the marker it wrote is nobody’s');
  assert.equal(readFileSync(join(dataDir, LOCK_FILE), 'utf8'), `${process.pid}\n`, 'the live lock is left alone');
});

test('serve --disk with a disk that is not here: exit 1 naming it and the disks that are, before any data directory is made', async (t) => {
  const dataDir = join(tempDir(t), 'not-made');
  const r = await serveUntilRefused(['--data-dir', dataDir, '--disk', 'no-such-disk']);
  t.diagnostic(r.stderr.trim());
  assert.equal(r.status, 1, `exit ${r.status} ${r.signal ?? ''}`);
  assert.match(r.stderr, /disk 'no-such-disk' does not exist \(disks here: .+\)/);
  assert.doesNotMatch(r.stdout, /listening on/);
  assert.equal(existsSync(dataDir), false, 'the data directory was not made');
});

// The data directory the agent never takes over: in-process tests of how --data-dir is
// recognised, created and owned. The real `serve` refusing the bad cases is in
// serve-datadir-refusals.test.ts; the cases that need a started agent in serve-datadir-start.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRoot, mountTmpfs, NOBODY, type CleanupContext } from '@blkheat/testkit';
import { classifyDataDir, DataDirError, HISTORY_DIR, MARKER_FILE, prepareDataDir } from '../src/service/datadir.js';
import { createDataDirPath } from '../src/service/datadir-fs.js';
import type { TargetUser } from '../src/service/drop-root.js';
import { UsageError } from '../src/service/flags.js';
import { DataDirLock, LOCK_FILE } from '../src/service/lock.js';
import { helpText, parseServeArgs, type ServeOptions } from '../src/service/options.js';
import { nobodyOrSkip, owner, plantForeignTree, tempDir, treeState, type Skippable } from './datadir-fixtures.js';

/** nobody, and a temp directory of root's that nobody may search (0755), to make data dirs in; undefined when skipped. */
function nobodyAndRoot(t: Skippable & CleanupContext): { nobody: TargetUser; root: string } | undefined {
  const nobody = nobodyOrSkip(t);
  if (!nobody) return undefined;
  const root = tempDir(t);
  chmodSync(root, 0o755);
  return { nobody, root };
}

function refusal(re: RegExp): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof DataDirError, `a DataDirError, got ${String(e)}`);
    assert.match(e.message, re);
    return true;
  };
}

const noLog = (): void => {};

test('--data-dir is parsed: "" refused, a relative path made absolute from the current directory, --adopt-data-dir off by default; --help says the rules', () => {
  const parsed = (argv: string[]): ServeOptions => {
    const o = parseServeArgs(argv, { isRoot: true });
    assert.notEqual(o, 'help');
    return o as ServeOptions;
  };
  assert.throws(
    () => parseServeArgs(['--data-dir', ''], { isRoot: true }),
    (e: unknown) => e instanceof UsageError && /^--data-dir: empty; give a directory/.test(e.message),
  );
  assert.equal(parsed(['--data-dir', 'some/rel/']).dataDir, join(process.cwd(), 'some', 'rel'));
  assert.equal(parsed([]).adoptDataDir, false);
  assert.equal(parsed(['--adopt-data-dir']).adoptDataDir, true);
  const help = helpText();
  for (const words of ['--adopt-data-dir', MARKER_FILE, 'a relative DIR is', 'symbolic link', 'changes the owner of nothing'])
    assert.ok(help.includes(words), `--help says "${words}"`);
});

test('what a --data-dir is: missing, empty (lost+found too), blkheat’s (marked or from an older version), or refused', (t) => {
  const root = tempDir(t);
  assert.equal(classifyDataDir(join(root, 'missing'), false), 'missing');

  const empty = join(root, 'empty');
  mkdirSync(empty);
  assert.equal(classifyDataDir(empty, false), 'empty');
  mkdirSync(join(empty, 'lost+found'));
  assert.equal(classifyDataDir(empty, false), 'empty', 'a fresh filesystem holds only lost+found');

  const marked = join(root, 'marked');
  mkdirSync(marked);
  writeFileSync(join(marked, MARKER_FILE), '');
  writeFileSync(join(marked, 'operator-notes.txt'), 'the marker makes it blkheat’s whatever else is there');
  assert.equal(classifyDataDir(marked, false), 'blkheat');

  const legacy = join(root, 'legacy');
  mkdirSync(join(legacy, HISTORY_DIR), { recursive: true });
  writeFileSync(join(legacy, LOCK_FILE), '1\n');
  assert.equal(classifyDataDir(legacy, false), 'legacy', 'what versions before the marker left');

  const foreign = join(root, 'foreign');
  mkdirSync(foreign);
  plantForeignTree(foreign);
  assert.throws(
    () => classifyDataDir(foreign, false),
    refusal(
      /^--data-dir \S+foreign is not empty and is not blkheat's: it holds notes, secret\.key and no \.blkheat-data-dir.*Fix: .*--adopt-data-dir/,
    ),
  );
  assert.equal(classifyDataDir(foreign, true), 'adopted');

  // history/ that is a link is no older version's: foreign.
  const linkedHistory = join(root, 'linked-history');
  mkdirSync(linkedHistory);
  symlinkSync(empty, join(linkedHistory, HISTORY_DIR));
  assert.throws(() => classifyDataDir(linkedHistory, false), refusal(/is not empty and is not blkheat's/));

  // A link is refused even with --adopt-data-dir: its target is what would be taken over.
  const link = join(root, 'link');
  symlinkSync(empty, link);
  for (const adopt of [false, true]) {
    assert.throws(
      () => classifyDataDir(link, adopt),
      refusal(
        new RegExp(`^--data-dir ${link} is a symbolic link \\(to ${empty}\\).*Fix: pass the directory itself, --data-dir ${empty}\\.$`),
      ),
    );
  }
  const file = join(root, 'file');
  writeFileSync(file, 'x');
  assert.throws(() => classifyDataDir(file, true), refusal(/exists and is not a directory/));
});

test('a missing data directory is created one level at a time: parents 0755 and root’s, itself 0700, and only what blkheat creates is nobody’s', (t) => {
  const nobody = nobodyOrSkip(t);
  if (!nobody) return;
  const root = tempDir(t);
  chmodSync(root, 0o755); // mkdtemp's 0700 would keep nobody out
  const dataDir = join(root, 'a', 'b', 'data');
  const logs: string[] = [];
  const ready = prepareDataDir(dataDir, nobody, false, (l) => logs.push(l));
  assert.equal(ready.kind, 'created');
  assert.equal(ready.historyDir, join(dataDir, HISTORY_DIR));
  assert.equal(owner(join(root, 'a')), '0:0 755');
  assert.equal(owner(join(root, 'a', 'b')), '0:0 755');
  assert.equal(owner(dataDir), `${NOBODY}:${nobody.gid} 700`);
  assert.equal(owner(join(dataDir, MARKER_FILE)), `${NOBODY}:${nobody.gid} 644`);
  assert.equal(owner(join(dataDir, HISTORY_DIR)), `${NOBODY}:${nobody.gid} 700`);
  assert.match(readFileSync(join(dataDir, MARKER_FILE), 'utf8'), /blkheat's data directory/);
  assert.deepEqual(logs, [`serve: data directory ${dataDir} (created for nobody)`]);

  // Started again: recognised by its marker, nothing created, nothing changes owner.
  const before = treeState(root);
  const again: string[] = [];
  assert.equal(prepareDataDir(dataDir, nobody, false, (l) => again.push(l)).kind, 'blkheat');
  assert.deepEqual(treeState(root), before);
  assert.deepEqual(again, [`serve: data directory ${dataDir} (blkheat's)`]);
});

test('an empty directory of root’s becomes blkheat’s; an empty one of another user’s keeps its owner', (t) => {
  const setup = nobodyAndRoot(t);
  if (!setup) return;
  const { nobody, root } = setup;
  const mine = join(root, 'mine');
  mkdirSync(mine, { mode: 0o700 });
  const logs: string[] = [];
  assert.equal(prepareDataDir(mine, nobody, false, (l) => logs.push(l)).kind, 'empty');
  assert.equal(owner(mine), `${NOBODY}:${nobody.gid} 700`, 'given to nobody: it held nothing');
  assert.match(logs.join('\n'), /was empty: now blkheat's, given to nobody/);

  // Someone else's (a daemon user's, writable by nobody through its mode): used, not taken.
  const theirs = join(root, 'theirs');
  mkdirSync(theirs);
  chownSync(theirs, 1, 1);
  chmodSync(theirs, 0o777);
  prepareDataDir(theirs, nobody, false, noLog);
  assert.equal(owner(theirs), '1:1 777');
  assert.equal(owner(join(theirs, MARKER_FILE)), `${NOBODY}:${nobody.gid} 644`);
});

test('--adopt-data-dir on a foreign tree: nothing in it changes owner; a directory nobody cannot write is refused with the chown, untouched', (t) => {
  const setup = nobodyAndRoot(t);
  if (!setup) return;
  const { nobody, root } = setup;
  const dataDir = join(root, 'srv');
  mkdirSync(dataDir, { mode: 0o700 });
  plantForeignTree(dataDir);
  const before = treeState(dataDir);
  assert.throws(
    () => prepareDataDir(dataDir, nobody, true, noLog),
    refusal(
      new RegExp(
        `^--data-dir ${dataDir}: user nobody \\(uid ${NOBODY}\\) cannot write in it \\(EACCES\\)\\. Fix: chown nobody ${dataDir} \\(that directory only: blkheat never changes the owner of files it did not create\\)`,
      ),
    ),
  );
  assert.deepEqual(treeState(dataDir), before, 'refused: nothing added, nothing changed');

  chownSync(dataDir, NOBODY, nobody.gid); // the fix the message names
  const fixed = treeState(dataDir);
  const logs: string[] = [];
  assert.equal(prepareDataDir(dataDir, nobody, true, (l) => logs.push(l)).kind, 'adopted');
  const after = treeState(dataDir);
  for (const [entry, state] of fixed) assert.equal(after.get(entry), state, `${entry} unchanged`);
  assert.equal(owner(join(dataDir, MARKER_FILE)), `${NOBODY}:${nobody.gid} 644`);
  assert.equal(owner(join(dataDir, HISTORY_DIR)), `${NOBODY}:${nobody.gid} 700`);
  assert.match(logs.join('\n'), /used as --adopt-data-dir says: nothing in it changed owner; what blkheat adds is nobody's/);
  // Once marked it is blkheat's: the next start needs no flag.
  assert.equal(prepareDataDir(dataDir, nobody, false, noLog).kind, 'blkheat');
});

test('a directory from an older version (history/ and agent.pid, nobody’s) is marked; nothing in it changes owner', (t) => {
  const setup = nobodyAndRoot(t);
  if (!setup) return;
  const { nobody, root } = setup;
  const dataDir = join(root, 'old');
  mkdirSync(join(dataDir, HISTORY_DIR), { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, HISTORY_DIR, 't1-1750000000.seg'), 'segment', { mode: 0o600 });
  writeFileSync(join(dataDir, LOCK_FILE), '999999999\n');
  for (const p of [dataDir, join(dataDir, HISTORY_DIR), join(dataDir, HISTORY_DIR, 't1-1750000000.seg')]) chownSync(p, NOBODY, nobody.gid);
  const before = treeState(dataDir);
  const logs: string[] = [];
  assert.equal(prepareDataDir(dataDir, nobody, false, (l) => logs.push(l)).kind, 'legacy');
  const after = treeState(dataDir);
  for (const [entry, state] of before) assert.equal(after.get(entry), state, `${entry} unchanged`);
  assert.equal(owner(join(dataDir, MARKER_FILE)), `${NOBODY}:${nobody.gid} 644`);
  assert.match(logs.join('\n'), /from a version before \.blkheat-data-dir: marked now/);
});

test('blkheat’s own directory that nobody cannot write (left by --user root) is refused with chown -R, and not changed', (t) => {
  const setup = nobodyAndRoot(t);
  if (!setup) return;
  const { nobody, root } = setup;
  const dataDir = join(root, 'was-root');
  prepareDataDir(dataDir, undefined, false, noLog); // as --user root would: root's
  writeFileSync(join(dataDir, HISTORY_DIR, 't1-1750000000.seg'), 'segment', { mode: 0o600 });
  const before = treeState(dataDir);
  assert.throws(
    () => prepareDataDir(dataDir, nobody, false, noLog),
    refusal(new RegExp(`cannot write in it \\(EACCES\\)\\. Fix: chown -R nobody ${dataDir} \\(everything in it is blkheat's\\)`)),
  );
  assert.deepEqual(treeState(dataDir), before);
});

test('a refusal leaves the path as it was: what was created is removed, an empty directory taken is given back', (t) => {
  const nobody = nobodyOrSkip(t);
  if (!nobody) return;
  const locked = tempDir(t); // root's 0700: nobody may not search it
  chmodSync(locked, 0o700);
  const missing = join(locked, 'x', 'data');
  assert.throws(() => prepareDataDir(missing, nobody, false, noLog), refusal(new RegExp(`${locked} is not searchable by nobody`)));
  assert.equal(existsSync(join(locked, 'x')), false, 'the directories it created are gone');

  const empty = join(locked, 'empty');
  mkdirSync(empty, { mode: 0o711 });
  assert.throws(() => prepareDataDir(empty, nobody, false, noLog), refusal(/is not searchable by nobody/));
  assert.equal(owner(empty), '0:0 711', 'root’s again');
  assert.equal(existsSync(join(empty, MARKER_FILE)), false);
});

test('every path error is one message naming the path and the errno, at once: /proc, a file in the way, a long name, a read-only mount', (t) => {
  const root = tempDir(t);
  const cases: [string, RegExp][] = [
    ['/proc/blkheat-x', /^--data-dir \/proc\/blkheat-x: creating \/proc\/blkheat-x: ENOENT \(.*\/proc.*\)\. Fix: /],
    [join(root, 'file', 'data'), /: reaching \S+\/file\/data: ENOTDIR/],
    [join(root, 'a'.repeat(300)), /: reaching \S+: ENAMETOOLONG \(name too long\)/],
  ];
  writeFileSync(join(root, 'file'), 'x');
  for (const [dir, re] of cases) {
    const started = Date.now();
    assert.throws(() => prepareDataDir(dir, undefined, false, noLog), refusal(re), dir);
    assert.ok(Date.now() - started < 2000, `${dir}: at once`);
  }
  // Met while creating, one level at a time: the level is named, and what was made is removed.
  assert.throws(
    () => createDataDirPath(join(root, 'file', 'x', 'y'), undefined),
    refusal(new RegExp(`: ${root}/file is in the way and is not a directory \\(ENOTDIR\\)`)),
  );
  assert.throws(() => createDataDirPath(join(root, 'p', 'a'.repeat(300), 'data'), undefined), refusal(/: reaching \S+: ENAMETOOLONG/));
  assert.equal(existsSync(join(root, 'p')), false, 'a failed creation leaves no parent behind');

  if (!isRoot()) return; // mounting needs root
  const ro = mkdtempSync(join(tmpdir(), 'blkheat-datadir-ro-'));
  const unmount = mountTmpfs(ro, 1);
  t.after(() => {
    unmount();
    rmSync(ro, { recursive: true, force: true });
  });
  const remount = spawnSync('mount', ['-o', 'remount,ro', ro], { encoding: 'utf8' });
  assert.equal(remount.status, 0, remount.stderr);
  assert.throws(
    () => prepareDataDir(join(ro, 'data'), undefined, false, noLog),
    refusal(new RegExp(`creating ${ro}/data: EROFS \\(read-only filesystem\\)`)),
  );
});

test('the lock file is nobody’s from its creation, and whatever else sits at its name cannot stall or redirect it', (t) => {
  const nobody = nobodyOrSkip(t);
  if (!nobody) return;
  const dir = tempDir(t);
  const lock = DataDirLock.acquire(dir, nobody);
  assert.equal(owner(join(dir, LOCK_FILE)), `${NOBODY}:${nobody.gid} 644`);
  assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), `${process.pid}\n`);
  lock.release();
  assert.equal(existsSync(join(dir, LOCK_FILE)), false);

  // A link at its name: replaced, its target untouched.
  const target = join(dir, 'elsewhere');
  writeFileSync(target, 'not a pid', { mode: 0o600 });
  const targetBefore = owner(target);
  symlinkSync(target, join(dir, LOCK_FILE));
  DataDirLock.acquire(dir, nobody).release();
  assert.equal(owner(target), targetBefore);
  assert.equal(readFileSync(target, 'utf8'), 'not a pid');

  // A FIFO at its name: a plain read would wait for a writer for ever.
  const fifo = spawnSync('mkfifo', [join(dir, LOCK_FILE)]);
  assert.equal(fifo.status, 0);
  DataDirLock.acquire(dir, nobody).release();

  // A live process's pid: refused, as before.
  writeFileSync(join(dir, LOCK_FILE), '1\n');
  assert.throws(() => DataDirLock.acquire(dir, nobody), /another blkheat agent \(pid 1\) is using/);
  rmSync(join(dir, LOCK_FILE));
});

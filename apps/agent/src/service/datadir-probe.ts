/**
 * Checks, before the agent serves, that the user it will run as can write its data directory.
 * Once privileges are dropped, a directory that user cannot reach (a parent it may not search,
 * a read-only mount) would silently stop history and leave files behind: better to refuse to
 * start, saying which directory, which user and how to fix it.
 */
import { spawnSync } from 'node:child_process';
import { DataDirError } from './datadir-fs.js';
import type { TargetUser } from './drop-root.js';

/**
 * Run as the target user: walks from `/` to the first directory checking search permission,
 * then creates and removes a file in each directory given. Prints one JSON line: {ok} or
 * {ok: false, code, path, what}.
 */
const PROBE = `
const fs = require('node:fs');
const path = require('node:path');
const dirs = process.argv.slice(1);
const out = (r) => process.stdout.write(JSON.stringify(r));
let at = '/';
for (const part of dirs[0].split('/').filter(Boolean)) {
  try { fs.accessSync(at, fs.constants.X_OK); } catch (e) { out({ ok: false, code: e.code, path: at, what: 'search' }); process.exit(0); }
  at = path.join(at, part);
}
for (const dir of dirs) {
  const probe = path.join(dir, '.blkheat-write-test-' + process.pid);
  try { fs.writeFileSync(probe, 'x', { flag: 'wx' }); fs.unlinkSync(probe); } catch (e) { out({ ok: false, code: e.code, path: dir, what: 'write' }); process.exit(0); }
}
out({ ok: true });
`;

interface ProbeResult {
  readonly ok: boolean;
  readonly code?: string;
  readonly path?: string;
  readonly what?: 'search' | 'write';
}

export interface ProbeOptions {
  /** Directories inside the data directory that must be writable too (an existing history/). */
  readonly alsoWritable?: readonly string[];
  /**
   * Whether everything in the directory is blkheat's (a directory it created, or marked as its
   * own): the fix may then be `chown -R`; in an adopted directory it names the directory only.
   */
  readonly ownContents: boolean;
}

/**
 * Checks that `user` (or the current user) can reach and write `dataDir` (and `alsoWritable`).
 * Throws DataDirError with the fix when it cannot; a full disk is not refused (history reports
 * it while it lasts: HistoryHealth). Changes nothing.
 */
export function checkDataDirWritable(
  dataDir: string,
  user: TargetUser | undefined,
  log: (line: string) => void,
  options: ProbeOptions,
): void {
  const r = spawnSync(process.execPath, ['-e', PROBE, dataDir, ...(options.alsoWritable ?? [])], {
    encoding: 'utf8',
    timeout: 10_000,
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  let result: ProbeResult | undefined;
  try {
    result = JSON.parse(r.stdout) as ProbeResult;
  } catch {
    result = undefined;
  }
  const who = user ? `user ${user.name} (uid ${user.uid})` : 'this user';
  if (!result) {
    throw new DataDirError(
      `--data-dir ${dataDir}: could not check that ${who} can write it (${r.error?.message ?? (r.stderr.trim() || `probe exited ${r.status}`)})`,
    );
  }
  if (result.ok) return;
  if (result.code === 'ENOSPC' || result.code === 'EDQUOT') {
    log(`serve: --data-dir ${dataDir} is full (${result.code}): serving live; history is not recorded until there is space`);
    return;
  }
  const at = result.path ?? dataDir;
  const instead = user ? `pass a --data-dir ${user.name} can write, or --user another user` : 'or pass another --data-dir';
  let fix: string;
  if (result.what === 'search') {
    fix = user ? `give ${user.name} access (e.g. chmod o+x ${at}), ${instead}` : `make it reachable, ${instead}`;
  } else if (!user) {
    fix = `make ${at} writable, ${instead}`;
  } else if (options.ownContents) {
    fix = `chown -R ${user.name} ${dataDir} (everything in it is blkheat's), ${instead}`;
  } else {
    fix = `chown ${user.name} ${at} (that directory only: blkheat never changes the owner of files it did not create), ${instead}`;
  }
  const problem =
    result.what === 'search'
      ? `${who} cannot reach it: ${at} is not searchable by ${user?.name ?? 'this user'} (${result.code})`
      : `${who} cannot write in ${at === dataDir ? 'it' : at} (${result.code})`;
  throw new DataDirError(`--data-dir ${dataDir}: ${problem}. Fix: ${fix}.`);
}

/**
 * Checks, before the agent serves, that the user it will run as can write its data directory.
 * Once privileges are dropped, a directory that user cannot reach (a parent it may not search,
 * a read-only mount) would silently stop history and leave files behind: better to refuse to
 * start, saying which directory, which user and how to fix it.
 */
import { spawnSync } from 'node:child_process';
import { chownSync } from 'node:fs';
import type { TargetUser } from './drop-root.js';

/**
 * Run as the target user: walks from `/` to the data directory checking search permission, then
 * creates and removes a file in it. Prints one JSON line: {ok} or {ok: false, code, path, what}.
 */
const PROBE = `
const fs = require('node:fs');
const path = require('node:path');
const dir = process.argv[1];
const out = (r) => process.stdout.write(JSON.stringify(r));
let at = '/';
for (const part of dir.split('/').filter(Boolean)) {
  try { fs.accessSync(at, fs.constants.X_OK); } catch (e) { out({ ok: false, code: e.code, path: at, what: 'search' }); process.exit(0); }
  at = path.join(at, part);
}
const probe = path.join(dir, '.blkheat-write-test-' + process.pid);
try { fs.writeFileSync(probe, 'x'); fs.unlinkSync(probe); } catch (e) { out({ ok: false, code: e.code, path: dir, what: 'write' }); process.exit(0); }
out({ ok: true });
`;

interface ProbeResult {
  readonly ok: boolean;
  readonly code?: string;
  readonly path?: string;
  readonly what?: 'search' | 'write';
}

export class DataDirError extends Error {}

/**
 * Gives the data directory itself to `user` (the files in it follow once the probes are attached)
 * and checks that `user` (or the current user) can write it. Throws DataDirError with the fix
 * when it cannot; a full disk is not refused (history reports it while it lasts: HistoryHealth).
 */
export function checkDataDirWritable(dataDir: string, user: TargetUser | undefined, log: (line: string) => void): void {
  if (user) chownSync(dataDir, user.uid, user.gid);
  const r = spawnSync(process.execPath, ['-e', PROBE, dataDir], {
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
  const fix = user
    ? `give ${user.name} access (e.g. chmod o+x on ${result.path ?? dataDir}, or chown), pass a --data-dir ${user.name} can write, or --user another user`
    : `make it writable or pass another --data-dir`;
  const problem =
    result.what === 'search'
      ? `${who} cannot reach it: ${result.path} is not searchable by ${user?.name ?? 'this user'} (${result.code})`
      : `${who} cannot write in it (${result.code})`;
  throw new DataDirError(`--data-dir ${dataDir}: ${problem}. Fix: ${fix}.`);
}

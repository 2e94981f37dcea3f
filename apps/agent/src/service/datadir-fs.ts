/**
 * The file-system steps of preparing --data-dir. Each failure is one DataDirError naming the
 * path and the errno: never a hang (node's recursive mkdir loops for ever where mkdir answers
 * ENOENT, as on /proc), and an owner is only ever given to what was just created here, through
 * the descriptor it was created or opened with (O_NOFOLLOW: never what a link points to).
 */
import { chmodSync, closeSync, constants, fchmodSync, fchownSync, mkdirSync, openSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirError extends Error {}

export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** What an errno means where a data directory is being reached or created. */
const MEANING: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory: its filesystem does not allow creating it, as /proc does not',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only filesystem',
  ENOTDIR: 'a part of the path is not a directory',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many symbolic links',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
};

/** "--data-dir D: <doing> <path>: ECODE (meaning). Fix: …" */
export function pathError(dataDir: string, doing: string, path: string, e: unknown): DataDirError {
  const code = (e as NodeJS.ErrnoException).code ?? 'EIO';
  const meaning = MEANING[code] ?? (e instanceof Error ? e.message : String(e));
  return new DataDirError(
    `--data-dir ${dataDir}: ${doing} ${path}: ${code} (${meaning}). Fix: pass a --data-dir on a local filesystem that root can write.`,
  );
}

function codeOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/** Whether `path` is a directory (following links: parents such as /var/run may be links); false when missing. */
function isDirectory(dataDir: string, path: string): boolean {
  try {
    if (statSync(path).isDirectory()) return true;
  } catch (e) {
    if (codeOf(e) === 'ENOENT') return false;
    throw pathError(dataDir, 'reaching', path, e);
  }
  throw new DataDirError(`--data-dir ${dataDir}: ${path} is in the way and is not a directory (ENOTDIR). Fix: pass another --data-dir.`);
}

/** Sets mode and owner through a descriptor of the directory itself, never through a link. */
function giveDir(dataDir: string, path: string, mode: number | undefined, owner: Owner | undefined): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    throw pathError(dataDir, 'opening', path, e);
  }
  try {
    if (mode !== undefined) fchmodSync(fd, mode);
    if (owner) fchownSync(fd, owner.uid, owner.gid);
  } catch (e) {
    throw pathError(dataDir, 'setting the owner of', path, e);
  } finally {
    closeSync(fd);
  }
}

/** Removes directories this module created (deepest first), on a refusal: leave the path as it was. */
export function removeCreated(created: readonly string[]): void {
  for (const p of [...created].reverse()) {
    try {
      rmdirSync(p);
    } catch {
      // not empty or already gone: leave it
    }
  }
}

/**
 * Creates the missing data directory, one level at a time: missing parents 0755 (root's, as
 * system directories are), the directory itself 0700 and `owner`'s. Returns what it created,
 * outermost first. On an error it removes what it created and throws a DataDirError.
 */
export function createDataDirPath(dataDir: string, owner: Owner | undefined): string[] {
  const created: string[] = [];
  const parts = dataDir.split('/').filter(Boolean);
  let at = '/';
  try {
    for (const [i, part] of parts.entries()) {
      at = join(at, part);
      const last = i === parts.length - 1;
      if (!last && isDirectory(dataDir, at)) continue;
      try {
        mkdirSync(at, { mode: last ? 0o700 : 0o755 });
      } catch (e) {
        // A parent made meanwhile by someone else is fine; the data directory itself is not.
        if (codeOf(e) === 'EEXIST' && !last && isDirectory(dataDir, at)) continue;
        throw pathError(dataDir, 'creating', at, e);
      }
      created.push(at);
      // Exact modes whatever the umask: --user must be able to search the parents.
      if (last) giveDir(dataDir, at, 0o700, owner);
      else chmodSync(at, 0o755);
    }
  } catch (e) {
    removeCreated(created);
    throw e;
  }
  return created;
}

/** Gives an existing directory to `owner` (its mode kept), through its own descriptor. */
export function chownDir(dataDir: string, path: string, owner: Owner): void {
  giveDir(dataDir, path, undefined, owner);
}

/** Creates a directory inside the data directory, `mode` and `owner`'s from the start. */
export function createOwnedDir(dataDir: string, path: string, mode: number, owner: Owner | undefined): void {
  try {
    mkdirSync(path, { mode });
  } catch (e) {
    throw pathError(dataDir, 'creating', path, e);
  }
  giveDir(dataDir, path, mode, owner);
}

/**
 * Creates a new file (O_EXCL: never an existing file or a link), `owner`'s from the start;
 * returns its descriptor, which the caller writes and closes.
 */
export function createOwnedFile(path: string, mode: number, owner: Owner | undefined): number {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    if (owner) fchownSync(fd, owner.uid, owner.gid);
  } catch (e) {
    // A file of the wrong owner would be left for the next start to trip on: none.
    closeSync(fd);
    unlinkSync(path);
    throw e;
  }
  return fd;
}

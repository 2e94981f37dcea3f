/**
 * One agent per data directory: two writers appending to the same segment files would
 * corrupt them. The lock is a pid file created with O_EXCL; a lock left by a dead process
 * (kill -9, crash) is taken over.
 */
import { closeSync, constants, fstatSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createOwnedFile, type Owner } from './datadir-fs.js';

/** The lock's name in the data directory. */
export const LOCK_FILE = 'agent.pid';

export class DataDirLock {
  private readonly onExit = (): void => this.release();

  private constructor(readonly path: string) {}

  /**
   * Takes the lock. `owner` (the user the agent will become) owns the pid file from its
   * creation: the agent removes it at exit, once it is no longer root.
   */
  static acquire(dir: string, owner?: Owner): DataDirLock {
    const path = join(dir, LOCK_FILE);
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = createOwnedFile(path, 0o644, owner);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw lockError(path, 'creating', e);
        const pid = readPid(path);
        if (pid !== undefined && pid !== process.pid && alive(pid)) {
          throw new Error(`another blkheat agent (pid ${pid}) is using ${dir}; stop it or pass another --data-dir`);
        }
        try {
          unlinkSync(path); // stale: its owner is gone
        } catch (e2) {
          throw lockError(path, 'removing the stale', e2);
        }
        continue;
      }
      try {
        writeSync(fd, `${process.pid}\n`);
      } catch (e) {
        // A lock without a pid would read as stale to the next agent: leave none.
        closeSync(fd);
        unlinkSync(path);
        throw lockError(path, 'writing', e);
      }
      closeSync(fd);
      const lock = new DataDirLock(path);
      // Every exit path but kill -9 removes it: a second signal's immediate exit included.
      process.once('exit', lock.onExit);
      return lock;
    }
    throw new Error(`could not lock ${dir}`);
  }

  release(): void {
    // Released: no listener left behind (agents started and stopped in one process add up).
    process.off('exit', this.onExit);
    try {
      if (readPid(this.path) === process.pid) unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}

/**
 * The pid in a lock file; undefined when it holds none. Read without following a link, and
 * only a pid's worth: whatever sits at that name (a FIFO, /dev/zero) cannot stall the agent.
 */
function readPid(path: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(32);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const pid = Number(buf.subarray(0, n).toString('utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } finally {
    closeSync(fd);
  }
}

function lockError(path: string, operation: string, e: unknown): Error {
  const code = (e as NodeJS.ErrnoException).code ?? 'EIO';
  const hint = code === 'ENOSPC' || code === 'EDQUOT' ? ': its filesystem is full; free some space or pass another --data-dir' : '';
  return new Error(`${code} ${operation} the lock file ${path}${hint} (${e instanceof Error ? e.message : String(e)})`, { cause: e });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

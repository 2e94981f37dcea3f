/**
 * One agent per data directory: two writers appending to the same segment files would
 * corrupt them. The lock is a pid file created with O_EXCL; a lock left by a dead process
 * (kill -9, crash) is taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirLock {
  private constructor(readonly path: string) {}

  static acquire(dir: string): DataDirLock {
    const path = join(dir, 'agent.pid');
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openSync(path, 'wx', 0o644);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw lockError(path, 'creating', e);
        const pid = Number(readFileSync(path, 'utf8').trim());
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
          throw new Error(`another blkheat agent (pid ${pid}) is using ${dir}; stop it or pass another --data-dir`);
        }
        unlinkSync(path); // stale: its owner is gone
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
      process.once('exit', () => lock.release());
      return lock;
    }
    throw new Error(`could not lock ${dir}`);
  }

  release(): void {
    try {
      if (readFileSync(this.path, 'utf8').trim() === String(process.pid)) unlinkSync(this.path);
    } catch {
      // already gone
    }
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

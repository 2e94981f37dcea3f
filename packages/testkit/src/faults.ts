/**
 * Faults to inject into a running agent's surroundings: a filesystem held full, as a runaway
 * writer would hold it. Used by the history-fault tests and bench/soak.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

export interface FullFilesystem {
  /** Stops filling and deletes everything it wrote. Idempotent. */
  release(): void;
}

/**
 * Fills the filesystem of `dir` to the last block and keeps it full: whatever space appears (an
 * agent deleting old history to make room) is taken again within `everyMs`.
 */
export function holdFilesystemFull(dir: string, everyMs = 100): FullFilesystem {
  let n = 0;
  const files: string[] = [];
  const grab = (): void => {
    const f = join(dir, `.blkheat-filler-${process.pid}-${n++}`);
    files.push(f);
    // dd stops at ENOSPC (exit 1); what it wrote stays.
    spawnSync('dd', ['if=/dev/zero', `of=${f}`, 'bs=4k', 'status=none']);
  };
  grab();
  const timer = setInterval(grab, everyMs);
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      clearInterval(timer);
      for (const f of files) if (existsSync(f)) unlinkSync(f);
    },
  };
}

/** A tmpfs of `sizeMiB` mounted on `dir`; returns its unmount. */
export function mountTmpfs(dir: string, sizeMiB: number): () => void {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0755`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount tmpfs on ${dir}: ${r.stderr.trim()}`);
  return () => {
    spawnSync('umount', ['-l', dir]);
  };
}

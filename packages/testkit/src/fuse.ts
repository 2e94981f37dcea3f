/**
 * Loop devices with a latency the test controls: a loop device over a file on a FUSE
 * filesystem (assets/delayfs.py) whose daemon sleeps `delayMs` in every read and write.
 * Everything (loop device, mount, daemon, backing file) is torn down on close(), in t.after()
 * when a test context is given, and as a last resort at process exit.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resetLoopQueue, tryResetLoopQueue, type CleanupContext } from './loop.js';
import { waitFor } from './workload.js';

/** Debian's interpreter: the first python3 on PATH may be another one without fusepy. */
export const SYSTEM_PYTHON = '/usr/bin/python3';
const DELAYFS = fileURLToPath(new URL('../assets/delayfs.py', import.meta.url));

export interface DelayedLoopOptions {
  readonly delayMs: number;
  readonly sizeMiB: number;
  readonly t?: CleanupContext;
}

export interface DelayedLoopDevice {
  readonly path: string;
  readonly name: string;
  readonly dev: string;
  readonly mountpoint: string;
  /** Changes the delay of every following read and write. */
  setDelay(ms: number): void;
  /** Adds a delay in proportion to each read's and write's size (ms per MiB), on top of setDelay's. */
  setDelayPerMiB(ms: number): void;
  /** Reads overlapping bytes [start, end) of the device fail with EIO from now on. */
  failReads(start: number, end: number): void;
  /** Reads succeed again. */
  clearFailures(): void;
  /** The next read of the device waits until release() (at most 120 s). */
  holdNextRead(): void;
  /** "armed", "holding" (a read is waiting) or "idle". */
  holdState(): string;
  release(): void;
  close(): void;
}

const live = new Set<DelayedLoopDevice>();
let exitHook = false;

/** Why FUSE delay devices cannot work here, or undefined when they can. */
export function fuseUnavailable(): string | undefined {
  if (!existsSync('/dev/fuse')) return '/dev/fuse is missing (no FUSE support in this kernel)';
  if (!existsSync(SYSTEM_PYTHON)) return `${SYSTEM_PYTHON} is missing`;
  try {
    execFileSync(SYSTEM_PYTHON, ['-c', 'import fusepy'], { stdio: 'ignore' });
  } catch {
    return 'Debian package python3-fusepy is not installed';
  }
  return undefined;
}

export async function createDelayedLoopDevice(options: DelayedLoopOptions): Promise<DelayedLoopDevice> {
  const { delayMs, sizeMiB, t } = options;
  const workdir = mkdtempSync('/dev/shm/blkheat-fuse-');
  const mountpoint = join(workdir, 'mnt');
  const backing = join(workdir, 'data.img');
  execFileSync('mkdir', ['-p', mountpoint]);
  const daemon: ChildProcess = spawn(SYSTEM_PYTHON, [DELAYFS, mountpoint, backing, String(sizeMiB * 1024 * 1024), String(delayMs)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  daemon.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));

  let loopPath: string | undefined;
  const teardown = (): void => {
    // A held read would keep the loop device busy: let it go first.
    if (isMounted(mountpoint)) tryWrite(join(mountpoint, 'hold'), 'release\n');
    if (loopPath) {
      tryRun('losetup', ['-d', loopPath]);
      tryResetLoopQueue(basename(loopPath));
    }
    if (isMounted(mountpoint)) tryRun('umount', ['-l', mountpoint]);
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
    rmSync(workdir, { recursive: true, force: true });
  };

  let name: string;
  let dev: string;
  try {
    await waitFor(
      () => isMounted(mountpoint) || daemon.exitCode !== null,
      10_000,
      () => `delayfs to mount: ${stderr.trim()}`,
    );
    if (!isMounted(mountpoint)) throw new Error(`delayfs did not mount: ${stderr.trim() || `exit ${daemon.exitCode}`}`);
    loopPath = execFileSync('losetup', ['-f', '--show', join(mountpoint, 'disk.img')], { encoding: 'utf8' }).trim();
    name = basename(loopPath);
    resetLoopQueue(name);
    dev = readFileSync(`/sys/block/${name}/dev`, 'utf8').trim();
  } catch (err) {
    teardown();
    throw err;
  }
  let closed = false;
  const device: DelayedLoopDevice = {
    path: loopPath,
    name,
    dev,
    mountpoint,
    setDelay(ms: number) {
      writeFileSync(join(mountpoint, 'delay_ms'), `${ms}\n`);
    },
    setDelayPerMiB(ms: number) {
      writeFileSync(join(mountpoint, 'delay_per_mib_ms'), `${ms}\n`);
    },
    failReads(start: number, end: number) {
      writeFileSync(join(mountpoint, 'fail'), `${start} ${end}\n`);
    },
    clearFailures() {
      writeFileSync(join(mountpoint, 'fail'), 'clear\n');
    },
    holdNextRead() {
      writeFileSync(join(mountpoint, 'hold'), 'arm\n');
    },
    holdState() {
      return readFileSync(join(mountpoint, 'hold'), 'utf8').trim();
    },
    release() {
      writeFileSync(join(mountpoint, 'hold'), 'release\n');
    },
    close() {
      if (closed) return;
      closed = true;
      live.delete(device);
      teardown();
    },
  };
  live.add(device);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const d of live) d.close();
    });
  }
  t?.after(() => device.close());
  return device;
}

function isMounted(path: string): boolean {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[1] === path);
}

function tryWrite(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch {
    // Best effort during teardown.
  }
}

function tryRun(cmd: string, args: string[]): void {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
  } catch {
    // Best effort during teardown; the next step may still succeed.
  }
}

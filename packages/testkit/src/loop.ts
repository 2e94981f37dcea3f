/**
 * Loop devices over sparse files (tmpfs by default) for tests that need real block I/O without
 * touching a real disk. Every device is detached and its backing file deleted on close(), on the
 * test's t.after() when a test context is given (so a failing test still cleans up), and as a
 * last resort when the process exits. A process killed outright (SIGKILL, a machine restart
 * mid-run) cleans up nothing: the next process to create a device detaches what such dead
 * processes left attached.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The part of node:test's TestContext this module needs. */
export interface CleanupContext {
  after(fn: () => void | Promise<void>): void;
}

export interface LoopDeviceOptions {
  /** Size of the backing file (sparse: it takes memory only where written). */
  readonly sizeMiB: number;
  /** Directory of the backing file (default /dev/shm). */
  readonly dir?: string;
  /** Test context: the device is closed in t.after(), even when the test fails. */
  readonly t?: CleanupContext;
  /** Scan for partitions (losetup -P), so a partition table written to it makes partitions. */
  readonly partscan?: boolean;
}

export interface LoopDevice {
  /** e.g. /dev/loop3 */
  readonly path: string;
  /** e.g. loop3 (the name in /proc/diskstats and /sys/block) */
  readonly name: string;
  /** "MAJ:MIN", e.g. "7:3" */
  readonly dev: string;
  readonly major: number;
  readonly minor: number;
  readonly backingFile: string;
  readonly sizeBytes: number;
  /** Detaches the device and deletes the backing file. Idempotent. */
  close(): void;
}

const live = new Set<LoopDevice>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const device of live) {
      try {
        device.close();
      } catch {
        // Exiting anyway: nothing better to do than try the next one.
      }
    }
  });
}

/** The backing file of /dev/<name>, or undefined when it is not attached. */
function attachedTo(name: string): string | undefined {
  try {
    return readFileSync(`/sys/block/${name}/loop/backing_file`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Backing files are named `blkheat-loop-<pid of the creating process>-…`. */
const BACKING_PREFIX = 'blkheat-loop-';
let orphansReaped = false;

/**
 * Puts a loop device's queue back to the loop driver's defaults: no I/O scheduler (so
 * nr_requests is the driver's depth again). Done when a test device is made and when it is
 * closed. Loop devices outlive their backing files, so a test that set a scheduler (the
 * queue-time test sets mq-deadline and nr_requests 1024, the wbt test lowers wbt_lat_usec) would
 * otherwise hand it to every later
 * user of that device: requests waiting in a scheduler are
 * allocated but not with the driver, which moved in-flight counts and plugging.
 */
export function resetLoopQueue(name: string): void {
  writeFileSync(`/sys/block/${name}/queue/scheduler`, 'none');
  // And the driver's depth in its tags, which the scheduler switch does not restore (6.18): after
  // nr_requests 4 with no scheduler (the submit-wait test), going back to "none" reads
  // nr_requests 128 again while only 4 tags can be taken. Writing the value nr_requests already
  // has changes nothing, so the depth is set through a neighbour.
  const depth = Number(readFileSync(`/sys/block/${name}/mq/0/nr_tags`, 'utf8'));
  if (depth > 1) {
    writeFileSync(`/sys/block/${name}/queue/nr_requests`, String(depth - 1));
    writeFileSync(`/sys/block/${name}/queue/nr_requests`, String(depth));
  }
  // And writeback throttling's target (the wbt test lowers it): -1 is the kernel's default again.
  const wbt = `/sys/block/${name}/queue/wbt_lat_usec`;
  if (existsSync(wbt)) writeFileSync(wbt, '-1');
}

/** resetLoopQueue on teardown, where a device already gone is fine: what a test set leaves with it. */
export function tryResetLoopQueue(name: string): void {
  try {
    resetLoopQueue(name);
  } catch {
    // The device node went away with its detach: nothing left to reset.
  }
}

/** Detaches loop devices (and deletes their files) left attached by test processes that are gone. */
function reapOrphans(): void {
  if (orphansReaped) return;
  orphansReaped = true;
  for (const name of readdirSync('/sys/block').filter((n) => n.startsWith('loop'))) {
    const file = attachedTo(name);
    if (!file?.startsWith(BACKING_PREFIX, file.lastIndexOf('/') + 1)) continue;
    const pid = Number(basename(file).slice(BACKING_PREFIX.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid === process.pid || existsSync(`/proc/${pid}`)) continue;
    try {
      execFileSync('losetup', ['-d', `/dev/${name}`], { stdio: 'ignore' });
      rmSync(file, { force: true });
      process.stderr.write(`createLoopDevice: detached /dev/${name}, left attached by process ${pid} that is gone\n`);
    } catch {
      // Not ours to fight over (busy, or detached meanwhile): the next run tries again.
    }
  }
}

export function createLoopDevice(options: LoopDeviceOptions): LoopDevice {
  const { sizeMiB, dir = '/dev/shm', t, partscan = false } = options;
  if (!Number.isInteger(sizeMiB) || sizeMiB <= 0)
    throw new RangeError(`createLoopDevice: sizeMiB must be a positive integer, got ${sizeMiB}`);
  reapOrphans();
  const backingFile = join(dir, `${BACKING_PREFIX}${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.img`);
  const sizeBytes = sizeMiB * 1024 * 1024;
  const fd = openSync(backingFile, 'wx', 0o600);
  try {
    ftruncateSync(fd, sizeBytes);
  } finally {
    closeSync(fd);
  }

  let path: string;
  try {
    path = execFileSync('losetup', [...(partscan ? ['-P'] : []), '-f', '--show', backingFile], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (error) {
    rmSync(backingFile, { force: true });
    throw new Error(`createLoopDevice: losetup -f --show ${backingFile} failed (root needed)`, { cause: error });
  }

  const name = basename(path);
  let devText: string;
  try {
    resetLoopQueue(name);
    devText = readFileSync(`/sys/block/${name}/dev`, 'utf8').trim();
  } catch (error) {
    // Attached already: a device we cannot set up is not left behind.
    execFileSync('losetup', ['-d', path], { stdio: 'ignore' });
    rmSync(backingFile, { force: true });
    throw new Error(`createLoopDevice: cannot reset the queue of ${path} or read /sys/block/${name}/dev`, { cause: error });
  }
  const [major, minor] = devText.split(':').map(Number);
  if (major === undefined || minor === undefined || !Number.isInteger(major) || !Number.isInteger(minor)) {
    throw new Error(`createLoopDevice: unexpected /sys/block/${name}/dev content '${devText}'`);
  }

  let closed = false;
  const device: LoopDevice = {
    path,
    name,
    dev: devText,
    major,
    minor,
    backingFile,
    sizeBytes,
    close() {
      if (closed) return;
      closed = true;
      live.delete(device);
      try {
        // If the device is still open (a straggling reader), the kernel detaches it on last close.
        execFileSync('losetup', ['-d', path], { stdio: ['ignore', 'ignore', 'pipe'] });
      } catch (error) {
        // Already detached (by someone else, or a lazy detach that completed) is fine.
        if (attachedTo(name) === backingFile) throw new Error(`LoopDevice.close: losetup -d ${path} failed`, { cause: error });
      } finally {
        rmSync(backingFile, { force: true });
        tryResetLoopQueue(name);
      }
    },
  };
  live.add(device);
  installExitHook();
  t?.after(() => device.close());
  return device;
}

/**
 * Giving up root once the probes are attached. The collector keeps working through file
 * descriptors it already holds (BPF maps, ring buffers, links, the BPF-stats fd): reading or
 * updating a map through an open fd needs no capability on this kernel, only creating maps or
 * loading programs does. After setgroups([]), setgid() and setuid() from root to another
 * user, the kernel clears the permitted, effective and ambient capability sets, so the
 * process holds no capabilities at all (CapEff = CapPrm = CapAmb = 0 in /proc/self/status;
 * only the bounding set, which grants nothing by itself, stays as it was; serve-security.test.ts
 * reads them with testkit's readCredentials).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { switchUser } from '@blkheat/bpf-loader';

export interface TargetUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** Looks up a user by name (via getent, so NSS users work) or takes a numeric uid[:gid]. */
export function resolveUser(spec: string): TargetUser {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(spec);
  if (numeric) {
    const uid = Number(numeric[1]);
    const gid = numeric[2] !== undefined ? Number(numeric[2]) : (lookupPasswd(String(uid))?.gid ?? uid);
    return { name: spec, uid, gid };
  }
  const entry = lookupPasswd(spec);
  if (!entry) throw new Error(`--user: no user named "${spec}" on this system`);
  return entry;
}

function lookupPasswd(key: string): TargetUser | undefined {
  let line: string | undefined;
  try {
    line = execFileSync('getent', ['passwd', key], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0];
  } catch {
    // getent missing or no such user: fall back to /etc/passwd
    try {
      line = readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .find((l) => {
          const f = l.split(':');
          return f[0] === key || f[2] === key;
        });
    } catch {
      line = undefined;
    }
  }
  if (!line) return undefined;
  const f = line.split(':');
  const uid = Number(f[2]);
  const gid = Number(f[3]);
  if (!f[0] || !Number.isInteger(uid) || !Number.isInteger(gid)) return undefined;
  return { name: f[0], uid, gid };
}

/** Node's refusal to change user while its libuv may use io_uring (CVE-2024-22017). */
const IO_URING_REFUSAL = /io_uring/;

/**
 * Switches the whole process to the user: Node's own calls, or, where Node refuses them for
 * CVE-2024-22017 (a Node built on the system's libuv, as Debian 13's, refuses always: it cannot
 * ask libuv whether io_uring is in use), the addon's, provided libuv was told not to use io_uring
 * before the process started (UV_USE_IO_URING=0, as the package's /usr/bin/blkheat sets): a ring
 * set up while root would keep root's credentials after the switch.
 */
function switchProcessUser(user: TargetUser): 'node' | 'addon' {
  if (!process.setuid || !process.setgid || !process.setgroups) throw new Error('cannot change user on this platform');
  try {
    process.setgroups([]);
  } catch (err) {
    if (!(err instanceof Error) || !IO_URING_REFUSAL.test(err.message)) throw err;
    if (process.env['UV_USE_IO_URING'] !== '0')
      throw new Error(
        `${err.message} This Node.js will not change user while libuv may use io_uring; start blkheat with UV_USE_IO_URING=0 in its environment (the package's /usr/bin/blkheat does), or run it on a Node.js with its own libuv`,
      );
    switchUser(user.uid, user.gid);
    return 'addon';
  }
  process.setgid(user.gid);
  process.setuid(user.uid);
  return 'node';
}

/** Switches the whole process to the user for good; verifies root cannot be regained. */
export function dropPrivileges(user: TargetUser): void {
  const how = switchProcessUser(user);
  if (process.getuid?.() !== user.uid || process.geteuid?.() !== user.uid || process.getgid?.() !== user.gid) {
    throw new Error(`switching to ${user.name} (${user.uid}:${user.gid}) did not take effect`);
  }
  if (user.uid !== 0) {
    let regained = false;
    try {
      // The same calls as the switch: Node's refusal would say nothing of the kernel's.
      if (how === 'addon') switchUser(0, 0);
      else process.setuid?.(0);
      regained = true;
    } catch {
      // expected: root is gone for good
    }
    if (regained) throw new Error('dropped root but could switch back: refusing to run');
  }
}

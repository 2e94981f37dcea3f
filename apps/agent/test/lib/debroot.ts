/**
 * A fresh Debian root for the package test (package-deb.test.ts): made by debootstrap from
 * Debian's archive, and commands run inside it with chroot. Each command runs in a mount
 * namespace of its own where /proc, /sys and /dev are mounted into the root (the agent needs
 * BTF, sysfs, diskstats and the loop devices): the mounts go away with the command's last
 * process, so nothing is ever left mounted in the root, and deleting it cannot reach the host's
 * /dev or /sys. The namespace is entered with exec all the way down (unshare, sh, chroot), so
 * the process the test signals is the agent itself.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand, type CleanupContext, type CommandResult } from '@blkheat/testkit';

/** Mounts the kernel's file systems into the root, and optionally a Node binary over its /usr/bin/node; then chroot. */
const ENTER = [
  'set -e',
  'root=$1; node=$2; shift 2',
  'mount -t proc proc "$root/proc"',
  'mount --rbind /sys "$root/sys"',
  'mount --rbind /dev "$root/dev"',
  'if [ -n "$node" ]; then mount --bind "$node" "$root/usr/bin/node"; fi',
  'exec chroot "$root" "$@"',
].join('\n');

export interface InRootOptions {
  /** A Node binary of the host to run as the root's /usr/bin/node (in this command's namespace only). */
  readonly node?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
}

/** A clean environment for commands in the root: the host's PATH and locale mean nothing there. */
export function rootEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    LANG: 'C.UTF-8',
    DEBIAN_FRONTEND: 'noninteractive',
    ...extra,
  };
}

function enterArgs(root: string, argv: readonly string[], node = ''): string[] {
  return ['--mount', '--propagation', 'slave', 'sh', '-c', ENTER, 'enter', root, node, ...argv];
}

/** Runs argv inside the root; rejects with its stderr when it exits non-zero. */
export function runInRoot(root: string, argv: readonly string[], options: InRootOptions = {}): Promise<CommandResult> {
  return runCommand('unshare', enterArgs(root, argv, options.node), {
    env: options.env ?? rootEnv(),
    timeoutMs: options.timeoutMs ?? 120_000,
  });
}

/** Starts argv inside the root in the background (its pid is the command's own). */
export function spawnInRoot(root: string, argv: readonly string[], options: InRootOptions = {}): ChildProcess {
  return spawn('unshare', enterArgs(root, argv, options.node), { env: options.env ?? rootEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** debootstrap --variant=minbase: the smallest Debian that apt can install a package into. */
export async function debootstrap(root: string, suite: string, mirror: string, include: readonly string[]): Promise<void> {
  await runCommand('debootstrap', ['--variant=minbase', `--include=${include.join(',')}`, suite, root, mirror], { timeoutMs: 600_000 });
}

/** Mount points under `dir` (there should be none: every mount lives in a command's own namespace). */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}

/**
 * Deletes the root. Refuses while anything is mounted under it, and stays on its file system
 * regardless (rm --one-file-system): a mount left by a bug must never take the host's /dev with it.
 */
export function removeRoot(dir: string): void {
  const mounted = mountsUnder(dir);
  if (mounted.length > 0) throw new Error(`not deleting ${dir}: mounted under it: ${mounted.join(', ')}`);
  execFileSync('rm', ['-rf', '--one-file-system', dir]);
}

/** A root booted by systemd-nspawn: its own systemd as pid 1, the host's kernel (and BPF). */
export interface BootedRoot {
  /** Host pid of the root's pid 1 (its systemd). */
  init(): number;
  /** The booted system's processes (host pids). */
  processes(): { pid: number; cmdline: string }[];
  /** Runs argv inside the booted system (all its namespaces, its root), as root. */
  exec(argv: readonly string[]): Promise<CommandResult>;
  /** Shuts the system down (SIGTERM to systemd-nspawn) and removes what nspawn left on the host. Idempotent. */
  stop(): Promise<void>;
}

/** The processes descended from `ancestor` (its children, theirs, ...), with their command lines. */
export function descendants(ancestor: number): { pid: number; cmdline: string }[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command name, which may hold spaces and parentheses: state, ppid, ...
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const out: { pid: number; cmdline: string }[] = [];
  for (const pid of parent.keys()) {
    let p = parent.get(pid);
    while (p !== undefined && p > 1 && p !== ancestor) p = parent.get(p);
    if (p !== ancestor) continue;
    try {
      out.push({ pid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * Boots the root with systemd-nspawn, sharing the host's network (the test talks to its
 * services on 127.0.0.1). What the agent needs from the container: CAP_BPF and CAP_PERFMON in
 * its bounding set (CAP_SYS_ADMIN it has), bpf() through nspawn's system-call filter, and a
 * cgroup2 hierarchy (Debian 13's systemd has no cgroup v1; SYSTEMD_NSPAWN_UNIFIED_HIERARCHY).
 * --keep-unit --register=no: no systemd runs on this host to register with. `node`: a host
 * Node.js bound over the root's /usr/bin/node. nspawn leaves two empty cgroups (payload,
 * supervisor) beside the caller's and /run/systemd/nspawn: stop() removes what was not there before.
 */
export function bootRoot(t: CleanupContext, root: string, node?: string): BootedRoot {
  // The root shares the host's network: nothing in it may configure the host's interfaces.
  execFileSync('systemctl', [`--root=${root}`, 'mask', 'systemd-networkd.service', 'systemd-networkd.socket'], { stdio: 'ignore' });
  const machine = `blkheat-package-${process.pid}`;
  const residue = nspawnResidue();
  const before = new Set(residue.filter((p) => existsSync(p)));
  const args = ['-D', root, `--machine=${machine}`, '--register=no', '--keep-unit', '--console=read-only'];
  args.push('--capability=CAP_BPF,CAP_PERFMON,CAP_SYS_ADMIN', '--system-call-filter=bpf perf_event_open');
  if (node) args.push(`--bind-ro=${node}:/usr/bin/node`);
  const nspawn = spawn('systemd-nspawn', [...args, '--boot'], {
    env: { ...rootEnv(), SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  nspawn.stdout.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
  nspawn.stderr.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => nspawn.once('exit', () => resolve()));
  const init = (): number => {
    const pid = descendants(nspawn.pid ?? -1).find((p) => /^NSpid:\s+\d+\s+1$/m.test(readFileSync(`/proc/${p.pid}/status`, 'utf8')))?.pid;
    if (pid === undefined) throw new Error(`the booted root has no pid 1 (nspawn: ${log.slice(-2000)})`);
    return pid;
  };
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (nspawn.exitCode === null && nspawn.signalCode === null) {
        nspawn.kill('SIGTERM');
        const timer = setTimeout(() => nspawn.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      }
      for (const path of residue.filter((p) => !before.has(p) && existsSync(p))) {
        // A cgroup goes with rmdir (its files cannot be unlinked), innermost first.
        if (path.startsWith('/sys/fs/cgroup/')) execFileSync('find', [path, '-depth', '-type', 'd', '-exec', 'rmdir', '{}', '+']);
        else execFileSync('rm', ['-r', '--one-file-system', path]);
      }
    })());
  t.after(stop);
  return {
    init,
    processes: () => descendants(nspawn.pid ?? -1),
    exec: (argv) =>
      runCommand('nsenter', ['--target', String(init()), '--all', '--root', '--wd', ...argv], { env: rootEnv(), timeoutMs: 120_000 }),
    stop,
  };
}

/** What systemd-nspawn creates on the host: cgroups beside the caller's, and its runtime directory. */
function nspawnResidue(): string[] {
  const own = readFileSync('/proc/self/cgroup', 'utf8');
  const dirs: string[] = [];
  for (const [hierarchy, pattern] of [
    ['/sys/fs/cgroup/unified', /^0::(.*)$/m],
    ['/sys/fs/cgroup/systemd', /^\d+:name=systemd:(.*)$/m],
  ] as const) {
    const path = pattern.exec(own)?.[1];
    if (path !== undefined && existsSync(hierarchy)) for (const leaf of ['payload', 'supervisor']) dirs.push(join(hierarchy, path, leaf));
  }
  return [...dirs, '/run/systemd/nspawn'];
}

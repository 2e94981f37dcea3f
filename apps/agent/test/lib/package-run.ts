/**
 * Helpers of package-deb.test.ts: what the package must and must not hold, the root's paths
 * compared before and after it (with what is not the package's named), processes it runs (kept,
 * and killed when their test ends), `blkheat record --json` lines summed over a window, and a
 * unit started the way systemd would start it (its Environment= and EnvironmentFile=, its
 * capability bounding set, NoNewPrivileges) where no systemd runs.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classOp, OP_GROUPS, type OpGroup } from '@blkheat/shared-types';
import { runCommand, sleep, type CleanupContext } from '@blkheat/testkit';
import { rootEnv, runInRoot, spawnInRoot } from './debroot.js';

/** Packages that build software: none may be among the package's dependencies, or be pulled in by installing it. */
export const BUILD_TOOL =
  /^(gcc|g\+\+|cpp|clang|llvm|lld|make|cmake|npm|node-gyp|pkg-config|pkgconf|bpftool|binutils|libc6-dev|.*-dev)(-\d+)?(:\w+)?$/;
/** The units' settings: examples the package ships, and where an admin copies them to change one. */
export const SETTINGS = [
  { unit: 'blkheat.service', example: 'usr/share/doc/blkheat/examples/default/blkheat', admin: 'etc/default/blkheat' },
  { unit: 'blkheat-fleet.service', example: 'usr/share/doc/blkheat/examples/default/blkheat-fleet', admin: 'etc/default/blkheat-fleet' },
] as const;
/** What the package must hold (paths as dpkg-deb lists them). */
export const EXPECTED = [
  './usr/bin/blkheat',
  './usr/lib/blkheat/blkheat-service',
  './usr/lib/blkheat/apps/agent/bin/blkheat.js',
  './usr/lib/blkheat/apps/agent/dist/cli/main.js',
  './usr/lib/blkheat/apps/agent/node_modules/express',
  './usr/lib/blkheat/apps/agent/node_modules/ws',
  './usr/lib/blkheat/apps/web/dist/index.html',
  './usr/lib/blkheat/bpf/build/blkheat.bpf.o',
  './usr/lib/blkheat/bpf/build/blkheat_s3.bpf.o',
  './usr/lib/blkheat/packages/bpf-loader/build/Release/bpf_loader.node',
  './usr/lib/blkheat/packages/shared-types/dist/index.js',
  './usr/lib/blkheat/metrics.proto',
  './usr/lib/systemd/system/blkheat.service',
  './usr/lib/systemd/system/blkheat-fleet.service',
  ...SETTINGS.map((s) => `./${s.example}`),
  './usr/share/doc/blkheat/copyright',
  './usr/share/doc/blkheat/docs/package.md',
  './usr/share/doc/blkheat/prometheus/prometheus.yml',
  './usr/share/doc/blkheat/prometheus/blkheat.rules.yml',
  './usr/share/doc/blkheat/prometheus/blkheat.alerts.yml',
];
/**
 * What it must not: our sources and tests, the tests' BPF objects, declarations and source maps,
 * the checkout's build and test tools (published modules keep their own layout, test/ included).
 */
export const UNWANTED =
  /^\.\/usr\/lib\/blkheat\/(apps|packages|bpf)\/[^/]+\/(src|test)\/|\.ts$|\.map$|_test\.bpf\.o$|dispatch_floor|vmlinux\.h|node_modules\/(\.pnpm\/)?(typescript|vite|node-gyp|node-addon-api|tsx|eslint|@types)[@/+]/;

/** A field of a .deb's control file ("Depends"). */
export async function debField(deb: string, name: string): Promise<string> {
  return (await runCommand('dpkg-deb', ['--field', deb, name])).stdout.trim();
}

/** A .deb's entries as `dpkg-deb --contents` lists them: mode ("-rwxr-xr-x") and path ("./usr/bin/blkheat"). */
export async function debContents(deb: string): Promise<{ mode: string; path: string }[]> {
  const lines = (await runCommand('dpkg-deb', ['--contents', deb])).stdout.trim().split('\n');
  return lines.map((line) => line.split(/\s+/)).map((f) => ({ mode: f[0] as string, path: f[5] as string }));
}

/** The packages an apt-get run says it installs ("The following NEW packages will be installed:"). */
export function aptInstalled(out: string): string[] {
  const listed = /The following NEW packages will be installed:\n((?:\s+.*\n)+)/.exec(out)?.[1] ?? '';
  return listed.split(/\s+/).filter((p) => p !== '');
}

/**
 * What appears in the root between the listing just before blkheat is installed and one after
 * dpkg -r or --purge that is neither the package's doing nor its scripts' (which touch only
 * /var/lib/blkheat and, on purge, the two enablement links). Measured: dpkg's database
 * (/var/lib/dpkg/info/blkheat.list and .postrm, which dpkg keeps until purge), the booted
 * systemd's journal (/var/log/journal) and state (/var/lib/systemd/timers' stamps), the stamps
 * its systemd-update-done.service puts in /etc and /var (.updated), the admin's `systemctl
 * enable` links (purge removes them: postrm), and the networkd masks bootRoot writes so that the
 * booted root leaves the host's network alone. The admin's /etc/default files (SETTINGS) are left
 * out by name. apt's state (/var/lib/apt, /var/cache/apt) gains no path, so is not left out.
 */
const NOT_THE_PACKAGES = [
  /^var\/lib\/dpkg(\/|$)/,
  /^var\/log(\/|$)/,
  /^var\/lib\/systemd(\/|$)/,
  /^(etc|var)\/\.updated$/,
  /^etc\/systemd\/system\/multi-user\.target\.wants\/blkheat(-fleet)?\.service$/,
  /^etc\/systemd\/system\/systemd-networkd\.(service|socket)$/,
];

/** Every path in the root (relative: "usr/bin/blkheat"). */
export async function listRoot(sysroot: string): Promise<Set<string>> {
  const out = (await runCommand('find', [sysroot, '-xdev', '-mindepth', '1', '-printf', '%P\n'])).stdout;
  return new Set(out.split('\n').filter((p) => p !== ''));
}

/**
 * Paths in the root now and not in `before`, less the admin's settings: `packages`, the
 * package's (or its scripts'), and `notTheirs`, those NOT_THE_PACKAGES names (for the log).
 */
export async function addedSince(sysroot: string, before: ReadonlySet<string>): Promise<{ packages: string[]; notTheirs: string }> {
  const admin = new Set<string>(SETTINGS.map((s) => s.admin));
  const added = [...(await listRoot(sysroot))].filter((p) => !before.has(p) && !admin.has(p)).sort();
  return {
    packages: added.filter((p) => !NOT_THE_PACKAGES.some((r) => r.test(p))),
    notTheirs: added.filter((p) => NOT_THE_PACKAGES.some((r) => r.test(p))).join(' '),
  };
}

/** Every process the package test started: killChildren() kills what is left. */
const children = new Set<ChildProcess>();

/** Kills what is left of `children` (the file's after(), before the root is deleted), and lets them go. */
export async function killChildren(): Promise<void> {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await sleep(200);
}

/** A process of a test, its stdout lines and stderr kept; killed when the test ends, passed or failed. */
export function track(
  t: CleanupContext,
  child: ChildProcess,
): { child: ChildProcess; out: string[]; err: () => string; exited: Promise<number | null> } {
  children.add(child);
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const out: string[] = [];
  let partial = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    out.push(...lines);
  });
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out, err: () => err, exited };
}

export interface RecordLine {
  ts: number;
  disks: { dev: string; classes: { class: string; count: number; passthrough?: boolean }[]; untimed?: Partial<Record<OpGroup, number>> }[];
}

export interface WindowSum {
  counted: Record<OpGroup, number>;
  untimed: Record<OpGroup, number>;
  classes: Record<string, number>;
}

/** Per op group over intervals from <= ts < to: I/Os counted in classes diskstats counts, and untimed; and per class. */
export function sumWindow(lines: readonly string[], dev: string, from: number, to: number): WindowSum {
  const zero = (): Record<OpGroup, number> => ({ read: 0, write: 0, discard: 0, flush: 0 });
  const sum: WindowSum = { counted: zero(), untimed: zero(), classes: {} };
  for (const line of lines) {
    const rec = JSON.parse(line) as RecordLine;
    if (rec.ts < from || rec.ts >= to) continue;
    for (const d of rec.disks.filter((x) => x.dev === dev)) {
      for (const c of d.classes) {
        if (c.passthrough) continue;
        const op = classOp(c.class);
        sum.counted[op === 'Read' ? 'read' : op === 'Flush' ? 'flush' : op === 'Discard' ? 'discard' : 'write'] += c.count;
        sum.classes[c.class] = (sum.classes[c.class] ?? 0) + c.count;
      }
      for (const g of OP_GROUPS) sum.untimed[g] += d.untimed?.[g] ?? 0;
    }
  }
  return sum;
}

export const total = (r: Record<OpGroup, number>): number => OP_GROUPS.reduce((n, g) => n + r[g], 0);

/** The values of a unit file's `key=` lines, in order. */
function unitValues(unit: string, key: string): string[] {
  return [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1] as string);
}

/** A setting of a unit file (the last one given, as systemd reads a repeated one; "" included: CapabilityBoundingSet= means none). */
function unitValue(unit: string, key: string): string {
  const values = unitValues(unit, key);
  assert.ok(values.length > 0, `${key}= missing from the unit`);
  return values.at(-1) as string;
}

/** A list setting's entries (Environment=, EnvironmentFile=): every line from the last empty one on, which resets the list. */
function unitList(unit: string, key: string): string[] {
  const values = unitValues(unit, key);
  return values.slice(values.lastIndexOf('') + 1);
}

/** KEY=value lines of an EnvironmentFile, as systemd reads them (comments and blank lines skipped). */
function environmentFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^([A-Z_][A-Z0-9_]*)=(.*)$/gm)) out[m[1] as string] = m[2] as string;
  return out;
}

/** An `Environment=` value's assignments, split as systemd splits it: on blanks outside quotes, quotes removed, \-escapes undone. */
function environmentWords(value: string): string[] {
  const unescape = (t: string): string => t.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t' })[c] ?? c);
  const words = value.match(/(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\\.|[^\s"'\\])+/g) ?? [];
  return words.map((w) =>
    w.replace(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(\\.)/g, (_, d?: string, q?: string, e?: string) => unescape(d ?? q ?? e ?? '')),
  );
}

/**
 * The environment systemd gives a unit's ExecStart from the unit: its Environment= assignments,
 * then each EnvironmentFile= in order, whose settings override them (systemd.exec(5)). A file
 * named with "-" may be missing, as systemd skips it; any other must be there, as systemd would
 * not start the unit without it.
 */
function unitEnvironment(sysroot: string, unit: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const word of unitList(unit, 'Environment').flatMap(environmentWords)) {
    const eq = word.indexOf('=');
    if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  for (const file of unitList(unit, 'EnvironmentFile')) {
    const path = join(sysroot, file.replace(/^-/, ''));
    if (file.startsWith('-') && !existsSync(path)) continue;
    Object.assign(env, environmentFile(readFileSync(path, 'utf8')));
  }
  return env;
}

/** The unit file as installed in the root. */
const unitFile = (sysroot: string, unit: string): string => readFileSync(join(sysroot, 'usr/lib/systemd/system', unit), 'utf8');

/** The command a unit's ExecStart runs, given `env` for settings (blkheat-service's flags, echoed instead of run). */
export async function unitCommand(sysroot: string, unit: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const exec = unitValue(unitFile(sysroot, unit), 'ExecStart').split(/\s+/);
  return (await runInRoot(sysroot, exec, { env: rootEnv({ ...env, BLKHEAT_BIN: '/bin/echo' }) })).stdout.trim();
}

export function status(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .map((l) => l.split(':\t') as [string, string]),
  );
}

/** How a unit is started here: which unit, which settings beside the unit's, and where it listens. */
export interface UnitStart {
  readonly unit: 'blkheat.service' | 'blkheat-fleet.service';
  /** Settings over the unit's own and its /etc/default file's, if any (the port, the disks). */
  readonly env: NodeJS.ProcessEnv;
  /** The port it listens on (a setting in `env`). */
  readonly port: string;
  /** A host Node.js to run as the root's /usr/bin/node. */
  readonly node?: string;
  /** DynamicUser=yes: a uid of its own from the start (systemd picks one; here a fixed unused one). */
  readonly dynamicUser?: number;
  /**
   * Whether a /healthz status means started (default: 200). serve answers before it has
   * switched user (503 while starting); fleet answers 503 while Prometheus is unreachable.
   */
  readonly started?: (status: number) => boolean;
}

/**
 * Starts the unit's ExecStart in the root as systemd would: its environment, its capability
 * bounding set (empty: none), NoNewPrivileges, and for DynamicUser= a user of its own. Resolves
 * once /healthz says it has started, or it has exited: `up` says which.
 */
export async function startAsUnit(t: CleanupContext & { diagnostic(m: string): void }, sysroot: string, start: UnitStart) {
  const unit = unitFile(sysroot, start.unit);
  assert.equal(unitValue(unit, 'NoNewPrivileges'), 'yes');
  const caps = unitValue(unit, 'CapabilityBoundingSet')
    .split(/\s+/)
    .filter((c) => c !== '')
    .map((c) => `,+${c.replace(/^CAP_/, '').toLowerCase()}`);
  const settings = unitEnvironment(sysroot, unit);
  const user = start.dynamicUser === undefined ? [] : [`--reuid=${start.dynamicUser}`, `--regid=${start.dynamicUser}`, '--clear-groups'];
  const argv = ['setpriv', ...user, `--bounding-set=-all${caps.join('')}`, '--no-new-privs', ...unitValue(unit, 'ExecStart').split(/\s+/)];
  t.diagnostic(`as ${start.unit}: ${argv.join(' ')} with ${JSON.stringify({ ...settings, ...start.env })}`);
  const agent = track(t, spawnInRoot(sysroot, argv, { env: rootEnv({ ...settings, ...start.env }), node: start.node }));
  const deadline = Date.now() + 30_000;
  let up = false;
  while (!up && agent.child.exitCode === null && agent.child.signalCode === null) {
    if (Date.now() > deadline) throw new Error(`${start.unit} did not answer on port ${start.port} in 30 s: ${agent.err()}`);
    up = await fetch(`http://127.0.0.1:${start.port}/healthz`).then(
      (r) => (start.started ?? ((status) => status === 200))(r.status),
      () => false,
    );
    if (!up) await sleep(100);
  }
  return { agent, up };
}

export function lstatOrNull(path: string): boolean {
  try {
    return lstatSync(path) !== undefined;
  } catch {
    return false;
  }
}

/** Polls an asynchronous condition every 200 ms until it holds; throws after `timeoutMs`. */
export async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Whether 127.0.0.1:port answers /healthz with a status `ok` accepts (false when nothing answers). */
export function healthz(port: string, ok: (status: number) => boolean): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    (r) => ok(r.status),
    () => false,
  );
}

/** The mount options of `point` as process `pid` sees it ("ro,nosuid,..."), or "(not a mount)". */
export function mountOptions(pid: number, point: string): string {
  const mounts = readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
    .split('\n')
    .map((l) => l.split(' '));
  return mounts.find((f) => f[4] === point)?.[5] ?? '(not a mount)';
}

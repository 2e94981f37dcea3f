/**
 * Helpers of package-deb.test.ts: what the package must and must not hold, processes it runs
 * (kept, and killed when their test ends), `blkheat record --json` lines summed over a window,
 * and a unit started the way systemd would start it (its EnvironmentFile, its capability
 * bounding set, NoNewPrivileges) where no systemd runs.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classOp, OP_GROUPS, type OpGroup } from '@blkheat/shared-types';
import { sleep, type CleanupContext } from '@blkheat/testkit';
import { rootEnv, spawnInRoot } from './debroot.js';

/** Packages that build software: none may be among the package's dependencies, or be pulled in by installing it. */
export const BUILD_TOOL =
  /^(gcc|g\+\+|cpp|clang|llvm|lld|make|cmake|npm|node-gyp|pkg-config|pkgconf|bpftool|binutils|libc6-dev|.*-dev)(-\d+)?(:\w+)?$/;
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
  './etc/default/blkheat',
  './etc/default/blkheat-fleet',
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

/** Every process the package test started: the file's after() kills what is left. */
export const children = new Set<ChildProcess>();

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

/** A setting of a unit file (the last one given, as systemd reads a repeated one). */
function unitValue(unit: string, key: string): string {
  const values = [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1] as string);
  assert.ok(values.length > 0, `${key}= missing from the unit`);
  return values.at(-1) as string;
}

/** KEY=value lines of an EnvironmentFile, as systemd reads them (comments and blank lines skipped). */
function environmentFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^([A-Z_][A-Z0-9_]*)=(.*)$/gm)) out[m[1] as string] = m[2] as string;
  return out;
}

export function status(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .map((l) => l.split(':\t') as [string, string]),
  );
}

/** How a unit is started here: which unit, which of its settings apply, and where it listens. */
export interface UnitStart {
  readonly unit: 'blkheat.service' | 'blkheat-fleet.service';
  /** The settings beside /etc/default's (the port, the disks). */
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
 * Starts the unit's ExecStart in the root as systemd would: its EnvironmentFile, its capability
 * bounding set (empty: none), NoNewPrivileges, and for DynamicUser= a user of its own. Resolves
 * once /healthz says it has started, or it has exited: `up` says which.
 */
export async function startAsUnit(t: CleanupContext & { diagnostic(m: string): void }, sysroot: string, start: UnitStart) {
  const unit = readFileSync(join(sysroot, 'usr/lib/systemd/system', start.unit), 'utf8');
  assert.equal(unitValue(unit, 'NoNewPrivileges'), 'yes');
  const caps = unitValue(unit, 'CapabilityBoundingSet')
    .split(/\s+/)
    .filter((c) => c !== '')
    .map((c) => `,+${c.replace(/^CAP_/, '').toLowerCase()}`);
  const envFile = unitValue(unit, 'EnvironmentFile').replace(/^-/, '');
  const settings = environmentFile(readFileSync(join(sysroot, envFile), 'utf8'));
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

/**
 * Helpers for the data-directory tests: a foreign tree to guard, a record of every entry's owner,
 * mode and content (to show nothing changed), and `serve` run to a refusal.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_CLI, isRoot, type CleanupContext } from '@blkheat/testkit';
import { resolveUser, type TargetUser } from '../src/service/drop-root.js';

export function tempDir(t: CleanupContext, prefix = 'blkheat-datadir-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Someone else's files: a root-only secret (0600), a subdirectory with a file, and a link
 * pointing out of the tree. Returns the secret's path.
 */
export function plantForeignTree(dir: string): string {
  const secret = join(dir, 'secret.key');
  writeFileSync(secret, 'root only\n', { mode: 0o600 });
  chmodSync(secret, 0o600);
  mkdirSync(join(dir, 'notes'), { mode: 0o750 });
  writeFileSync(join(dir, 'notes', 'todo.txt'), 'keep me\n', { mode: 0o640 });
  return secret;
}

/** Every entry under `dir` (links not followed): owner, mode, and content hash or link target. */
export function treeState(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string, rel: string): void => {
    const st = lstatSync(p);
    let what = '';
    if (st.isSymbolicLink()) what = `-> ${readlinkSync(p)}`;
    else if (st.isFile()) what = createHash('sha256').update(readFileSync(p)).digest('hex');
    out.set(rel, `${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)} ${what}`);
    if (st.isDirectory()) for (const name of readdirSync(p).sort()) walk(join(p, name), `${rel}/${name}`);
  };
  walk(dir, '.');
  return out;
}

export interface ServeRun {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

function listenBusy(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

/**
 * Runs `blkheat serve ARGS` (the built CLI) expecting it to stop before it loads any probe. As a
 * guard, its --port is one this process holds: should the data directory wrongly be accepted,
 * the agent still stops at binding, before loading BPF (one BPF user at a time on a test machine).
 */
export async function serveUntilRefused(args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<ServeRun> {
  const busy = await listenBusy();
  try {
    const port = String((busy.address() as AddressInfo).port);
    const started = Date.now();
    const r = spawnSync(process.execPath, [AGENT_CLI, 'serve', '--port', port, ...args], {
      encoding: 'utf8',
      timeout: options.timeoutMs ?? 20_000,
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
    return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
  } finally {
    await new Promise<void>((resolve) => busy.close(() => resolve()));
  }
}

export type Skippable = { skip(message?: string): void };

/** nobody, when this runs as root (the agent's case); the owner assertions need it. */
export function nobodyOrSkip(t: Skippable): TargetUser | undefined {
  if (!isRoot()) {
    t.skip('needs root: the agent gives what it creates to nobody');
    return undefined;
  }
  return resolveUser('nobody');
}

/** uid:gid and permission bits, e.g. "65534:65534 700". */
export function owner(path: string): string {
  const st = lstatSync(path);
  return `${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)}`;
}

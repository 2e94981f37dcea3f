/**
 * The agent started exactly as the README says: `./bootstrap serve [flags]` from the repository
 * root (it checks what is installed, builds incrementally, then execs
 * `node apps/agent/dist/cli/main.js serve "$@"`). Only documented user flags are passed. The
 * child runs in its own process group so a cleanup also reaches a bootstrap that has not
 * exec'd yet; a process-exit hook is the last resort if the test runner dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ReadmeAgent {
  readonly pid: number;
  /** e.g. "http://127.0.0.1:40123/" */
  readonly url: string;
  /** When it printed "listening on" (ms since the epoch). */
  readonly listeningAt: number;
  /** How long from spawning bootstrap to "listening on" (ms). */
  readonly startMs: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** SIGTERM (what systemd or Ctrl-C send) and wait; SIGKILL to the group after killAfterMs. */
  stop(killAfterMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();
let exitHook = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Runs `./bootstrap serve ...flags` and resolves once the agent listens. */
export function startReadmeAgent(flags: readonly string[], readyTimeoutMs = 90_000): Promise<ReadmeAgent> {
  const started = Date.now();
  const child = spawn('./bootstrap', ['serve', ...flags], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const c of running) killGroup(c, 'SIGKILL');
    });
  }
  let out = '';
  let check: (() => void) | undefined;
  const onData = (d: Buffer): void => {
    out += d.toString();
    check?.();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`./bootstrap serve did not listen within ${readyTimeoutMs} ms; output:\n${out.slice(-3000)}`));
    }, readyTimeoutMs);
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`./bootstrap serve exited (code ${e.code}, signal ${e.signal}) before listening; output:\n${out.slice(-3000)}`));
    });
    check = (): void => {
      const m = /listening on (http:\/\/\S+?\/)(\s|$)/.exec(out);
      if (!m?.[1]) return;
      check = undefined;
      clearTimeout(timer);
      const pid = child.pid as number;
      resolve({
        pid,
        url: m[1],
        listeningAt: Date.now(),
        startMs: Date.now() - started,
        exited,
        output: () => out,
        async stop(killAfterMs = 20_000) {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          const t = setTimeout(() => killGroup(child, 'SIGKILL'), killAfterMs);
          const e = await exited;
          clearTimeout(t);
          killGroup(child, 'SIGKILL'); // anything bootstrap left behind in the group
          return e;
        },
      });
    };
    check();
  });
}

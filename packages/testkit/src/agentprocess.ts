/**
 * Runs the real agent the way a user does: `node apps/agent/dist/cli/main.js serve ...` as a
 * child process (build first with `node scripts/build.mjs`), on a free port, with a data
 * directory of the caller's choosing. Resolves once the agent printed its "listening on" line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CleanupContext } from './loop.js';
import { procCpuSeconds, procStatusKb } from './proc.js';

/** The compiled CLI of this checkout. */
export const AGENT_CLI = fileURLToPath(new URL('../../../apps/agent/dist/cli/main.js', import.meta.url));

export interface AgentProcessOptions {
  /** `serve` (default) or `fleet` (no kernel, no data directory: its options are all in `args`). */
  readonly command?: 'serve' | 'fleet';
  /** --data-dir of `serve` (tests own a temp directory); unused by `fleet`. */
  readonly dataDir?: string;
  /** Extra flags. --port defaults to 0 (any free port). */
  readonly args?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** How long to wait for "listening on" (loading BPF takes a few seconds). */
  readonly readyTimeoutMs?: number;
  /** Other CLI script (default AGENT_CLI). */
  readonly cli?: string;
}

export interface AgentExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface AgentProcess {
  readonly pid: number;
  /** e.g. "http://127.0.0.1:40123/" */
  readonly url: string;
  readonly port: number;
  /** ws:// URL of the stream endpoint. */
  readonly streamUrl: string;
  readonly child: ChildProcess;
  readonly exited: Promise<AgentExit>;
  stdout(): string;
  stderr(): string;
  /** Sends a signal and waits for the exit (SIGKILL after killAfterMs). */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<AgentExit>;
  /** kill -9, and wait for the process to be gone. */
  kill9(): Promise<AgentExit>;
  /** Resident set size in bytes, from /proc/<pid>/status (VmRSS). */
  rssBytes(): number;
  /** User + system CPU seconds used so far, from /proc/<pid>/stat. */
  cpuSeconds(): number;
}

/** Runs `serve` and returns once it listens; rejects with the agent's stderr when it exits first. */
export function startAgentProcess(options: AgentProcessOptions): Promise<AgentProcess> {
  const cli = options.cli ?? AGENT_CLI;
  if (!existsSync(cli)) return Promise.reject(new Error(`${cli} is missing: run node scripts/build.mjs first`));
  const args = [...(options.args ?? [])];
  if (!args.includes('--port')) args.push('--port', '0');
  const command = options.command ?? 'serve';
  if (command === 'serve') {
    if (options.dataDir === undefined) return Promise.reject(new Error('serve needs a dataDir'));
    args.unshift('--data-dir', options.dataDir);
  }
  const child = spawn(process.execPath, [cli, command, ...args], {
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => (err += d));
  const exited = new Promise<AgentExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agent did not start within ${options.readyTimeoutMs ?? 60_000} ms\nstdout: ${out}\nstderr: ${err}`));
    }, options.readyTimeoutMs ?? 60_000);
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`agent exited (code ${e.code}, signal ${e.signal}) before listening\nstdout: ${out}\nstderr: ${err}`));
    });
    child.stdout?.on('data', (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+?\/)(\s|$)/.exec(out);
      if (!m || !m[1]) return;
      clearTimeout(timer);
      const url = m[1];
      const u = new URL(url);
      const pid = child.pid as number;
      const stop = async (signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 20_000): Promise<AgentExit> => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        const t = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        const e = await exited;
        clearTimeout(t);
        return e;
      };
      resolve({
        pid,
        url,
        port: Number(u.port),
        streamUrl: `ws://${u.host}/api/v1/stream`,
        child,
        exited,
        stdout: () => out,
        stderr: () => err,
        stop,
        kill9: () => stop('SIGKILL'),
        rssBytes: () => procStatusKb(pid, 'VmRSS') * 1024,
        cpuSeconds: () => procCpuSeconds(pid),
      });
    });
  });
}

/**
 * The real agent (`blkheat serve`) on a free port with a temporary data directory (named
 * `prefix…`), stopped and the directory removed after the test.
 */
export async function startAgentInTempDir(
  t: CleanupContext,
  args: readonly string[] = [],
  prefix = 'blkheat-agent-',
): Promise<AgentProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const agent = await startAgentProcess({ dataDir, args });
  t.after(async () => {
    await agent.stop('SIGTERM', 15_000);
    rmSync(dataDir, { recursive: true, force: true });
  });
  return agent;
}

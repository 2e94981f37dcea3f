/**
 * Child processes for tests: run a script in a fresh Node process, optionally with root's
 * privileges dropped (setgroups([]), setgid, setuid to nobody: 65534) before the script's own
 * imports run, so "what does a non-root user see" can be tested from a root test run.
 * TypeScript scripts run through tsx.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const NOBODY = 65534;

export interface RunScriptOptions {
  /** Arguments after the script path (process.argv.slice(2) in the child). */
  readonly args?: readonly string[];
  /** Node options before the script, e.g. ['--expose-gc']. */
  readonly execArgv?: readonly string[];
  /** Extra environment variables (added to this process's environment). */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Kill the child (SIGKILL) after this long; default 120 s. */
  readonly timeoutMs?: number;
  /** Drop root's privileges in the child before the script runs: true means uid/gid 65534. */
  readonly dropPrivileges?: boolean | { readonly uid: number; readonly gid: number };
}

export interface ScriptResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** A preload module (data: URL) that drops privileges before anything else is imported. */
function dropPreload(uid: number, gid: number): string {
  const source = [
    `process.setgroups([]);`,
    `process.setgid(${gid});`,
    `process.setuid(${uid});`,
    `if (process.getuid() !== ${uid} || process.geteuid() !== ${uid}) throw new Error('privilege drop failed');`,
  ].join('');
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

function tsxLoader(): string {
  try {
    return import.meta.resolve('tsx');
  } catch {
    return 'tsx';
  }
}

export function runScript(script: string | URL, options: RunScriptOptions = {}): Promise<ScriptResult> {
  const path = typeof script === 'string' ? script : fileURLToPath(script);
  const nodeArgs: string[] = [];
  const drop = options.dropPrivileges;
  if (drop !== undefined && drop !== false) {
    if (!isRoot()) return Promise.reject(new Error('runScript: dropPrivileges needs a root parent process'));
    const { uid, gid } = drop === true ? { uid: NOBODY, gid: NOBODY } : drop;
    nodeArgs.push('--import', dropPreload(uid, gid));
  }
  if (/\.[mc]?ts$/.test(path)) nodeArgs.push('--import', tsxLoader());
  nodeArgs.push(...(options.execArgv ?? []), path, ...(options.args ?? []));

  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  // A child of a node:test file must not believe it is a test file itself.
  delete env.NODE_TEST_CONTEXT;

  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

/** runScript() with privileges dropped to nobody (uid/gid 65534) unless told otherwise. */
export function runUnprivileged(script: string | URL, options: RunScriptOptions = {}): Promise<ScriptResult> {
  return runScript(script, { ...options, dropPrivileges: options.dropPrivileges ?? true });
}

/**
 * Real I/O for tests and benchmarks: fio jobs (JSON results) and dd, run as child processes
 * so the event loop (and a collector running in it) keeps going meanwhile.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { CleanupContext } from './loop.js';

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command; rejects with its stderr when it exits non-zero. */
export function runCommand(
  cmd: string,
  args: readonly string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv; /** written to its standard input */ input?: string } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: options.env ?? process.env,
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${cmd}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${stderr.trim().slice(-2000)}`));
    });
  });
}

export interface FioJob {
  readonly filename: string;
  readonly rw: 'read' | 'write' | 'randread' | 'randwrite' | 'randrw' | 'readwrite' | 'trim' | 'randtrim';
  readonly bs?: string;
  readonly size?: string;
  readonly runtimeS?: number;
  readonly iodepth?: number;
  readonly ioengine?: 'psync' | 'libaio' | 'io_uring' | 'sync';
  readonly direct?: boolean;
  readonly numjobs?: number;
  /** fsync after this many writes. */
  readonly fsync?: number;
  /** O_DSYNC writes. */
  readonly sync?: boolean;
  /** Stop after this many I/Os per job instead of running for runtimeS. */
  readonly numberIos?: number;
  /** Rate limit in IOPS per job. */
  readonly rateIops?: number;
  readonly readonly?: boolean;
  /**
   * Run fio inside this cgroup (a directory of a mounted cgroup hierarchy, v1 or v2), or these
   * (one per hierarchy: e.g. the blkio one and its cgroup2 mirror).
   */
  readonly cgroupDir?: string | readonly string[];
  readonly extra?: readonly string[];
}

export interface FioResult {
  readonly iops: number;
  /** I/Os completed (read + write + trim) over all jobs. */
  readonly ios: number;
  /** Bytes those I/Os moved (fio's io_bytes). */
  readonly bytes: number;
  /**
   * fio's own completion latency (clat: from the I/O's submission to its completion) of the
   * reads, ns: its percentiles (fio's histogram, within 1/64 of the value), mean and maximum.
   * Undefined without reads.
   */
  readonly readClat: { readonly p50: number; readonly p99: number; readonly mean: number; readonly max: number } | undefined;
}

/** fio's command line for a job (one job section, group reporting). */
export function fioArgs(job: FioJob): string[] {
  const args = [
    '--name=blkheat',
    `--filename=${job.filename}`,
    `--rw=${job.rw}`,
    `--bs=${job.bs ?? '4k'}`,
    `--ioengine=${job.ioengine ?? 'psync'}`,
    `--iodepth=${job.iodepth ?? 1}`,
    `--direct=${job.direct === false ? 0 : 1}`,
    `--numjobs=${job.numjobs ?? 1}`,
    '--group_reporting',
    '--output-format=json',
  ];
  if (job.size) args.push(`--size=${job.size}`);
  if (job.runtimeS !== undefined) args.push(`--runtime=${job.runtimeS}`, '--time_based');
  if (job.numberIos !== undefined) args.push(`--number_ios=${job.numberIos}`);
  if (job.fsync !== undefined) args.push(`--fsync=${job.fsync}`);
  if (job.sync) args.push('--sync=1');
  if (job.rateIops !== undefined) args.push(`--rate_iops=${job.rateIops}`);
  if (job.readonly) args.push('--readonly');
  args.push(...(job.extra ?? []));
  return args;
}

/** The command that runs fio for a job: fio itself, or a shell that joins the job's cgroup first. */
function fioCommand(job: FioJob): [string, string[]] {
  if (job.cgroupDir === undefined) return ['fio', fioArgs(job)];
  const dirs = typeof job.cgroupDir === 'string' ? [job.cgroupDir] : [...job.cgroupDir];
  if (dirs.length === 0 || dirs.length > 9) throw new Error(`fio: 1 to 9 cgroup directories, not ${dirs.length}`);
  // The directories are the shell's $0.. (never parsed as code); fio's arguments follow them.
  const enter = dirs.map((_, i) => `echo $$ > "\${${i}}/cgroup.procs"`).join(' && ');
  return ['sh', ['-c', `${enter} && shift ${dirs.length - 1} && exec fio "$@"`, ...dirs, ...fioArgs(job)]];
}

/** Runs a fio job to the end and returns what it did. */
export async function runFio(job: FioJob): Promise<FioResult> {
  const [command, args] = fioCommand(job);
  const { stdout } = await runCommand(command, args, { timeoutMs: ((job.runtimeS ?? 60) + 60) * 1000 });
  const json = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { jobs: { read: FioDir; write: FioDir; trim: FioDir }[] };
  let iops = 0;
  let ios = 0;
  let bytes = 0;
  for (const j of json.jobs) {
    for (const dir of [j.read, j.write, j.trim]) {
      iops += dir.iops;
      ios += dir.total_ios;
      bytes += dir.io_bytes;
    }
  }
  // --group_reporting: one job holds every job's reads.
  const clat = json.jobs[0]?.read.clat_ns;
  const pct = clat?.percentile;
  const readClat =
    clat && pct && clat.max > 0
      ? { p50: pct['50.000000'] ?? NaN, p99: pct['99.000000'] ?? NaN, mean: clat.mean, max: clat.max }
      : undefined;
  return { iops, ios, bytes, readClat };
}

interface FioDir {
  readonly iops: number;
  readonly total_ios: number;
  readonly io_bytes: number;
  readonly clat_ns?: { readonly max: number; readonly mean: number; readonly percentile?: Readonly<Record<string, number>> };
}

export interface BackgroundFio {
  readonly child: ChildProcess;
  /** Resolves with fio's exit code when it exits. */
  readonly done: Promise<number | null>;
  /** Stops fio (SIGTERM, SIGKILL after 5 s) and waits for it. Idempotent. */
  stop(): Promise<void>;
}

/** Starts a fio job in the background (load while a test does something else); stopped in t.after(). */
export function startFio(job: FioJob, t?: CleanupContext): BackgroundFio {
  const [command, args] = fioCommand(job);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const done = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }
    await done;
  };
  t?.after(stop);
  return { child, done, stop };
}

/** dd with the given operands (if=, of=, bs=, count=, iflag=, oflag=, ...). */
export async function runDd(operands: Record<string, string | number>): Promise<void> {
  await runCommand(
    'dd',
    Object.entries(operands).map(([k, v]) => `${k}=${v}`),
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Polls `condition` every 10 ms until it holds; after `timeoutMs` throws "timed out after N ms
 * waiting for <what>" (`what` may be a function, to describe the state at the moment it failed).
 */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string | (() => string)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(10);
  }
}

/** One 4 KiB O_DIRECT read of `path` at `sector` by dd, killed after the test; `exited` gives its exit code. */
export function directRead(t: CleanupContext, path: string, sector: number): { pid: number | undefined; exited: Promise<number | null> } {
  const dd = spawn('dd', [`if=${path}`, 'of=/dev/null', 'bs=4k', 'count=1', `skip=${sector / 8}`, 'iflag=direct'], { stdio: 'ignore' });
  t.after(() => {
    dd.kill('SIGKILL');
  });
  return { pid: dd.pid, exited: new Promise<number | null>((r) => dd.once('close', r)) };
}

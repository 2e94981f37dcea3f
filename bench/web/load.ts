/**
 * The live section's I/O load: one fio process driving random 4 KiB reads and writes (70/30) on
 * every loop device, each job rate-capped to its share of the target IOPS, in threads (--thread:
 * one process, so a kill stops every job), until stopped with SIGINT (fio then prints its JSON
 * results, which give what it achieved). /proc/diskstats gives what the devices completed over
 * any window, the figure set beside the page's.
 */
import { spawn } from 'node:child_process';
import { completedRequests, type DiskStats, diskstatsDelta, readDiskstats } from '@blkheat/testkit';

export interface FioLoad {
  readonly pid: number | undefined;
  /** Stops fio (SIGINT, SIGKILL after 10 s) and returns the IOPS it reports per device (undefined: no results). */
  stop(): Promise<FioReport | undefined>;
  /** Kills fio at once (emergency cleanup; idempotent). */
  kill(): void;
  /** True while fio runs. */
  running(): boolean;
  stderr(): string;
}

export interface FioReport {
  /** Mean IOPS over fio's whole run, per device name ("loop3"), and their sum. */
  readonly perDevice: Readonly<Record<string, number>>;
  readonly total: number;
  readonly seconds: number;
}

/** fio's JSON, the fields read here (one job per device, named after it). */
interface FioJson {
  readonly jobs: readonly {
    readonly jobname: string;
    readonly job_runtime: number;
    readonly read: { readonly iops: number };
    readonly write: { readonly iops: number };
  }[];
}

/**
 * Starts fio on `devices` (paths like /dev/loop3) at `totalIops` in all. `maxSeconds` bounds
 * the run even if nobody stops it (a crashed bench must not leave load running for long).
 */
export function startFioLoad(devices: readonly string[], totalIops: number, maxSeconds: number): FioLoad {
  const perJob = totalIops / devices.length;
  // One cap per direction: a single rate_iops value would cap reads and writes each, doubling the total.
  const reads = Math.round(perJob * 0.7);
  const writes = Math.round(perJob * 0.3);
  const args = [
    '--thread',
    '--rw=randrw',
    '--rwmixread=70',
    '--bs=4k',
    '--ioengine=io_uring',
    '--iodepth=16',
    '--direct=1',
    `--rate_iops=${reads},${writes}`,
    `--runtime=${maxSeconds}`,
    '--time_based',
    '--output-format=json',
    ...devices.flatMap((d) => [`--name=${d.slice(d.lastIndexOf('/') + 1)}`, `--filename=${d}`]),
  ];
  const child = spawn('fio', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (d: string) => (out += d));
  child.stderr.on('data', (d: string) => (err += d));
  // A missing fio binary is reported by stop() (no results), not thrown from an event.
  child.on('error', (e) => (err += String(e)));
  const done = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const running = (): boolean => child.exitCode === null && child.signalCode === null && child.pid !== undefined;
  return {
    pid: child.pid,
    running,
    stderr: () => err,
    kill() {
      if (running()) child.kill('SIGKILL');
    },
    async stop() {
      if (running()) {
        child.kill('SIGINT');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }
      await done;
      const at = out.indexOf('{');
      if (at < 0) return undefined;
      try {
        const json = JSON.parse(out.slice(at)) as FioJson;
        const perDevice: Record<string, number> = {};
        for (const j of json.jobs) perDevice[j.jobname] = j.read.iops + j.write.iops;
        const total = Object.values(perDevice).reduce((a, b) => a + b, 0);
        return { perDevice, total, seconds: Math.max(0, ...json.jobs.map((j) => j.job_runtime)) / 1000 };
      } catch {
        return undefined;
      }
    },
  };
}

/** What the devices completed between two readings of /proc/diskstats. */
export interface DeviceRates {
  readonly seconds: number;
  /** I/Os per second per device name, and in all. */
  readonly perDevice: Readonly<Record<string, number>>;
  readonly total: number;
}

/** A reading of /proc/diskstats with its time, for deviceRates. */
export interface StatsMark {
  readonly at: number;
  readonly stats: Map<string, DiskStats>;
}

export function markDiskstats(): StatsMark {
  return { at: performance.now(), stats: readDiskstats() };
}

export function deviceRates(before: StatsMark, after: StatsMark, names: readonly string[]): DeviceRates {
  const seconds = (after.at - before.at) / 1000;
  const delta = diskstatsDelta(before.stats, after.stats);
  const perDevice: Record<string, number> = {};
  for (const n of names) {
    const d = delta.get(n);
    perDevice[n] = d && seconds > 0 ? completedRequests(d) / seconds : 0;
  }
  return { seconds, perDevice, total: Object.values(perDevice).reduce((a, b) => a + b, 0) };
}

export function describeRates(r: { perDevice: Readonly<Record<string, number>>; total: number }): string {
  const each = Object.entries(r.perDevice)
    .map(([n, v]) => `${n} ${Math.round(v).toLocaleString('en-US')}`)
    .join(', ');
  return `${Math.round(r.total).toLocaleString('en-US')} IOPS (${each})`;
}

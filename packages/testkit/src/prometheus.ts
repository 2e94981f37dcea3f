/**
 * A real Prometheus (Debian's `prometheus` package) for tests: started on loopback in a temp
 * directory with native histograms enabled, scraping the given targets every second (or every
 * `scrapeIntervalS`) with
 * honor_labels (each agent's own `instance` label is kept). Stopped and removed after the test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CleanupContext } from './loop.js';
import { freePort } from './net.js';

export interface PrometheusServer {
  readonly url: string;
  /** An instant query at `time` (unix seconds); the result vector's metric labels and values. */
  query(promql: string, time: number): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** Unix second of the newest scrape of every target, or undefined before each was scraped once. */
  lastScrapes(): Promise<number | undefined>;
  /**
   * The distinct values of blkheat_histogram_window_end_seconds Prometheus stored for an
   * instance over the last `seconds`, ascending: where each stored scrape's data ends. The fleet
   * view dates a scrape's increment by them, so tests group an agent's seconds the same way.
   */
  windowEnds(instance: string, seconds?: number): Promise<number[]>;
  stop(): Promise<void>;
}

/** Why Prometheus cannot run here, or undefined. */
export function prometheusUnavailable(): string | undefined {
  const r = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return 'prometheus is not installed (apt-get install prometheus; ./bootstrap test installs it)';
  return undefined;
}

/** A started Prometheus: where it listens, its pid, and how to stop it (its directory is removed then). */
export interface SpawnedPrometheus {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Debian's prometheus with `config`, its data in `dir` (removed when stopped), on a free loopback
 * port with native histograms; resolves once it is ready, or throws with its stderr. Stopped
 * after the test (SIGTERM, SIGKILL after `stopMs`). The one start of every test's Prometheus.
 */
export async function spawnPrometheus(
  config: string,
  dir: string,
  t: CleanupContext,
  limits: { readonly readyMs: number; readonly stopMs: number },
  flags: readonly string[] = [],
): Promise<SpawnedPrometheus> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--enable-feature=native-histograms',
      '--log.level=warn',
      ...flags,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), limits.stopMs);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  t.after(stop);

  const deadline = Date.now() + limits.readyMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`prometheus not ready in ${limits.readyMs / 1000} s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  if (child.pid === undefined) throw new Error('prometheus started without a pid');
  return { url, pid: child.pid, stop };
}

export async function startPrometheus(options: {
  targets: readonly string[];
  t: CleanupContext;
  /** Rule files (recording and alerting) to load, evaluated every second. */
  ruleFiles?: readonly string[];
  /** Seconds between scrapes (default 1); the scrape timeout is 90 % of it. */
  scrapeIntervalS?: number;
}): Promise<PrometheusServer> {
  const intervalS = options.scrapeIntervalS ?? 1;
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      ...(options.ruleFiles?.length ? ['rule_files:', ...options.ruleFiles.map((f) => `  - '${f}'`)] : []),
      'scrape_configs:',
      '  - job_name: blkheat',
      '    honor_labels: true',
      `    scrape_interval: ${intervalS}s`,
      `    scrape_timeout: ${Math.round(intervalS * 900)}ms`,
      '    static_configs:',
      `      - targets: [${options.targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const { url, stop } = await spawnPrometheus(config, dir, options.t, { readyMs: 30_000, stopMs: 10_000 });

  const api = async (path: string): Promise<unknown> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data?: unknown; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    async query(promql, time) {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(promql)}&time=${time}`)) as {
        resultType: string;
        result: { metric: Record<string, string>; value: [number, string] }[];
      };
      if (data.resultType !== 'vector') throw new Error(`prometheus: ${promql} gave a ${data.resultType}, not a vector`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async lastScrapes() {
      const data = (await api('/api/v1/targets')) as { activeTargets: { health: string; lastScrape: string; lastError: string }[] };
      if (data.activeTargets.length !== options.targets.length) return undefined;
      let oldest = Infinity;
      for (const t of data.activeTargets) {
        if (t.health !== 'up') return undefined;
        oldest = Math.min(oldest, Date.parse(t.lastScrape) / 1000);
      }
      return Number.isFinite(oldest) ? oldest : undefined;
    },
    async windowEnds(instance, seconds = 600) {
      const promql = `blkheat_histogram_window_end_seconds{instance="${instance}"}[${seconds}s]`;
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(promql)}&time=${Date.now() / 1000}`)) as {
        result: { values: [number, string][] }[];
      };
      return [...new Set((data.result[0]?.values ?? []).map((v) => Number(v[1])))].sort((a, b) => a - b);
    },
    stop,
  };
}

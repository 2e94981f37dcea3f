/**
 * A witness of an agent's responsiveness: GET /healthz every `intervalMs` from a process of its
 * own, timing each answer. It runs apart from the test so that the test's own work (hundreds of
 * hostile connections on its event loop) cannot delay the probe and be blamed on the agent.
 */
import { spawn } from 'node:child_process';

export interface HealthProbeResult {
  /** Probes answered (any status). */
  readonly answered: number;
  /** Probes that failed (no answer within the probe's timeout, connection refused). */
  readonly failed: number;
  /** Slowest answer, in ms. */
  readonly maxMs: number;
  /** Answers slower than the limit the probe was started with. */
  readonly slow: number;
  /** Statuses other than 200 seen. */
  readonly not200: number;
  /** "at +12.3 s: 412 ms" for the slowest few, for assertion messages. */
  readonly worst: readonly string[];
}

export interface HealthProbe {
  stop(): Promise<HealthProbeResult>;
}

const SCRIPT = `
const [url, intervalMs, limitMs] = process.argv.slice(1).map((v, i) => (i === 0 ? v : Number(v)));
const started = performance.now();
const times = [];
let failed = 0, not200 = 0, running = true;
process.on('SIGTERM', () => { running = false; });
(async () => {
  // fetch's first call loads its HTTP client (~50-250 ms here): the probe's cost, not the agent's.
  await fetch(url).then((r) => r.arrayBuffer()).catch(() => undefined);
  while (running) {
    const t0 = performance.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(10000) });
      await res.arrayBuffer();
      if (res.status !== 200) not200++;
      times.push([t0 - started, performance.now() - t0]);
    } catch { failed++; }
    await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - (performance.now() - t0))));
  }
  const worst = [...times].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([at, ms]) => 'at +' + (at / 1000).toFixed(1) + ' s: ' + ms.toFixed(0) + ' ms');
  process.stdout.write(JSON.stringify({
    answered: times.length, failed, not200,
    maxMs: times.reduce((m, t) => Math.max(m, t[1]), 0),
    slow: times.filter((t) => t[1] > limitMs).length, worst,
  }));
})();
`;

/** Starts probing `baseUrl`healthz; stop() ends it and returns what it saw. */
export function startHealthProbe(baseUrl: string, limitMs: number, intervalMs = 50): HealthProbe {
  const child = spawn(process.execPath, ['-e', SCRIPT, `${baseUrl.replace(/\/$/, '')}/healthz`, String(intervalMs), String(limitMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(out) as HealthProbeResult;
    },
  };
}

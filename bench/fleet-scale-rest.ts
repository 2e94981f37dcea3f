/**
 * What bench/fleet-scale.ts measures of the servers it runs: a process' RSS and CPU from /proc,
 * the fleet server's Prometheus requests (its /metrics), a page action over REST (its time and
 * the requests it made), the ranked table's route, the probes of the 1 h row and table during the
 * run, and how many back-filled scrapes Prometheus holds. Prints nothing; the bench does.
 */
import type { FleetRanking } from '@blkheat/shared-types';
import { procCpuSeconds, procStatusKb } from '@blkheat/testkit';

/** Max and last of a process' VmRSS and its CPU seconds, sampled every second. */
export function watch(pid: number): { maxRss: number; lastRss: number; cpu0: number; t0: number; stop(): void } {
  const w = { maxRss: 0, lastRss: 0, cpu0: procCpuSeconds(pid), t0: Date.now(), stop: () => clearInterval(timer) };
  const sample = (): void => {
    try {
      w.lastRss = procStatusKb(pid, 'VmRSS') * 1024;
      w.maxRss = Math.max(w.maxRss, w.lastRss);
    } catch {
      // the process is gone: keep what was read
    }
  };
  sample();
  const timer = setInterval(sample, 1000);
  return w;
}

export async function requestsMade(fleetUrl: string): Promise<number> {
  const text = await (await fetch(`${fleetUrl}metrics`)).text();
  const m = /^blkheat_fleet_prometheus_requests_total(?:\{[^}]*\})? (\d+)/m.exec(text);
  if (!m) throw new Error('the fleet server has no blkheat_fleet_prometheus_requests_total');
  return Number(m[1]);
}

export interface ActionFigures {
  readonly name: string;
  readonly requests: number;
  readonly ms: number[];
  readonly bytes: number;
  readonly status: number;
}

/** Runs a page action 3 times: the fewest Prometheus requests it made, and every time it took. */
export async function action(fleetUrl: string, name: string, path: string): Promise<ActionFigures> {
  let fewest = Infinity;
  const ms: number[] = [];
  let bytes = 0;
  let status = 0;
  for (let i = 0; i < 3; i++) {
    const before = await requestsMade(fleetUrl);
    const t0 = performance.now();
    const res = await fetch(`${fleetUrl}${path}`);
    const body = await res.arrayBuffer();
    ms.push(performance.now() - t0);
    fewest = Math.min(fewest, (await requestsMade(fleetUrl)) - before);
    bytes = body.byteLength;
    status = res.status;
    if (!res.ok) console.log(`${name}: HTTP ${res.status}: ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
  }
  return { name, requests: fewest, ms, bytes, status };
}

/**
 * The ranked table over the fleet server's route (GET /api/v1/fleet/ranking), 3 times: the
 * Prometheus queries it says it made, its times, and its first rows.
 */
export async function rankingFigures(
  fleetUrl: string,
  query: string,
): Promise<{ queries: number[]; ms: number[]; first: string; firstP99: string; secondP99: string; rows: number; order: string[] }> {
  const ms: number[] = [];
  const queries: number[] = [];
  let ranking: FleetRanking | undefined;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const res = await fetch(`${fleetUrl}api/v1/fleet/ranking?${query}`);
    const body = await res.text();
    ms.push(performance.now() - t0);
    if (!res.ok) throw new Error(`ranking ?${query}: HTTP ${res.status}: ${body.slice(0, 300)}`);
    ranking = JSON.parse(body) as FleetRanking;
    queries.push(ranking.prometheusQueries);
  }
  const [a, b] = ranking?.disks ?? [];
  return {
    queries,
    ms,
    first: a ? `${a.instance}/${a.disk}` : 'none',
    firstP99: a?.p99.toFixed(4) ?? '-',
    secondP99: b?.p99.toFixed(4) ?? '-',
    rows: ranking?.disks.length ?? 0,
    order: ranking?.disks.map((d) => `${d.instance}/${d.disk}`) ?? [],
  };
}

/** How many window-end samples of `instance` Prometheus holds over the last 2 hours. */
export async function storedScrapes(url: string, instance: string): Promise<number> {
  const q = `count_over_time(blkheat_histogram_window_end_seconds{instance="${instance}"}[2h])`;
  const body = (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(q)}`)).json()) as {
    data?: { result?: { value: [number, string] }[] };
  };
  return Number(body.data?.result?.[0]?.value[1] ?? 0);
}

export interface Probe {
  readonly minutes: number;
  readonly rowMs: number;
  readonly rankingMs: number;
  readonly queries: number;
  readonly first: string;
}

/** The 1 h fleet row and ranked table over REST, once each, during the run. */
export async function probe(fleetUrl: string, minutes: number): Promise<Probe> {
  const now = Math.floor(Date.now() / 1000);
  const hour = `from=${now - 3600}&to=${now}`;
  let t0 = performance.now();
  const row = await fetch(`${fleetUrl}api/v1/range?${hour}`);
  await row.arrayBuffer();
  const rowMs = performance.now() - t0;
  t0 = performance.now();
  const res = await fetch(`${fleetUrl}api/v1/fleet/ranking?${hour}&limit=50`);
  const body = await res.text();
  const rankingMs = performance.now() - t0;
  if (!row.ok || !res.ok) return { minutes, rowMs, rankingMs, queries: 0, first: `HTTP ${row.status} / ${res.status}` };
  const ranking = JSON.parse(body) as FleetRanking;
  const a = ranking.disks[0];
  return { minutes, rowMs, rankingMs, queries: ranking.prometheusQueries, first: a ? `${a.instance}/${a.disk}` : 'none' };
}

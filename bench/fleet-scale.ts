/**
 * bench/fleet-scale: the fleet view at production scale (issue 30, "Scale").
 *
 *   flock /tmp/blkheat-kernel.lock node --import tsx bench/fleet-scale.ts \
 *     [--hosts 1000] [--minutes 10] [--scrape 15] [--backfill 0] [--no-agents] [--probe-every 10] \
 *     [--live-watch 120] [--page-tries 1] [--hold 0]
 *
 * Starts N simulated hosts x 4 disks in this process (apps/agent/src/fleet/simulated-hosts.ts:
 * each its own target and instance, the agent's own /metrics code, one host slow), and beside
 * them 3 real agents (testkit's startScrapedAgents: host-a and host-b on loop devices, host-c on
 * a 5 ms FUSE-delayed one, each with fio; root and the kernel lock; --no-agents leaves them
 * out), Debian's Prometheus scraping them all every --scrape seconds, and the real
 * `blkheat fleet` as its own process (build first: node scripts/build.mjs). Every
 * --probe-every minutes of the run it times the 1 h fleet row and the ranked table over REST (how
 * their cost grows with the history Prometheus holds). `--backfill M` first writes the simulated
 * hosts' last M minutes into Prometheus by remote write (bench/fleet-backfill.ts), before any
 * scrape: `--backfill 55 --minutes 5` gives a page an hour of history in ~10 minutes of scrapes
 * instead of 60 (the real agents have only the scrapes). `--hold M` leaves it all running M minutes
 * after the figures, for a look by hand. After --minutes of scrapes it performs
 * page actions over REST and prints:
 *  - per action: the Prometheus requests it made (blkheat_fleet_prometheus_requests_total on the
 *    fleet server's /metrics; the fewest of 3 tries, so that a discovery round running beside it
 *    is not counted), its time, its answer's size;
 *  - the fleet server's RSS over the run (max and at the end), and its requests while idle;
 *  - the ranked table (GET /api/v1/fleet/ranking, whole fleet and filtered): its Prometheus
 *    queries (its answer's own count, and the /metrics count as for every action), its time, the
 *    slow host first or not; how many rows link to their own host;
 *  - Prometheus' CPU (% of one core) and RSS over the run, from /proc/<pid>;
 *  - the real agents: their rows listed, linked to their own agent, their rank in the table;
 *  - the page in chromium (bench/web/fleet-page.ts; --no-page skips it): a 1 h range and the
 *    live page opened (each --page-tries times: one try is one sample of a machine's speed) (to the heat maps' window, to idle, to the ranked table's rows), the live
 *    page's view end watched for --live-watch seconds (a move a scrape?), the ranked table's
 *    first row clicked, screenshots of the overview, the table and that host in
 *    artifacts/fleet-scale/.
 * Prints figures, asserts nothing about time. Loads BPF only in the 3 real agents.
 */
import type { DiskInfo } from '@blkheat/shared-types';
import {
  procCpuSeconds,
  startAgentInTempDir,
  startAgentProcess,
  startFio,
  startFleetPrometheus,
  startScrapedAgents,
  type ScrapedAgents,
} from '@blkheat/testkit';
import { startSimulatedFleet } from '../apps/agent/src/fleet/simulated-hosts.js';
import { benchArgs, usageError } from './cli.js';
import { backfill, type BackfillFigures } from './fleet-backfill.js';
import { action, type ActionFigures, probe, type Probe, rankingFigures, requestsMade, storedScrapes, watch } from './fleet-scale-rest.js';
import { fleetPageFigures, type FleetPageFigures } from './web/fleet-page.js';

const USAGE = `usage: flock /tmp/blkheat-kernel.lock node --import tsx bench/fleet-scale.ts [options]   (as root; build first)

The fleet view at production scale: N simulated hosts x 4 disks and 3 real agents scraped by
Debian's Prometheus, the real \`blkheat fleet\` asking it; prints each page action's Prometheus
queries and time, RSS and CPU, and the page in chromium (see the file's header).

  --hosts N          simulated hosts, 4 disks each (default 1000)
  --minutes M        minutes of scrapes before the page actions (default 10)
  --scrape S         Prometheus' scrape interval, seconds (default 15)
  --backfill M       the simulated hosts' last M minutes written into Prometheus first, 0-58 (default 0)
  --no-agents        leave the 3 real agents out (no BPF, no root needed for them)
  --no-page          leave the chromium page out
  --probe-every M    time the 1 h fleet row and the ranked table every M minutes of the run (default 10)
  --live-watch S     watch the live page's view end for S seconds (default 120)
  --page-tries N     open the 1 h page and the live page N times each, 1-20 (default 1)
  --hold M           leave everything running M minutes after the figures (default 0)
  -h, --help         show this help`;

const values = benchArgs(
  'bench/fleet-scale',
  USAGE,
  {
    hosts: { type: 'string', default: '1000' },
    minutes: { type: 'string', default: '10' },
    scrape: { type: 'string', default: '15' },
    backfill: { type: 'string', default: '0' },
    page: { type: 'boolean', default: true },
    agents: { type: 'boolean', default: true },
    'probe-every': { type: 'string', default: '10' },
    'live-watch': { type: 'string', default: '120' },
    'page-tries': { type: 'string', default: '1' },
    hold: { type: 'string', default: '0' },
  },
  { allowNegative: true },
);
const bad = (message: string): never => usageError('bench/fleet-scale', USAGE, message);
const HOSTS = Number(values.hosts);
const MINUTES = Number(values.minutes);
const SCRAPE_S = Number(values.scrape);
const BACKFILL_MIN = Number(values.backfill);
const PROBE_EVERY_MIN = Number(values['probe-every']);
const LIVE_WATCH_S = Number(values['live-watch']);
const HOLD_MIN = Number(values.hold);
const PAGE_TRIES = Number(values['page-tries']);
for (const [flag, v] of Object.entries({
  hosts: HOSTS,
  minutes: MINUTES,
  scrape: SCRAPE_S,
  'probe-every': PROBE_EVERY_MIN,
  'live-watch': LIVE_WATCH_S,
})) {
  if (!Number.isFinite(v) || v <= 0) bad(`--${flag} takes a number over 0, not ${JSON.stringify(values[flag as keyof typeof values])}`);
}
if (!Number.isInteger(PAGE_TRIES) || PAGE_TRIES < 1 || PAGE_TRIES > 20)
  bad(`--page-tries takes a whole number from 1 to 20, not ${JSON.stringify(values['page-tries'])}`);
if (!Number.isFinite(HOLD_MIN) || HOLD_MIN < 0) bad(`--hold takes minutes, 0 or more, not ${JSON.stringify(values.hold)}`);
// Prometheus takes no sample older than an hour before the newest it holds.
if (!Number.isFinite(BACKFILL_MIN) || BACKFILL_MIN < 0 || BACKFILL_MIN > 58)
  bad(`--backfill takes minutes from 0 to 58, not ${JSON.stringify(values.backfill)}`);
const MiB = 1024 * 1024;

const cleanups: (() => void | Promise<void>)[] = [];
const ctx = { after: (fn: () => void | Promise<void>) => void cleanups.push(fn) };
async function cleanup(): Promise<void> {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {
      // best effort: everything else still gets stopped
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The 3 real agents, with fio on each disk for the whole run; stopped and removed after it. */
async function startRealAgents(): Promise<ScrapedAgents> {
  log('starting 3 real agents (loop devices, one FUSE-delayed; needs root)');
  const real = await startScrapedAgents(ctx, (args) => startAgentInTempDir(ctx, args, 'blkheat-bench-fleet-'));
  const runtimeS = MINUTES * 60 + 900;
  const [a, b, c] = real.hosts;
  startFio({ filename: a.path, rw: 'randread', runtimeS, rateIops: 300 }, ctx);
  startFio({ filename: b.path, rw: 'randrw', runtimeS, rateIops: 200 }, ctx);
  startFio({ filename: c.path, rw: 'randread', runtimeS, rateIops: 100 }, ctx);
  log(`real agents: ${real.hosts.map((h, i) => `${h.instance} ${h.disk} at ${real.targets[i]}`).join(', ')}`);
  return real;
}

/** Each real agent's row: listed, linked to its own agent, its place in the ranked table. */
function realAgentRows(real: ScrapedAgents, disks: readonly DiskInfo[], order: readonly string[]): string[] {
  return real.hosts.map((h, i) => {
    const row = disks.find((d) => d.name === `${h.instance}/${h.disk}`);
    const own = `http://${real.targets[i]}/`;
    const place = order.indexOf(`${h.instance}/${h.disk}`);
    const link = row?.link === undefined ? 'no link' : row.link === own ? 'linked to its own agent' : `a WRONG link ${row.link}`;
    return `${h.instance}/${h.disk}: ${row ? `listed, ${link}` : 'NOT LISTED'}; ranked ${place < 0 ? `not in the first ${order.length}` : `#${place + 1}`}`;
  });
}

async function main(): Promise<void> {
  log(`starting ${HOSTS} simulated hosts x 4 disks`);
  const backfillFrom = Math.floor(Date.now() / 1000) - Math.round(BACKFILL_MIN * 60);
  const sim = await startSimulatedFleet({ hosts: HOSTS, since: backfillFrom });
  ctx.after(() => sim.stop());
  const real = values.agents ? await startRealAgents() : undefined;
  const targets = [...sim.targets, ...(real?.targets ?? [])];
  const prom = await startFleetPrometheus({ targets, t: ctx, scrapeIntervalS: SCRAPE_S, backfill: BACKFILL_MIN > 0 });
  const promWatch = watch(prom.pid);
  ctx.after(() => promWatch.stop());
  let backfilled: BackfillFigures | undefined;
  if (BACKFILL_MIN > 0) {
    log(`back-filling the simulated hosts' last ${BACKFILL_MIN} min by remote write`);
    const b = (backfilled = await backfill({
      prometheusUrl: prom.url,
      hosts: HOSTS,
      exposeAt: (h, at) => sim.exposeAt(h, at),
      from: backfillFrom + SCRAPE_S,
      intervalS: SCRAPE_S,
      job: 'blkheat',
      log,
    }));
    log(
      `back-filled ${b.scrapes} scrapes (${b.series} series samples, ${(b.bytes / MiB).toFixed(1)} MiB compressed) in ${b.seconds.toFixed(0)} s`,
    );
    log(
      `Prometheus holds ${await storedScrapes(prom.url, sim.slowInstance)} back-filled scrapes of ${sim.slowInstance}, of ${b.rounds} written`,
    );
    await prom.startScraping();
  }
  log(`prometheus ${prom.url} (pid ${prom.pid}) scraping every ${SCRAPE_S} s; slow host ${sim.slowInstance}`);
  for (;;) {
    const t = await prom.targetsUp();
    if (t.total === targets.length && t.up === targets.length) break;
    await sleep(2000);
  }
  log('every target up');

  const fleet = await startAgentProcess({ command: 'fleet', args: ['--prometheus', prom.url], readyTimeoutMs: 60_000 });
  ctx.after(async () => {
    await fleet.stop('SIGTERM', 20_000);
  });
  const fleetWatch = watch(fleet.pid);
  ctx.after(() => fleetWatch.stop());
  log(`fleet server ${fleet.url} (pid ${fleet.pid})`);

  let disks: DiskInfo[] = [];
  const discoverStart = Date.now();
  while (disks.length < targets.length * 4 - (real ? real.targets.length * 3 : 0)) {
    disks = ((await (await fetch(`${fleet.url}api/v1/disks`)).json()) as { disks: DiskInfo[] }).disks;
    if (Date.now() - discoverStart > 300_000) throw new Error(`only ${disks.length} disks after 5 min`);
    await sleep(1000);
  }
  log(`fleet server lists ${disks.length} disks after ${((Date.now() - discoverStart) / 1000).toFixed(1)} s`);

  const idleFrom = await requestsMade(fleet.url);
  const idleStart = Date.now();
  const runEnd = Date.now() + MINUTES * 60_000;
  const probes: Probe[] = [];
  let probeRequests = 0;
  let nextProbe = Date.now() + PROBE_EVERY_MIN * 60_000;
  while (Date.now() < runEnd) {
    await sleep(Math.min(30_000, runEnd - Date.now()));
    log(`running: fleet RSS ${(fleetWatch.lastRss / MiB).toFixed(0)} MiB, prometheus RSS ${(promWatch.lastRss / MiB).toFixed(0)} MiB`);
    if (Date.now() >= nextProbe && Date.now() < runEnd - 60_000) {
      const before = await requestsMade(fleet.url);
      const p = await probe(fleet.url, (Date.now() - idleStart) / 60_000);
      probeRequests += (await requestsMade(fleet.url)) - before;
      probes.push(p);
      log(
        `probe at ${p.minutes.toFixed(0)} min of scrapes: 1 h fleet row ${p.rowMs.toFixed(0)} ms, ranked table ${p.rankingMs.toFixed(0)} ms (first ${p.first})`,
      );
      nextProbe += PROBE_EVERY_MIN * 60_000;
    }
  }
  const idleRequests = (await requestsMade(fleet.url)) - idleFrom - probeRequests;
  const idleMinutes = (Date.now() - idleStart) / 60_000;

  const now = Math.floor(Date.now() / 1000);
  const hour = `from=${now - 3600}&to=${now}`;
  const slowDisks = disks.filter((d) => d.host === sim.slowInstance).map((d) => `disk=${encodeURIComponent(d.dev)}`);
  const actions: ActionFigures[] = [];
  actions.push(await action(fleet.url, 'list disks', 'api/v1/disks'));
  actions.push(await action(fleet.url, '1 h range naming no disk (the fleet row)', `api/v1/range?${hour}`));
  // What a fleet page asks while it shows device latency (protocol 7): no queue latency query.
  actions.push(await action(fleet.url, '1 h fleet row, device latency only', `api/v1/range?${hour}&phase=device`));
  actions.push(await action(fleet.url, '30 min range naming no disk (the fleet row)', `api/v1/range?from=${now - 1800}&to=${now}`));
  actions.push(await action(fleet.url, "1 h range, one host's 4 disks", `api/v1/range?${hour}&${slowDisks.join('&')}`));
  actions.push(
    await action(fleet.url, "5 min range, one host's 4 disks", `api/v1/range?from=${now - 300}&to=${now}&${slowDisks.join('&')}`),
  );
  // The ranked table: through the route (its own count of queries) and as a page action (the
  // fleet server's /metrics count, fewest of 3), whole fleet and filtered.
  actions.push(await action(fleet.url, 'ranked table, 1 h, 50 rows', `api/v1/fleet/ranking?${hour}&limit=50`));
  // The first ten hosts' names but their last digit, as a glob: "sim-0*" of 40 hosts, "sim-000*" of 1,000.
  const tenHosts = `${(sim.instances[1] ?? '').slice(0, -1)}*`;
  actions.push(
    await action(fleet.url, `ranked table, 1 h, instance=${tenHosts}`, `api/v1/fleet/ranking?${hour}&limit=50&instance=${tenHosts}`),
  );
  const ranking = await rankingFigures(fleet.url, `${hour}&limit=50`);

  // Links: each host's row must link to its own target (each names its instance: docs/fleet.md, links).
  disks = ((await (await fetch(`${fleet.url}api/v1/disks`)).json()) as { disks: DiskInfo[] }).disks;
  const targetOf = new Map(sim.instances.map((inst, i) => [inst, `http://${sim.targets[i]}/`]));
  const hostRows = disks.filter((d) => targetOf.has(d.host ?? ''));
  const rightLinks = hostRows.filter((d) => d.link === targetOf.get(d.host ?? '')).length;
  const noLinks = hostRows.filter((d) => d.link === undefined).length;

  const realRows = real ? realAgentRows(real, disks, ranking.order) : [];

  const promCpu = (procCpuSeconds(prom.pid) - promWatch.cpu0) / ((Date.now() - promWatch.t0) / 1000);
  console.log('');
  console.log(
    `fleet-scale: ${HOSTS} hosts x 4 disks${real ? ' and 3 real agents' : ''}, scrape ${SCRAPE_S} s, ${MINUTES} min of scrapes before the actions`,
  );
  console.log(
    backfilled
      ? `  (a 1 h range holds ${BACKFILL_MIN} min back-filled by remote write, ${backfilled.scrapes} scrapes in ${backfilled.seconds.toFixed(0)} s, then ${MINUTES} min of scrapes)`
      : `  (a 1 h range holds the ${MINUTES} min Prometheus has; --backfill writes earlier minutes by remote write)`,
  );
  console.log('  action                                      requests  time (ms, 3 tries)        answer');
  for (const a of actions) {
    const times = a.ms.map((m) => m.toFixed(0)).join(' / ');
    console.log(
      `  ${a.name.padEnd(44)}${String(a.requests).padStart(8)}  ${times.padEnd(24)}  HTTP ${a.status}, ${(a.bytes / 1024).toFixed(0)} KiB`,
    );
  }
  console.log(
    `  ranked table (GET /api/v1/fleet/ranking, 1 h, 50 rows): ${ranking.queries.join(' / ')} Prometheus queries (its answer's count), ` +
      `${ranking.ms.map((m) => m.toFixed(0)).join(' / ')} ms; ${ranking.rows} rows, ` +
      `first ${ranking.first} (slow host ${sim.slowInstance}), p99 ${ranking.firstP99} s, next p99 ${ranking.secondP99} s`,
  );
  console.log(
    `  links: ${rightLinks} of ${hostRows.length} rows link to their own host, ${noLinks} have none, ${hostRows.length - rightLinks - noLinks} a wrong one`,
  );
  for (const r of realRows) console.log(`  real agent ${r}`);
  if (probes.length > 0) {
    console.log('  during the run (REST, 1 h): minutes of scrapes held / the fleet row (ms) / the ranked table, 50 rows (ms, its queries)');
    for (const p of probes)
      console.log(
        `    ${p.minutes.toFixed(0)} min: ${p.rowMs.toFixed(0)} / ${p.rankingMs.toFixed(0)} ms, ${p.queries} queries, first ${p.first}`,
      );
  }
  console.log(`  idle (discovery, the live clock, links, the warm loop): ${(idleRequests / idleMinutes).toFixed(1)} requests a minute`);
  console.log(
    `  fleet server RSS: max ${(fleetWatch.maxRss / MiB).toFixed(0)} MiB, at the end ${(fleetWatch.lastRss / MiB).toFixed(0)} MiB`,
  );
  console.log(
    `  prometheus: CPU ${(promCpu * 100).toFixed(1)} % of one core over ${((Date.now() - promWatch.t0) / 60_000).toFixed(1)} min, ` +
      `RSS max ${(promWatch.maxRss / MiB).toFixed(0)} MiB, at the end ${(promWatch.lastRss / MiB).toFixed(0)} MiB`,
  );
  console.log(`  simulated hosts answered ${sim.scrapes} scrapes`);
  if (!values.page) return;
  // After the figures above: a page that fails to open loses none of them.
  log('opening the fleet page in chromium');
  let page: FleetPageFigures;
  try {
    page = await fleetPageFigures(fleet.url, now, LIVE_WATCH_S, PAGE_TRIES);
  } catch (e) {
    console.log(`  the page in chromium: FAILED: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
    return;
  }
  console.log('  the page in chromium (ms from navigation: heat maps hold the window / idle / ranked table ready):');
  for (const o of page.opens) {
    console.log(
      `    ${o.what}: ${o.firstWindowMs.toFixed(0)} / ${o.idleMs.toFixed(0)} / ${o.tableMs.toFixed(0)} ms; first ranked ${o.firstRow}` +
        ` (slow host ${sim.slowInstance}); ${o.chips} host and disk chips, ${o.rows} heat-map rows in the page; long tasks: ${o.longTasks}`,
    );
    for (const line of o.asked.slice(0, 20)) console.log(`      ${line}`);
  }
  const edge = page.liveEdge;
  console.log(
    `    live edge at ${HOSTS} hosts, watched ${edge.watchedS} s from view end ${edge.firstTo}: ${edge.moves.length} moves` +
      ` (${Math.floor(edge.watchedS / SCRAPE_S)} scrapes)${edge.leftLive ? '; LEFT LIVE during the watch' : ''}`,
  );
  console.log(`      moves (s): ${edge.moves.map((m) => m.by).join(', ')}`);
  console.log(`      view end behind now when it moved (s): ${edge.moves.map((m) => m.behindS.toFixed(1)).join(', ')}`);
  console.log(
    `    ranked row clicked (${page.click.host}): its rows drawn in ${page.click.ms.toFixed(0)} ms, ${page.click.rows} heat-map rows; long tasks: ${page.click.longTasks}`,
  );
  console.log(`    screenshots: ${page.screenshots.join(', ')}`);
}

/** `--hold M`: everything left running M minutes after the figures, to look at by hand. */
async function hold(): Promise<void> {
  if (HOLD_MIN <= 0) return;
  log(`holding Prometheus, the fleet server and the hosts for ${HOLD_MIN} min (URLs above); stop early with SIGINT`);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, HOLD_MIN * 60_000);
    process.once('SIGINT', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

main()
  .then(hold)
  .catch((e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exitCode = 1;
  })
  .finally(() => cleanup());

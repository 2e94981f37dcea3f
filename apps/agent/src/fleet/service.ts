/**
 * `blkheat fleet` as a service: the composition root of fleet mode, as service/agent.ts is for
 * serve. The same server (server/http.ts: express app, static dashboard, WebSocket hub and
 * sessions, token and Origin rules) with a FleetSource in its context instead of a collector:
 *  - ranges (zoom, history) are asked of Prometheus (fleet-frames.ts), at steps no finer than
 *    the scrape interval;
 *  - the live edge (fleet-live.ts): every second, the newest columns every host has been scraped
 *    for, at the hosts' coarsest scrape interval (1 s: the agents' seconds), are read from
 *    Prometheus, kept in a private live tail and broadcast as frames;
 *  - every few seconds the disks (host × disk) are refreshed from Prometheus' series, and the
 *    links to each host's agent from its targets once a minute (sooner for new disks);
 *  - a big fleet (fleet-disks.ts, OVERVIEW_ABOVE_DISKS) gets a fleet row summed by Prometheus
 *    (its final columns kept, the last 3 h kept warm: fleet-row-cache.ts),
 *    its hosts' rows on demand in bounded batches, and no live frames, only where its data ends
 *    (fleet-frames.ts, fleet-live.ts, docs/fleet.md);
 *  - ranked(): the worst disks over a range, by PromQL (fleet-ranking.ts); a big fleet's
 *    per-disk counts of long ranges kept in final chunks, the last 3 h warm
 *    (fleet-ranking-chunks.ts).
 * While Prometheus is unreachable or has no blkheat series, the reason is logged once, shown on
 * /healthz and on the page (the status message's fleetProblem), and the loops keep retrying.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alignDown, type FleetInfo, FLEET_ROW_ID, type Frame, MAX_HOST_FIELD_LENGTH } from '@blkheat/shared-types';
import { cutAtBytes, type FramesAnswer, type RangeQuery } from '../history/range-read.js';
import { SampleStore } from '../history/samples.js';
import { SampleSource } from '../history/sample-source.js';
import type { RawFrame } from '../history/tier.js';
import type { AgentContext, FleetSource } from '../server/context.js';
import { listenOn } from '../server/http.js';
import { DEVICE_LATENCY_METRIC, QUEUE_LATENCY_METRIC, WINDOW_END_METRIC } from '../server/metrics.js';
import { BUILD_INFO_METRIC } from '../server/instance-help.js';
import { StreamHub } from '../server/hub.js';
import { StaticSite } from '../server/static.js';
import { LatencyTotals } from '../server/totals.js';
import { AGENT_VERSION } from '../version.js';
import { agentUrlOf, FleetDirectory, linksOf } from './fleet-disks.js';
import {
  finalAfter,
  FLEET_PHASES_WITHOUT_QUEUE,
  fleetFrames,
  planFleetRange,
  type ScrapeIntervals,
  wantsOverview,
} from './fleet-frames.js';
import { failureLog } from './failure-log.js';
import { FleetRowCache } from './fleet-row-cache.js';
import { FleetLive } from './fleet-live.js';
import {
  rankFleet,
  type FleetRanking,
  type RankingChunks,
  type RankingRequest,
  warmRankingChunk,
  warmRankingFifths,
} from './fleet-ranking.js';
import { MAX_FIFTH_NUMBERS, RankingChunkCache } from './fleet-ranking-chunks.js';
import { SharedQuestions } from './shared-questions.js';
import { stuckFleet } from './fleet-stuck.js';
import type { FleetOptions } from './options.js';
import { PrometheusApi, promDurationSeconds } from './prometheus-api.js';

/** How often disks are refreshed. */
const DISCOVERY_MS = 5_000;
/** How often links and the scrape interval are, once every disk has its link. */
const LINKS_MS = 60_000;
/** Scrapes of each target compared to link hosts to targets (fleet-disks.ts linksOf: its 5 newest). */
const LINK_SCRAPES = 5;
/** Longer than a healthy target's scrape takes (s). */
const LINK_LAG_S = 2;
/** Assumed until the targets say otherwise. */
const DEFAULT_SCRAPE_INTERVAL_S = 15;
/**
 * How far back the page may scroll: Prometheus' default retention. Its actual retention is not
 * in the HTTP API; columns older than what it keeps read as not recorded.
 */
const PROMETHEUS_RETENTION_S = 15 * 86400;
/**
 * The fleet row kept warm (fleet-row-cache.ts) on a big fleet: the last 3 h at the row's finest
 * step, what a page opening on a 1 h view asks (its view and the margins either side), read
 * from Prometheus at most WARM_CHUNK_S of it a round, newest first, so that filling it after a
 * start never holds Prometheus for long; once filled, a column or two per scrape. Then the
 * fifths of the ranked table's head and tail for a WARM_TABLE_SPAN_S range (a 1 h page: issue
 * 30, "opens a 1-hour range in ≤ 2 s"), and its chunks of the same 3 h (fleet-ranking-chunks.ts),
 * one a round.
 */
const WARM_SPAN_S = 3 * 3600;
const WARM_CHUNK_S = 15 * 60;
const WARM_TABLE_SPAN_S = 3600;

export interface RunningFleet {
  readonly url: string;
  readonly port: number;
  readonly context: AgentContext;
  /** The worst disks over [from, to), by p99, computed by Prometheus (fleet-ranking.ts). */
  ranked(range: RankingRequest): Promise<FleetRanking>;
  /** The big fleet's fleet row columns kept (fleet-row-cache.ts). */
  readonly rowCache: FleetRowCache;
  /** The big fleet's per-disk counts of the ranked table kept (fleet-ranking-chunks.ts). */
  readonly rankingCache: RankingChunkCache;
  stop(): Promise<void>;
}

export async function startFleet(options: FleetOptions, log: (line: string) => void): Promise<RunningFleet> {
  const api = new PrometheusApi(options.prometheus, { auth: options.prometheusAuth, ca: options.prometheusCa });
  const dir = new FleetDirectory();
  const site = StaticSite.load(options.webRoot);
  if (!site) log(`fleet: no dashboard build in ${options.webRoot}: the page will say how to build it (the API works)`);
  // The live tail only (ranges come from Prometheus): private, gone when the fleet server stops.
  const tailDir = mkdtempSync(join(tmpdir(), 'blkheat-fleet-'));
  const liveEdge = new FleetLive({ api, dir, schema: options.schema, tailDir, log });
  const rowCache = new FleetRowCache();
  const rankingCache = new RankingChunkCache();
  const rankingFifths = new RankingChunkCache(MAX_FIFTH_NUMBERS);

  let scrapeInterval = DEFAULT_SCRAPE_INTERVAL_S;
  /** The coarsest interval of the hosts': how long after a column its closing scrape may come. */
  let coarsestInterval = DEFAULT_SCRAPE_INTERVAL_S;
  const intervals = (): ScrapeIntervals => ({ finest: scrapeInterval, coarsest: coarsestInterval });
  /** Whether the targets said the scrape intervals yet (no live edge before: its step is the coarsest). */
  let intervalsKnown = false;
  let problem: { message: string; since: number } | undefined = {
    message: `asking Prometheus at ${api.url}`,
    since: Math.floor(Date.now() / 1000),
  };
  /** Set once the hub exists: tells the pages when the problem changes. */
  let announceStatus: () => void = () => {};
  const setProblem = (p: string | undefined): void => {
    if (p === problem?.message) return;
    log(p === undefined ? `fleet: Prometheus at ${api.url} answers with blkheat series` : `fleet: ${p}; retrying`);
    problem = p === undefined ? undefined : { message: p, since: Math.floor(Date.now() / 1000) };
    announceStatus();
  };

  // The hello's fleet: with where its data ends, once read (fleet-live.ts clock()).
  const info = (): FleetInfo => ({ prometheus: api.url, scrapeInterval, ...liveEdge.clock() });

  /**
   * The fleet row's cache for a range, and which columns of it are final now (fleet-frames.ts
   * finalAfter, for the hosts' coarsest interval: the live step). None until the targets said
   * the scrape intervals: the default could be shorter than the hosts', and a column kept
   * before it was final would stay short.
   */
  const keptRow = (nowS = Date.now() / 1000): { cache: FleetRowCache; finalBefore: number } | undefined =>
    intervalsKnown ? { cache: rowCache, finalBefore: nowS - finalAfter(liveEdge.step) } : undefined;

  /** The ranked table's chunks, a big fleet's only (a small one's ranking reads little), final as keptRow's columns. */
  const keptRanking = (nowS = Date.now() / 1000): RankingChunks | undefined =>
    dir.big && intervalsKnown
      ? { cache: rankingCache, fifths: rankingFifths, finalBefore: nowS - finalAfter(liveEdge.step), schema: options.schema }
      : undefined;

  /**
   * The ranked table, identical questions under way answered once (shared-questions.ts); a
   * joined answer made no Prometheus query of its own, and says so.
   */
  const rankings = new SharedQuestions((q: RankingRequest) => rankFleet(api, dir, q, keptRanking()));
  const ranked = async (q: RankingRequest): Promise<FleetRanking> => {
    const { answer, joined } = await rankings.answer({ scrapeInterval, ...q });
    return joined ? { ...answer, prometheusQueries: 0 } : answer;
  };

  const fleet: FleetSource = {
    info,
    problem: () => problem,
    requestStats: () => api.stats,
    historyFrom: () => Math.floor(Date.now() / 1000) - PROMETHEUS_RETENTION_S,
    async range(req: RangeQuery, maxBytes: number): Promise<FramesAnswer> {
      // The fleet row is increase() per step: a step holds two scrapes at least, or it reads empty.
      const finest = dir.big && wantsOverview(req) ? 2 * scrapeInterval : scrapeInterval;
      const plan = planFleetRange(req.from, req.to, req.step, finest);
      const filter = { disks: req.disks, classes: req.classes };
      // Queue latency only when asked for (protocol 7: a range that names its phases without it).
      const queue = req.phases === undefined || req.phases.includes('queue');
      const { frames } = await fleetFrames(api, dir, plan, filter, intervals(), options.schema, keptRow(), queue);
      const answer = cutAtBytes(asTexts(frames), plan.from, plan.to, plan.step, maxBytes);
      return queue ? answer : { ...answer, phases: FLEET_PHASES_WITHOUT_QUEUE };
    },
    ranked: (q) => ranked({ ...q, scrapeInterval }),
    stuck: (q) => stuckFleet(api, dir, { ...q, at: Date.now() / 1000, scrapeInterval }),
  };

  const context: AgentContext = {
    version: AGENT_VERSION,
    // What a snapshot of the fleet view says it is: the fleet, from this Prometheus (not the
    // machine the fleet server happens to run on).
    host: { hostname: 'fleet', kernel: `Prometheus ${api.url}`.slice(0, MAX_HOST_FIELD_LENGTH), instance: 'fleet' },
    schema: options.schema,
    // The live tail, whose step follows the scrape intervals (a new one when they change).
    get history() {
      return liveEdge.history;
    },
    samples: new SampleSource(new SampleStore({ capacity: 1, windowSeconds: 1 }), undefined, 0),
    totals: new LatencyTotals(options.schema),
    startedAt: Math.floor(Date.now() / 1000),
    disks: () => dir.diskInfos(),
    collectorStats: () => undefined,
    fleet,
  };
  const hub = new StreamHub(context, log);
  liveEdge.attach(hub);
  announceStatus = () => hub.broadcastStatusIfChanged();
  // Remember the first status (hello carries it), so that its end is announced as a change.
  announceStatus();
  let server;
  try {
    server = await listenOn(options, { ctx: context, hub, site, log });
  } catch (e) {
    liveEdge.close();
    rmSync(tailDir, { recursive: true, force: true });
    throw e;
  }

  let stopped = false;
  let announced = dir.changes;
  const announceDisks = (): void => {
    if (dir.changes === announced) return;
    announced = dir.changes;
    hub.broadcastDisks(dir.diskInfos());
  };

  // Links and the scrape interval change rarely, and at a thousand hosts their answers are the
  // biggest of a round (every target, every host's `up`): asked again after LINKS_MS, or sooner
  // while a disk found in the last LINKS_MS has no link yet.
  let linksAt = -Infinity;
  let newDiskAt = -Infinity;
  const metadataLog = failureLog(
    log,
    (message) => `fleet: no target metadata from Prometheus (${message}): hosts are linked by their scrape times only`,
    'fleet: Prometheus serves target metadata again: hosts are linked by it',
  );
  const refreshLinks = async (now: number): Promise<void> => {
    // A scrape is stamped when it starts and stored when it ends: read up to LINK_LAG_S ago, so
    // that a scrape under way is in neither query rather than in one of the two.
    const at = now - LINK_LAG_S;
    const [targets, up, ends, named] = await Promise.all([
      api.targets(),
      // Several scrapes each: their times, jittered by the load, tell targets apart better than one.
      api.rawSamples('up', LINK_SCRAPES * scrapeInterval, at),
      api.rawSamples(WINDOW_END_METRIC, LINK_SCRAPES * scrapeInterval, at),
      // The agents' own word (server/instance-help.ts); the times above link the hosts it lacks.
      api.targetMetadata(BUILD_INFO_METRIC).then(
        (m) => {
          metadataLog.ok();
          return m;
        },
        (e: unknown) => {
          metadataLog.failed(e);
          return [];
        },
      ),
    ]);
    const instances = [...new Set(dir.disks.map((d) => d.instance))];
    const links = linksOf(targets, instances, up, ends, named);
    // A host whose scrapes this round cannot tell apart (a failed scrape, times shared with
    // another target) keeps the link an earlier round found.
    for (const instance of instances) {
      const known = dir.linkOf(instance);
      if (known !== undefined && !links.has(instance)) links.set(instance, known);
    }
    dir.setLinks(links);
    const linked = new Set(links.values());
    const targetIntervals = targets
      .filter((t) => {
        const u = agentUrlOf(t.scrapeUrl);
        return u !== undefined && linked.has(u);
      })
      .map((t) => promDurationSeconds(t.scrapeInterval ?? ''))
      .filter((s): s is number => s !== undefined && s > 0);
    if (targetIntervals.length > 0) {
      // Ranges: the finest step any host has. The live edge: the coarsest, the finest every host has.
      scrapeInterval = Math.min(...targetIntervals);
      coarsestInterval = Math.max(...targetIntervals);
      intervalsKnown = true;
      liveEdge.setStep(coarsestInterval);
    }
    linksAt = Date.now();
  };

  const discover = async (): Promise<void> => {
    try {
      const now = Date.now() / 1000;
      // Label sets only: a thousand hosts' latency series without reading their samples.
      const series = await api.series(`{__name__=~"${DEVICE_LATENCY_METRIC}|${QUEUE_LATENCY_METRIC}"}`, now - 30, now);
      if (dir.learn(series)) newDiskAt = Date.now();
      const sinceLinks = Date.now() - linksAt;
      if (sinceLinks >= LINKS_MS || (Date.now() - newDiskAt < LINKS_MS && dir.unlinked() > 0)) await refreshLinks(now);
      announceDisks();
      setProblem(
        series.length === 0
          ? `Prometheus at ${api.url} has no blkheat series in the last 30 s: are the agents scraped (job with honor_labels: true), ` +
              'and is Prometheus started with --enable-feature=native-histograms?'
          : undefined,
      );
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    }
  };

  /**
   * A big fleet's row, then its ranked table's fifths and chunks, kept warm over the last
   * WARM_SPAN_S: one piece not kept yet a round, newest first (the row's: WARM_CHUNK_S; the
   * table's: one fifth or chunk).
   * Its own loop, so that filling it never delays the live edge's clock. A failure is logged
   * (once until it changes or ends; a page's range says its own) and the next round tries again.
   */
  const warmRow = async (nowS: number): Promise<boolean> => {
    if (rowCache.nearlyFull) return false;
    const step = 2 * scrapeInterval; // the row's finest step (range() above)
    const end = alignDown(Math.floor(nowS - finalAfter(liveEdge.step)), step);
    const chunk = Math.max(1, Math.floor(WARM_CHUNK_S / step)) * step;
    for (let to = end; to > end - WARM_SPAN_S; to -= chunk) {
      const from = Math.max(alignDown(end - WARM_SPAN_S, step), to - chunk);
      if (!rowCache.lacks(step, from, to)) continue;
      await fleetFrames(api, dir, { from, to, step }, { disks: [FLEET_ROW_ID] }, intervals(), options.schema, keptRow(nowS));
      return true;
    }
    return false;
  };
  const warmLog = failureLog(
    log,
    (message) => `fleet: keeping the fleet row and ranked table warm failed: ${message}; retrying`,
    'fleet: the fleet row and ranked table are kept warm again',
  );
  const warm = async (): Promise<void> => {
    if (!dir.big || !intervalsKnown || problem !== undefined) return;
    const nowS = Date.now() / 1000;
    const chunks = keptRanking(nowS);
    try {
      // The fifths before the chunks: a few, then one a minute (their own cache, oldest out first).
      if (!(await warmRow(nowS)) && chunks && !(await warmRankingFifths(api, chunks, nowS, WARM_TABLE_SPAN_S, scrapeInterval)))
        if (!chunks.cache.nearlyFull) await warmRankingChunk(api, chunks, nowS - WARM_SPAN_S, nowS, scrapeInterval);
      warmLog.ok();
    } catch (e) {
      warmLog.failed(e);
    }
  };

  const live = async (): Promise<void> => {
    if (!intervalsKnown || problem !== undefined) return;
    try {
      // A big fleet makes no live frames (each round would read every host's series: docs/fleet.md),
      // but its pages are still told where its data ends.
      if (dir.big) await liveEdge.clockRound();
      else await liveEdge.round();
      announceDisks();
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    }
  };

  // One loop at a time each: a slow Prometheus delays the next round instead of piling them up.
  const loop = (fn: () => Promise<void>, everyMs: number | (() => number)): (() => Promise<void>) => {
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> = Promise.resolve();
    const round = (): void => {
      running = fn().finally(() => {
        if (!stopped) timer = setTimeout(round, typeof everyMs === 'number' ? everyMs : everyMs());
      });
    };
    round();
    return async () => {
      clearTimeout(timer);
      await running;
    };
  };
  const stopDiscovery = loop(discover, DISCOVERY_MS);
  // A small fleet's rounds read its new columns each second; a big fleet's read only its clock,
  // when it is due to move (FleetLive.nextClockReadingMs).
  const stopLive = loop(live, () => (dir.big ? liveEdge.nextClockReadingMs() : 1000));
  const stopWarm = loop(warm, 1000);

  let stopping: Promise<void> | undefined;
  const listening = server;
  return {
    url: server.url,
    port: server.address.port,
    context,
    ranked,
    rowCache,
    rankingCache,
    stop: () =>
      (stopping ??= (async () => {
        stopped = true;
        await Promise.all([stopDiscovery(), stopLive(), stopWarm()]);
        await listening.close();
        liveEdge.close();
        rmSync(tailDir, { recursive: true, force: true });
      })()),
  };
}

/** Frames as the JSON texts a range answer is made of, serialized as they are read. */
function* asTexts(frames: readonly Frame[]): Generator<RawFrame> {
  for (const f of frames) yield { ts: f.ts, json: JSON.stringify(f) };
}

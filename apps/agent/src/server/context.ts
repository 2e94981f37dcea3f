/**
 * What the HTTP and WebSocket layers read from the rest of the agent. The server owns no
 * data: frames live in history, samples in the sample store, counters in the collector.
 */
import type {
  AgentStatus,
  BucketSchema,
  DiskInfo,
  FleetInfo,
  FleetRanking,
  FleetRankingQuery,
  FleetStuck,
  FleetStuckQuery,
  HostInfo,
} from '@blkheat/shared-types';
import type { CollectorStats } from '../collector/types.js';
import type { FramesAnswer, RangeQuery } from '../history/range-read.js';
import type { HistoryStore } from '../history/store.js';
import type { SampleSource } from '../history/sample-source.js';
import type { LatencyTotals } from './totals.js';

export interface AgentContext {
  readonly version: string;
  readonly host: HostInfo;
  /** The latency bucket schema of every histogram served (hello, ranges, snapshots, /metrics). */
  readonly schema: BucketSchema;
  readonly history: HistoryStore;
  readonly samples: SampleSource;
  /** Cumulative histograms since start, exported on /metrics. */
  readonly totals: LatencyTotals;
  /** Unix seconds the agent started. */
  readonly startedAt: number;
  /** Known disks, present or gone. */
  disks(): readonly DiskInfo[];
  /** The collector's self-metrics; undefined when it is not running. */
  collectorStats(): CollectorStats | undefined;
  /** Set when this server is `blkheat fleet` (fleet/service.ts): data comes from Prometheus. */
  readonly fleet?: FleetSource;
  /** Cgroups per disk with a latency histogram on /metrics (serve --metrics-cgroups; 0 or absent: none). */
  readonly metricsCgroups?: number;
}

/** What a fleet server asked of Prometheus since it started (its /metrics). */
export interface PrometheusRequestStats {
  readonly requests: number;
  readonly failed: number;
  /** Open now (at most MAX_CONCURRENT_REQUESTS), and waiting for a slot. */
  readonly inFlight: number;
  readonly waiting: number;
}

/**
 * What a fleet server answers from Prometheus instead of its own history: ranges (any span, at
 * steps no finer than the scrape interval) and its health. Its history holds the live tail only.
 */
export interface FleetSource {
  info(): FleetInfo;
  /** Oldest second ranges may be asked for (Prometheus' data, not the live tail's). */
  historyFrom(): number;
  range(req: RangeQuery, maxBytes: number): Promise<FramesAnswer>;
  /** The worst host × disk rows over a range, by p99, computed by Prometheus (added after 0.4.0). */
  ranked(q: FleetRankingQuery): Promise<FleetRanking>;
  /** Host × disk rows with an I/O in flight for at least q.min seconds now, by PromQL (added after 0.4.0). */
  stuck(q: FleetStuckQuery): Promise<FleetStuck>;
  /** The requests made of Prometheus so far (/metrics). */
  requestStats(): PrometheusRequestStats;
  /** Why the fleet view has no data now (Prometheus unreachable, no series), and since when. */
  problem(): { message: string; since: number } | undefined;
}

/** The status the dashboard shows (hello.status, status messages). */
export function agentStatus(ctx: AgentContext): AgentStatus {
  const fault = ctx.history.health().fault;
  const fleetProblem = ctx.fleet?.problem();
  return {
    startedAt: ctx.startedAt,
    ...(fault ? { historyFault: { message: fault.message, since: fault.since } } : {}),
    ...(fleetProblem ? { fleetProblem } : {}),
  };
}

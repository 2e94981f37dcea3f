/**
 * Three hosts on one machine for the fleet tests on real components: host-a and host-b on plain
 * loop devices, host-c on a FUSE-delayed loop device (SLOW_HOST_DELAY_MS), each with its own
 * agent (--instance, --disk, no samples), scraped every second (or every `scrapeIntervalS`) by
 * a real Prometheus of their own (startScrapedHosts), or by the caller's (startScrapedAgents).
 * How an agent is started is the caller's (each suite has its own data-directory rules);
 * everything is stopped and removed after the test.
 */
import type { AgentProcess } from './agentprocess.js';
import { createDelayedLoopDevice, type DelayedLoopDevice } from './fuse.js';
import { createLoopDevice, type CleanupContext } from './loop.js';
import { startPrometheus, type PrometheusServer } from './prometheus.js';

/** host-c's disk answers every read after this long. */
export const SLOW_HOST_DELAY_MS = 5;

export interface ScrapedHost {
  /** The agent's --instance. */
  readonly instance: string;
  /** Its disk's kernel name (its --disk). */
  readonly disk: string;
  /** The disk's device node, for fio. */
  readonly path: string;
}

export interface ScrapedHosts {
  /** host-a, host-b, host-c, in this order; host-c is the slow one. */
  readonly hosts: readonly [ScrapedHost, ScrapedHost, ScrapedHost];
  /** Their agents, in the same order. */
  readonly agents: readonly AgentProcess[];
  readonly prometheus: PrometheusServer;
  /** host-c's disk, to change its delay or hold a read. */
  readonly slowDisk: DelayedLoopDevice;
}

export interface ScrapedHostsOptions {
  /** Seconds between Prometheus' scrapes (default 1). */
  readonly scrapeIntervalS?: number;
}

/** The three hosts' disks and agents, scraped by no one yet: the caller's Prometheus takes `targets`. */
export interface ScrapedAgents {
  /** host-a, host-b, host-c, in this order; host-c is the slow one. */
  readonly hosts: readonly [ScrapedHost, ScrapedHost, ScrapedHost];
  /** Their agents, in the same order. */
  readonly agents: readonly AgentProcess[];
  /** host:port of each agent, for a scrape config. */
  readonly targets: readonly string[];
  /** host-c's disk, to change its delay or hold a read. */
  readonly slowDisk: DelayedLoopDevice;
}

/**
 * host-a, host-b and host-c with their agents (--instance, --disk, no samples), for a
 * Prometheus of the caller's (bench/fleet-scale puts them beside a thousand simulated hosts).
 */
export async function startScrapedAgents(
  t: CleanupContext,
  startAgent: (args: readonly string[]) => Promise<AgentProcess>,
): Promise<ScrapedAgents> {
  const plainA = createLoopDevice({ sizeMiB: 64, t });
  const plainB = createLoopDevice({ sizeMiB: 64, t });
  const slow = await createDelayedLoopDevice({ delayMs: SLOW_HOST_DELAY_MS, sizeMiB: 32, t });
  const hosts: [ScrapedHost, ScrapedHost, ScrapedHost] = [
    { instance: 'host-a', disk: plainA.name, path: plainA.path },
    { instance: 'host-b', disk: plainB.name, path: plainB.path },
    { instance: 'host-c', disk: slow.name, path: slow.path },
  ];
  const agents = await Promise.all(hosts.map((h) => startAgent(['--instance', h.instance, '--disk', h.disk, '--samples-budget', '0'])));
  return { hosts, agents, targets: agents.map((a) => `127.0.0.1:${a.port}`), slowDisk: slow };
}

/** startScrapedAgents, scraped by a real Prometheus of its own (startPrometheus). */
export async function startScrapedHosts(
  t: CleanupContext,
  startAgent: (args: readonly string[]) => Promise<AgentProcess>,
  options: ScrapedHostsOptions = {},
): Promise<ScrapedHosts> {
  const { hosts, agents, targets, slowDisk } = await startScrapedAgents(t, startAgent);
  const prometheus = await startPrometheus({
    targets,
    t,
    ...(options.scrapeIntervalS !== undefined ? { scrapeIntervalS: options.scrapeIntervalS } : {}),
  });
  return { hosts, agents, prometheus, slowDisk };
}

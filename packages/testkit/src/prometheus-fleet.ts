/**
 * A real Prometheus (Debian's) for fleet-scale runs: many targets, at a scrape interval as
 * fleets run it (15 s by default), native histograms on, honor_labels (each simulated host keeps
 * its own `instance`). Unlike startPrometheus (1 s, a handful of agents), it says its pid, so a
 * bench can read its CPU time and RSS from /proc, and its targets' scrapes are spread over the
 * interval as Prometheus spreads them for a real fleet. Stopped and removed after the run.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CleanupContext } from './loop.js';
import { spawnPrometheus } from './prometheus.js';

export interface FleetPrometheus {
  readonly url: string;
  readonly pid: number;
  readonly scrapeIntervalS: number;
  /** Targets whose last scrape succeeded, and how many there are. */
  targetsUp(): Promise<{ up: number; total: number }>;
  /**
   * Scrapes the first job's targets every `seconds` from now on: the config rewritten and
   * Prometheus told to reload it (SIGHUP); resolves once its targets say the new interval.
   */
  setScrapeInterval(seconds: number): Promise<void>;
  /**
   * With `backfill`: starts scraping the targets (the config rewritten, SIGHUP); resolves once
   * Prometheus lists them all as active.
   */
  startScraping(): Promise<void>;
  stop(): Promise<void>;
}

export interface FleetPrometheusOptions {
  /** host:port of every target. */
  readonly targets: readonly string[];
  readonly t: CleanupContext;
  /** Seconds between two scrapes of a target (default 15). */
  readonly scrapeIntervalS?: number;
  /** Rule files to load (the shipped deploy/prometheus ones: the fleet row reads a recording rule). */
  readonly ruleFiles?: readonly string[];
  /** More targets, each group its own job at its own scrape interval (hosts scraped at different intervals). */
  readonly moreJobs?: readonly { readonly targets: readonly string[]; readonly scrapeIntervalS: number }[];
  /**
   * Accept remote writes (`/api/v1/write`, a bench's back-fill of past scrapes) and scrape
   * nothing until startScraping(): Prometheus appends a series' samples in time order only, and
   * takes none older than an hour before the newest it holds, so the past goes in first.
   */
  readonly backfill?: boolean;
}

/** One job of blkheat targets, as fleets configure it (docs/fleet.md). */
function jobLines(name: string, targets: readonly string[], interval: number): string[] {
  return [
    `  - job_name: ${name}`,
    '    honor_labels: true',
    `    scrape_interval: ${interval}s`,
    // A loaded machine answers a thousand targets late; a timeout short of the interval is Prometheus' rule.
    `    scrape_timeout: ${Math.max(1, Math.floor(interval * 0.9))}s`,
    '    static_configs:',
    ...(targets.length > 0 ? ['      - targets:', ...targets.map((t) => `          - '${t}'`)] : ['      - targets: []']),
  ];
}

export async function startFleetPrometheus(options: FleetPrometheusOptions): Promise<FleetPrometheus> {
  const interval = options.scrapeIntervalS ?? 15;
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-prometheus-fleet-'));
  const config = join(dir, 'prometheus.yml');
  let scraping = !options.backfill;
  /** The first job's scrape interval now (setScrapeInterval changes it). */
  let firstInterval = interval;
  const write = (first: number): void =>
    writeFileSync(
      config,
      [
        'global:',
        `  scrape_interval: ${interval}s`,
        `  evaluation_interval: ${interval}s`,
        ...(options.ruleFiles?.length ? ['rule_files:', ...options.ruleFiles.map((f) => `  - '${f}'`)] : []),
        'scrape_configs:',
        ...jobLines('blkheat', scraping ? options.targets : [], first),
        ...(scraping ? (options.moreJobs ?? []) : []).flatMap((j, i) => jobLines(`blkheat-${i + 2}`, j.targets, j.scrapeIntervalS)),
        '',
      ].join('\n'),
    );
  write(interval);
  const { url, pid, stop } = await spawnPrometheus(
    config,
    dir,
    options.t,
    { readyMs: 60_000, stopMs: 20_000 },
    options.backfill ? ['--web.enable-remote-write-receiver'] : [],
  );
  const activeTargets = async (): Promise<{ health: string; labels: { job?: string }; scrapeInterval?: string }[]> => {
    const body = (await (await fetch(`${url}/api/v1/targets?state=active`)).json()) as {
      data: { activeTargets: { health: string; labels: { job?: string }; scrapeInterval?: string }[] };
    };
    return body.data.activeTargets;
  };
  const allTargets = options.targets.length + (options.moreJobs ?? []).reduce((n, j) => n + j.targets.length, 0);
  return {
    url,
    pid,
    scrapeIntervalS: interval,
    async targetsUp() {
      const list = await activeTargets();
      return { up: list.filter((t) => t.health === 'up').length, total: list.length };
    },
    async startScraping() {
      if (scraping) return;
      scraping = true;
      write(firstInterval);
      process.kill(pid, 'SIGHUP');
      const deadline = Date.now() + 30_000;
      while ((await activeTargets()).length < allTargets) {
        if (Date.now() > deadline) throw new Error(`Prometheus did not list its ${allTargets} targets within 30 s`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async setScrapeInterval(seconds) {
      firstInterval = seconds;
      write(seconds);
      process.kill(pid, 'SIGHUP');
      const deadline = Date.now() + 30_000;
      for (;;) {
        const first = (await activeTargets()).filter((x) => x.labels.job === 'blkheat');
        if (first.length > 0 && first.every((x) => x.scrapeInterval === `${seconds}s`)) return;
        if (Date.now() > deadline) throw new Error(`Prometheus did not take a ${seconds} s scrape interval within 30 s`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    stop,
  };
}

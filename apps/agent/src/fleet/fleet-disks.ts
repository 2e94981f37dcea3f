/**
 * The fleet's disks: one entry per host × disk found in Prometheus' blkheat series. Hosts are
 * the series' `instance` label (the agent's --instance), disks their `dev`. Each host × disk gets
 * a fleet id of the "MAJ:MIN" form the protocol carries (host number : disk number, both from
 * 1, in the order first seen; stable while the fleet server runs), so the dashboard's filters,
 * rows and URL state work unchanged. Each entry also links to the host's own agent dashboard,
 * derived from the scrape URL Prometheus has for that host (targets API).
 */
import { DISK_INFO_LIMITS, type DiskInfo, FLEET_ROW } from '@blkheat/shared-types';
import { QUEUE_LATENCY_METRIC } from '../server/metrics.js';
import { instanceOfBuildInfoHelp } from '../server/instance-help.js';
import type { PromSeries, PromTarget, PromTargetMetadata } from './prometheus-api.js';

export interface FleetDisk {
  readonly id: string;
  readonly instance: string;
  /** The disk's kernel name on its host ("nvme0n1"). */
  readonly disk: string;
  /** Its "MAJ:MIN" on its host. */
  readonly dev: string;
  readonly queued: boolean;
}

/**
 * A fleet of more disks than this is big: ranges that name no disk get the fleet row (every host
 * summed by class, by Prometheus) instead of every disk's row, and named disks are asked for in
 * batches of hosts (fleet-frames.ts). A few dozen rows is what a page reads and what one answer
 * of raw samples holds comfortably.
 */
export const OVERVIEW_ABOVE_DISKS = 64;

/** One host's disk as a map key (instance and dev): the directory's, and the ranked table's and stuck list's rows. */
export function hostDiskKey(instance: string, dev: string): string {
  return `${instance}\u0000${dev}`;
}

/** hostDiskKey's inverse (an instance holds no NUL: Prometheus label values are UTF-8 text). */
export function hostDiskOf(key: string): { readonly instance: string; readonly dev: string } {
  const at = key.indexOf('\u0000');
  return { instance: key.slice(0, at), dev: key.slice(at + 1) };
}

export class FleetDirectory {
  private readonly hosts = new Map<string, number>();
  private readonly byKey = new Map<string, FleetDisk>();
  private readonly links = new Map<string, string>();
  /** Per host, its latency series (metric × disk × class) seen: what a raw range of it costs. */
  private readonly series = new Map<string, Set<string>>();
  /** Disks per host, so numbering a new one does not scan the fleet. */
  private readonly diskCount = new Map<string, number>();
  private version = 0;

  /** Whether the fleet is big (OVERVIEW_ABOVE_DISKS): then it has a fleet row. */
  get big(): boolean {
    return this.byKey.size > OVERVIEW_ABOVE_DISKS;
  }

  /** Latency series of a host seen so far (at least 1). */
  seriesOf(instance: string): number {
    return Math.max(1, this.series.get(instance)?.size ?? 0);
  }

  /** Bumped whenever the list or a link changes. */
  get changes(): number {
    return this.version;
  }

  /** Takes the label sets of the latency series; returns true when a disk was new. */
  learn(series: readonly Readonly<Record<string, string>>[]): boolean {
    let added = false;
    const sorted = [...series].sort(
      (a, b) => (a.instance ?? '').localeCompare(b.instance ?? '') || (a.dev ?? '').localeCompare(b.dev ?? ''),
    );
    for (const s of sorted) {
      const instance = s.instance;
      const dev = s.dev;
      if (!instance || !dev) continue;
      const key = hostDiskKey(instance, dev);
      const queued = s.__name__ === QUEUE_LATENCY_METRIC;
      const names = this.series.get(instance) ?? new Set<string>();
      names.add(`${s.__name__ ?? ''}\u0000${dev}\u0000${s.class ?? ''}`);
      this.series.set(instance, names);
      const known = this.byKey.get(key);
      if (known) {
        if (queued && !known.queued) this.byKey.set(key, { ...known, queued: true });
        continue;
      }
      let host = this.hosts.get(instance);
      if (host === undefined) {
        host = this.hosts.size + 1;
        this.hosts.set(instance, host);
      }
      const diskNo = (this.diskCount.get(instance) ?? 0) + 1;
      this.diskCount.set(instance, diskNo);
      this.byKey.set(key, { id: `${host}:${diskNo}`, instance, disk: s.disk ?? dev, dev, queued });
      added = true;
    }
    if (added) this.version++;
    return added;
  }

  /** The fleet id of a host's disk, if known. */
  idOf(instance: string, dev: string): string | undefined {
    return this.byKey.get(hostDiskKey(instance, dev))?.id;
  }

  get disks(): FleetDisk[] {
    return [...this.byKey.values()];
  }

  /** The link of a host's rows, if known. */
  linkOf(instance: string): string | undefined {
    return this.links.get(instance);
  }

  /** Hosts with disks but no link to their agent. */
  unlinked(): number {
    let n = 0;
    for (const host of this.hosts.keys()) if (!this.links.has(host)) n++;
    return n;
  }

  setLinks(links: ReadonlyMap<string, string>): void {
    let changed = links.size !== this.links.size;
    for (const [k, v] of links) if (this.links.get(k) !== v) changed = true;
    if (!changed) return;
    this.links.clear();
    for (const [k, v] of links) this.links.set(k, v);
    this.version++;
  }

  /** The disks as the protocol lists them; a big fleet's fleet row first. */
  diskInfos(): DiskInfo[] {
    const fleetRow: DiskInfo[] = this.big ? [FLEET_ROW] : [];
    return fleetRow.concat(
      this.disks.map((d) => {
        const link = this.links.get(d.instance);
        return {
          dev: d.id,
          name: `${d.instance}/${d.disk}`.slice(0, DISK_INFO_LIMITS.name),
          kind: d.queued ? 'request' : 'bio',
          present: true,
          host: d.instance.slice(0, DISK_INFO_LIMITS.host),
          ...(link ? { link } : {}),
        };
      }),
    );
  }
}

/** The agent's dashboard URL from its scrape URL: same scheme, host and port, path "/". */
export function agentUrlOf(scrapeUrl: string): string | undefined {
  try {
    const u = new URL(scrapeUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return `${u.protocol}//${u.host}/`;
  } catch {
    return undefined;
  }
}

/** The times of a series' newest scrapes (a target's first scrape may precede its first blkheat frame). */
function timestamps(s: PromSeries): string {
  return (s.values ?? [])
    .slice(-5)
    .map((v) => v[0].toFixed(3))
    .join(',');
}

/** A target as its labels name it: its job and its own `instance`. */
function targetKey(labels: Readonly<Record<string, string>>): string {
  return `${labels.job ?? ''}\0${labels.instance ?? ''}`;
}

/**
 * The agents' own word for which target serves them: each target's blkheat_build_info HELP names
 * the agent's instance (server/instance-help.ts). An instance two targets name with different
 * URLs (two agents given one --instance) maps to null: neither is linked.
 */
function namedByTargets(targets: readonly PromTarget[], metadata: readonly PromTargetMetadata[]): Map<string, string | null> {
  const byKey = new Map(targets.map((t) => [targetKey(t.labels), t]));
  const out = new Map<string, string | null>();
  for (const m of metadata) {
    const instance = instanceOfBuildInfoHelp(m.help);
    const target = byKey.get(targetKey(m.target));
    const url = target ? agentUrlOf(target.scrapeUrl) : undefined;
    if (instance === undefined || url === undefined) continue;
    const seen = out.get(instance);
    out.set(instance, seen === undefined || seen === url ? url : null);
  }
  return out;
}

/**
 * Which target scrapes which instance. When the target's own `instance` label is the agent's
 * (no honor_labels), that says it. With honor_labels (what docs/fleet.md recommends) the
 * series carry the agent's instance and lose the target's; then, first, the target whose
 * blkheat_build_info HELP names the instance (`metadata`, Prometheus' per-target metadata:
 * agents since it says so); else the target whose `up` samples have exactly the timestamps of
 * the instance's blkheat samples: Prometheus stamps every sample of one scrape with that
 * scrape's time, and scrapes of different targets are spread over the interval, so the sets of
 * times mostly differ from target to target.
 */
export function linksOf(
  targets: readonly PromTarget[],
  instances: readonly string[],
  up: readonly PromSeries[],
  windowEnds: readonly PromSeries[],
  metadata: readonly PromTargetMetadata[] = [],
): Map<string, string> {
  const out = new Map<string, string>();
  const byInstance = new Map<string, PromTarget>();
  for (const t of targets) if (t.labels.instance !== undefined) byInstance.set(t.labels.instance, t);
  const named = namedByTargets(targets, metadata);
  // Targets by the times of their scrapes. Two targets of a big fleet can be scraped at the same
  // milliseconds: such times name no one target, and their hosts get no link rather than a wrong one.
  const byTimes = new Map<string, PromTarget | null>();
  for (const s of up) {
    const target = s.metric.instance === undefined ? undefined : byInstance.get(s.metric.instance);
    if (!target) continue;
    // Only the scrapes that succeeded stored blkheat samples to compare with.
    const times = timestamps({ ...s, values: (s.values ?? []).filter((v) => v[1] === '1') });
    byTimes.set(times, byTimes.has(times) ? null : target);
  }
  const endTimes = new Map<string, string>();
  for (const s of windowEnds) if (s.metric.instance) endTimes.set(s.metric.instance, timestamps(s));
  for (const instance of instances) {
    const own = byInstance.get(instance);
    if (own) {
      const url = agentUrlOf(own.scrapeUrl);
      if (url) out.set(instance, url);
      continue;
    }
    const claimed = named.get(instance);
    if (claimed !== undefined) {
      if (claimed !== null) out.set(instance, claimed);
      continue;
    }
    const times = endTimes.get(instance);
    const target = times === undefined ? undefined : byTimes.get(times);
    const url = target ? agentUrlOf(target.scrapeUrl) : undefined;
    if (url) out.set(instance, url);
  }
  return out;
}

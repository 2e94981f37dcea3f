/**
 * Per-cgroup latency histograms on /metrics (serve --metrics-cgroups N, off by default): one
 * native histogram per disk and cgroup for the N cgroups with the most I/O on that disk since
 * the agent started, the rest summed as "(other)", so the series of a disk still add up to its
 * I/Os. Off by default because each cgroup is a histogram series per disk: a fleet's Prometheus
 * pays for every one of them (docs/fleet.md). The cgroups come from the totals' `cg[]`, which
 * the frames' fold already bounds to the CGROUPS_LISTED busiest.
 */
import {
  addSparseInto,
  CGROUP_OTHER,
  type CgroupSeries,
  type DiskFrame,
  type DiskInfo,
  denseHist,
  type BucketSchema,
  toSparse,
} from '@blkheat/shared-types';
import type { Exposition } from './exposition.js';

export const CGROUP_DEVICE_LATENCY_METRIC = 'blkheat_cgroup_device_latency_seconds';

/** The `keep` busiest cgroups of a disk by I/Os, and the rest (with any "(other)" already there) summed into one. */
export function busiestCgroups(
  cg: readonly CgroupSeries[],
  keep: number,
  schema: BucketSchema,
): { g: string; n: number; d: readonly number[] }[] {
  const named = cg.filter((g) => g.g !== CGROUP_OTHER).sort((a, b) => b.n - a.n || a.g.localeCompare(b.g));
  const kept = named.slice(0, keep).map((g) => ({ g: g.g, n: g.n, d: g.d }));
  const rest = [...named.slice(keep), ...cg.filter((g) => g.g === CGROUP_OTHER)];
  if (rest.length === 0) return kept;
  const dense = denseHist(schema);
  let n = 0;
  for (const g of rest) {
    addSparseInto(dense, g.d);
    n += g.n;
  }
  return [...kept, { g: CGROUP_OTHER, n, d: toSparse(dense) }];
}

/** Writes the family and its series for every disk of the totals. */
export function cgroupLatencyMetrics(
  out: Exposition,
  totals: readonly DiskFrame[],
  disks: ReadonlyMap<string, DiskInfo>,
  keep: number,
  schema: BucketSchema,
): void {
  if (keep <= 0) return;
  out.family(
    CGROUP_DEVICE_LATENCY_METRIC,
    'histogram',
    `Block I/O device latency per disk and the cgroup charged (the ${keep} busiest per disk since start, the rest as "${CGROUP_OTHER}"), since the agent started (serve --metrics-cgroups).`,
  );
  for (const d of totals)
    for (const g of busiestCgroups(d.cg ?? [], keep, schema))
      out.histogram(CGROUP_DEVICE_LATENCY_METRIC, { disk: disks.get(d.dev)?.name ?? d.dev, dev: d.dev, cgroup: g.g }, g.d);
}

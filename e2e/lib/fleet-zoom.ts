/**
 * The fleet page's drag zoom and what its zoomed range must count, for the fleet tests on real
 * agents (e2e/fleet-dashboard*.test.ts): each host's agent's own seconds (its REST range at 1 s),
 * grouped by the scrapes Prometheus stored. The fleet server dates each scrape's difference by
 * the agent's window ends, [end before, end now), and a range holds the differences that start
 * in it (docs/fleet.md, "What a cell counts").
 */
import type { Page } from 'playwright-core';
import { type BucketSchema, conservedCount, type Frame, untimedCount } from '@blkheat/shared-types';
import { denseDevice, type PageHook } from '@blkheat/testkit';

/** Drags across a disk's heat map from the column holding `fromTs` to the one holding `toTs` (in `bucket`'s row). */
export async function dragZoom(page: Page, h: PageHook, dev: string, fromTs: number, toTs: number, bucket: number): Promise<void> {
  const at = async (ts: number): Promise<{ x: number; y: number }> => {
    const p = await h.cellCenter(dev, ts, bucket);
    if (!p) throw new Error(`${dev}'s column ${ts} is not on screen`);
    return p;
  };
  const a = await at(fromTs);
  const b = await at(toTs);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move(b.x, b.y, { steps: 8 });
  await page.mouse.up();
}

/** What an agent counted in the scrape differences that start in a range. */
export interface ScrapeGroupedCounts {
  /** Timed I/Os (the classes' counts, without untimed: the fleet server has no untimed counts). */
  readonly ios: number;
  /** Device latency, dense, bucket by bucket (every class together), in `schema`. */
  readonly device: number[];
  /** The differences, as [end before, end now) of the agent's seconds. */
  readonly groups: readonly (readonly [number, number])[];
  /** Differences covering more than one scrape interval (a late or missed scrape). */
  readonly merged: number;
}

/**
 * An agent's own seconds (GET api/v1/range at step 1) grouped by `ends`, the window ends of the
 * scrapes Prometheus stored (PrometheusServer.windowEnds): the groups that start in
 * [range.from, range.to), summed.
 */
export async function agentCountsByScrapes(
  agentUrl: string,
  ends: readonly number[],
  range: { readonly from: number; readonly to: number },
  schema: BucketSchema,
  scrapeIntervalS: number,
): Promise<ScrapeGroupedCounts> {
  const groups: [number, number][] = [];
  for (let k = 1; k < ends.length; k++) {
    const a = ends[k - 1] as number;
    const b = ends[k] as number;
    if (a >= range.from && a < range.to) groups.push([a, b]);
  }
  const device = denseDevice([], schema);
  let ios = 0;
  const lo = groups[0]?.[0];
  const hi = groups[groups.length - 1]?.[1];
  if (lo !== undefined && hi !== undefined) {
    const res = await fetch(`${agentUrl}api/v1/range?from=${lo}&to=${hi}&step=1`);
    if (!res.ok) throw new Error(`${agentUrl}api/v1/range: ${res.status} ${await res.text()}`);
    const frames = ((await res.json()) as { frames: Frame[] }).frames;
    for (const f of frames) {
      if (!groups.some(([a, b]) => f.ts >= a && f.ts < b)) continue;
      for (const d of f.disks) {
        // This kernel shows some completions to no BPF program (docs/accounting.md): untimed.
        ios += conservedCount(d) - untimedCount(d);
        const dense = denseDevice(
          d.cls.filter((c) => !c.pt),
          schema,
        );
        for (const [i, n] of dense.entries()) device[i] = (device[i] as number) + n;
      }
    }
  }
  const merged = groups.filter(([a, b]) => b - a > 1.5 * scrapeIntervalS).length;
  return { ios, device, groups, merged };
}

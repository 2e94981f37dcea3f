/**
 * Synthetic frames and samples for unit tests of history and the server internals (the
 * acceptance tests use the real collector instead). Deterministic: seeded.
 */
import { sparseTotal, type ClassSeries, type DiskFrame, type Frame, type IoSample } from '@blkheat/shared-types';

import { randomSparseHist, seededRandom } from '@blkheat/testkit';

/** Seeded random numbers, so a failing case reproduces from its seed. */
export const rng = seededRandom;

export const DEVS = ['7:0', '7:1', '8:0', '253:0'];
export const CLASSES = ['Read', 'Write', 'Sync-Write', 'Flush', 'Metadata-Read'];

function hist(r: () => number, density: number): number[] {
  return randomSparseHist(r, density, 40);
}

/** The bio-based disk of DEVS (TEST_DISKS says so too): it has no submit wait or total of its own. */
export const BIO_DEV = '253:0';

/**
 * A frame with a random subset of disks and classes; `idle` chance of no I/O at all. `submit`
 * (protocol 4): request-based disks' classes get submit wait `w`, total `t` and `wu`, their disks
 * `causes`, the marks `wbt` and `tags_full`, and an in-flight state with waiting bios (more draws from r only then: older seeds
 * keep their frames).
 */
export function randomFrame(
  r: () => number,
  ts: number,
  opts: { idle?: number; density?: number; devs?: readonly string[]; cgroups?: boolean; submit?: boolean } = {},
): Frame {
  if (r() < (opts.idle ?? 0.1)) return { ts, step: 1, disks: [] };
  const disks: DiskFrame[] = [];
  for (const dev of opts.devs ?? DEVS) {
    if (r() < 0.3) continue;
    const cls: ClassSeries[] = [];
    for (const c of CLASSES) {
      if (r() < 0.5) continue;
      const d = hist(r, opts.density ?? 0.06);
      const q = hist(r, (opts.density ?? 0.06) / 2);
      const n = Math.max(sparseTotal(d), sparseTotal(q));
      if (opts.submit && dev !== BIO_DEV) {
        const w = hist(r, (opts.density ?? 0.06) / 2);
        const t = hist(r, opts.density ?? 0.06);
        const wu = Math.floor(r() * 3);
        const all = Math.max(n, sparseTotal(w) + wu, sparseTotal(t) + wu);
        if (all > 0) cls.push({ c, n: all, d, q, w, t, wu });
      } else if (n > 0) cls.push({ c, n, d, q });
    }
    // One cgroup per class (no draws from r: older seeds keep their frames), busiest first.
    const cg = cls
      .filter((c) => c.n > 0)
      .map((c) => ({ g: `/${c.c.toLowerCase()}.slice`, n: c.n, d: c.d }))
      .sort((a, b) => b.n - a.n || (a.g < b.g ? -1 : 1));
    if (cls.length === 0) continue;
    const disk: DiskFrame = { dev, cls, dropped: Math.floor(r() * 3), ...(opts.cgroups ? { cg } : {}) };
    if (opts.submit && dev !== BIO_DEV) {
      const waiting = Math.floor(r() * 4);
      const frozen = r() < 0.2;
      disks.push({
        ...disk,
        ...(frozen ? { causes: { frozen: 1 + Math.floor(r() * 5) } } : {}),
        // The disk marks, from draws already made (a seed's other values stay as they were).
        ...(waiting === 2 ? { wbt: 1 + (ts % 3) } : {}),
        ...(waiting === 3 && !frozen ? { tags_full: 1 } : {}),
        inflight: {
          n: Math.floor(r() * 3),
          oldest_ns: Math.floor(r() * 1e9),
          ios: [],
          ...(waiting > 0 ? { waiting, oldest_wait_ns: Math.floor(r() * 2e9) } : {}),
          ...(frozen ? { frozen: true as const } : {}),
        },
      });
    } else disks.push(disk);
  }
  return { ts, step: 1, disks };
}

export function randomFrames(seed: number, from: number, count: number, opts: Parameters<typeof randomFrame>[2] = {}): Frame[] {
  const r = rng(seed);
  return Array.from({ length: count }, (_, i) => randomFrame(r, from + i, opts));
}

/**
 * A sample with every field drawn; `w_ns` (added in 4) absent (a bio-based disk, an older agent),
 * null (submission not seen) or known, whatever the other fields (the store must keep any mix).
 */
export function randomSample(r: () => number, tsUs: number): IoSample {
  const sample: IoSample = {
    ts_us: tsUs,
    dev: DEVS[Math.floor(r() * DEVS.length)] as string,
    c: CLASSES[Math.floor(r() * CLASSES.length)] as string,
    sector: Math.floor(r() * 1e9),
    bytes: 4096 * (1 + Math.floor(r() * 32)),
    q_ns: r() < 0.2 ? null : Math.floor(r() * 1e6),
    d_ns: Math.floor(r() * 2e7),
    pid: 1 + Math.floor(r() * 60000),
    comm: ['fio', 'kworker/u8:3', 'jbd2/vda1-8', 'postgres', 'dd'][Math.floor(r() * 5)] as string,
    cgroup: Math.floor(r() * 1e6),
    outlier: r() < 0.1,
  };
  const w = r();
  return w < 0.2 ? sample : { ...sample, w_ns: w < 0.3 ? null : Math.floor(r() * 5e6) };
}

/** Unix second aligned to `step` about `agoS` seconds in the past. */
export function alignedAgo(agoS: number, step = 3600): number {
  const now = Math.floor(Date.now() / 1000);
  return Math.floor((now - agoS) / step) * step;
}

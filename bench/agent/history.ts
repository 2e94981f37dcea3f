/**
 * Synthetic history for the "RSS with 24 h of history for 8 disks" figure: 24 h of one-second
 * frames for 8 disks, written through the agent's own HistoryStore (so the 10 s and 60 s
 * tiers are built exactly as in production), ending now. Frame shapes are modelled on a busy
 * disk: 4 op classes, ~14 device-latency and ~6 queue-latency buckets each.
 */
import { bucketCount, type ClassSeries, type DiskFrame, type Frame } from '@blkheat/shared-types';
import { HistoryStore } from '../../apps/agent/src/history/store.js';
import { seededRandom as rng } from '@blkheat/testkit';

const CLASSES = ['Read', 'Sync-Write', 'Flush', 'Metadata-Read'];

function hist(r: () => number, center: number, width: number): number[] {
  const out: number[] = [];
  const lo = Math.max(1, center - width);
  const hi = Math.min(bucketCount() - 1, center + width);
  for (let i = lo; i <= hi; i++) if (r() < 0.9) out.push(i, 1 + Math.floor(r() * 400));
  return out;
}

export function syntheticFrame(r: () => number, ts: number, disks: number): Frame {
  const out: DiskFrame[] = [];
  for (let d = 0; d < disks; d++) {
    const cls: ClassSeries[] = CLASSES.map((c, k) => {
      const dh = hist(r, 40 + k * 3 + d, 7);
      const qh = hist(r, 20 + k, 3);
      let n = 0;
      for (let i = 1; i < dh.length; i += 2) n += dh[i] as number;
      return { c, n, d: dh, q: qh };
    });
    out.push({ dev: `8:${d * 16}`, cls, dropped: Math.floor(r() * 1000) });
  }
  return { ts, step: 1, disks: out };
}

/** Writes `seconds` of history ending at the current second into dir; returns the byte size. */
export function writeSyntheticHistory(dir: string, seconds: number, disks: number): { bytes: number; frames: number; ms: number } {
  const end = Math.floor(Date.now() / 1000);
  let clock = end - seconds;
  const store = HistoryStore.open({ dir, historySeconds: seconds, maxBytes: 4 * 1024 ** 3, now: () => clock });
  const r = rng(7);
  const t0 = Date.now();
  // Frames repeat every 64 s (generation, not storage, is the slow part here); storage sees
  // every second, and the coarse tiers merge them exactly as in production.
  const pool = Array.from({ length: 64 }, () => syntheticFrame(r, 0, disks));
  for (let ts = end - seconds; ts < end; ts++) {
    clock = ts + 1;
    const f = pool[ts % pool.length] as Frame;
    store.append({ ts, step: 1, disks: f.disks });
  }
  store.enforceBounds();
  const bytes = store.stats().bytes;
  store.close();
  return { bytes, frames: seconds, ms: Date.now() - t0 };
}

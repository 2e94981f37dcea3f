/**
 * The ranked table's per-disk counts over a long range, from chunks kept once final (issue 30:
 * "the fleet page opens a 1-hour range in ≤ 2 s"; "results cached, memory bounded").
 *
 * Why: the table ranks every host × disk (fleet-ranking.ts), so Prometheus reads every host's
 * samples of the range for it. At 1,000 hosts × 4 disks scraped every 15 s that took 1.1 s with
 * 10 minutes of history and 1.7 s with 20, growing with the history the range holds
 * (bench/fleet-scale's probes), while the rest of the table reads the 50 ranked hosts only.
 *
 * How: a range [from, to) is cut at multiples of a chunk (CHUNK_SCRAPES scrape intervals: 5 min
 * at 15 s). Each part's per-disk counts are its scrapes' differences, asked as the whole range's
 * are (fleet-ranking.ts askPerDisk: the rate over the part's scrape window times its length), so
 * the parts' counts add up to the range's. A chunk that ends by `finalBefore` (every scrape of it
 * stored) never changes: it is asked once and kept. The range's head and tail, and chunks not
 * final yet, are asked every time: a few minutes of history, whatever the range. Bounded by the
 * numbers kept (MAX_CHUNK_NUMBERS), the first kept out first; the fleet server keeps the last
 * 3 h warm (service.ts).
 */
import { bucketCount, type BucketSchema } from '@blkheat/shared-types';
import { hostDiskKey, hostDiskOf } from './fleet-disks.js';
import { NumberBoundedMap } from './number-bounded-map.js';
import { denseCounts } from './native-buckets.js';
import type { PromHistogramSample } from './prometheus-api.js';

/** A chunk holds this many scrape intervals. */
export const CHUNK_SCRAPES = 20;

/** Numbers (bucket indexes and counts) kept at most: ~24 MB; 3 h of 4,000 disks is ~4 M. */
export const MAX_CHUNK_NUMBERS = 6_000_000;

/**
 * A part's counts, every disk's in a few flat arrays (thousands of disks a chunk, dozens of
 * chunks kept: an object per disk would weigh more than its numbers): disk i is `keys[i]`
 * (hostDiskKey), its disk label `disks[i]`, its buckets with counts and the counts at
 * [offsets[i], offsets[i + 1]).
 */
export interface PartCounts {
  readonly keys: readonly string[];
  readonly disks: readonly string[];
  readonly offsets: Uint32Array;
  readonly buckets: Uint16Array;
  readonly counts: Float64Array;
}

/** One disk's counts over the whole range, dense. */
export interface RangeCounts {
  readonly instance: string;
  readonly dev: string;
  readonly disk: string;
  readonly counts: Float64Array;
}

/** The chunk length (s) at a scrape interval. */
export function chunkSeconds(scrapeInterval: number): number {
  return Math.max(1, Math.round(CHUNK_SCRAPES * scrapeInterval));
}

/** Per-disk rates of a part (an instant vector of native histograms) times its length: its counts. */
export function partCounts(samples: readonly PromHistogramSample[], lengthS: number, schema: BucketSchema): PartCounts {
  const keys: string[] = [];
  const disks: string[] = [];
  const offsets = new Uint32Array(samples.length + 1);
  const buckets: number[] = [];
  const counts: number[] = [];
  for (const [i, s] of samples.entries()) {
    const dense = denseCounts(s.histogram[1], schema);
    for (let k = 0; k < dense.length; k++) {
      const n = (dense[k] as number) * lengthS;
      if (n > 0) {
        buckets.push(k);
        counts.push(n);
      }
    }
    const dev = s.metric.dev ?? '';
    keys.push(hostDiskKey(s.metric.instance ?? '', dev));
    disks.push(s.metric.disk ?? dev);
    offsets[i + 1] = buckets.length;
  }
  return { keys, disks, offsets, buckets: Uint16Array.from(buckets), counts: Float64Array.from(counts) };
}

function numbersOf(part: PartCounts): number {
  return 2 * part.keys.length + part.offsets.length + part.buckets.length + part.counts.length;
}

export class RankingChunkCache {
  /** `${chunkS}:${start}` → the chunk's counts, oldest first. */
  private readonly chunks: NumberBoundedMap<PartCounts>;
  /** Chunks answered from here (kept) and asked of Prometheus (asked), since start. */
  readonly counts = { kept: 0, asked: 0 };

  constructor(maxNumbers = MAX_CHUNK_NUMBERS) {
    this.chunks = new NumberBoundedMap(maxNumbers, numbersOf);
  }

  get(chunkS: number, start: number): PartCounts | undefined {
    return this.chunks.get(`${chunkS}:${start}`);
  }

  /** Keeps a final chunk (a newer answer of the same chunk replaces it). */
  put(chunkS: number, start: number, part: PartCounts): void {
    this.chunks.set(`${chunkS}:${start}`, part);
  }

  /** Over three quarters of its bound: the warm loop adds no more (NumberBoundedMap.nearlyFull). */
  get nearlyFull(): boolean {
    return this.chunks.nearlyFull;
  }

  get size(): { chunks: number; numbers: number } {
    return { chunks: this.chunks.count, numbers: this.chunks.numbers };
  }
}

/** A range cut for the cache: the final chunks in it, and the parts asked every time. */
export interface RangeParts {
  readonly chunkS: number;
  /** Starts of the final chunks, oldest first. */
  readonly chunks: readonly number[];
  /** [from, to) of the head and the tail: asked every time. */
  readonly live: readonly (readonly [number, number])[];
}

/** [from, to) cut at multiples of `chunkS`; undefined when no chunk in it is final (ask it whole). */
export function rangeParts(from: number, to: number, chunkS: number, finalBefore: number): RangeParts | undefined {
  const first = Math.ceil(from / chunkS) * chunkS;
  const chunks: number[] = [];
  for (let s = first; s + chunkS <= Math.min(to, finalBefore); s += chunkS) chunks.push(s);
  const last = chunks[chunks.length - 1];
  if (last === undefined) return undefined;
  const end = last + chunkS;
  const live: [number, number][] = [];
  if (from < first) live.push([from, first]);
  if (end < to) live.push([end, to]);
  return { chunkS, chunks, live };
}

/**
 * Every disk's counts over the range of `parts`, summed: the kept chunks from `cache`, the
 * others asked by `ask` (in parallel: PrometheusApi bounds how many are open), final chunks
 * asked kept. `asked` says how many parts were asked of Prometheus.
 */
export async function rangeCounts(
  cache: RankingChunkCache,
  parts: RangeParts,
  ask: (from: number, to: number) => Promise<PartCounts>,
  schema: BucketSchema,
): Promise<{ readonly disks: Map<string, RangeCounts>; readonly asked: number }> {
  let asked = 0;
  const pending: Promise<PartCounts>[] = [];
  for (const start of parts.chunks) {
    const kept = cache.get(parts.chunkS, start);
    if (kept) {
      cache.counts.kept++;
      pending.push(Promise.resolve(kept));
      continue;
    }
    asked++;
    cache.counts.asked++;
    pending.push(
      ask(start, start + parts.chunkS).then((part) => {
        cache.put(parts.chunkS, start, part);
        return part;
      }),
    );
  }
  for (const [from, to] of parts.live) {
    asked++;
    pending.push(ask(from, to));
  }
  const disks = new Map<string, RangeCounts>();
  const size = bucketCount(schema);
  for (const part of await Promise.all(pending)) {
    for (const [i, key] of part.keys.entries()) {
      let sum = disks.get(key);
      if (!sum) {
        const { instance, dev } = hostDiskOf(key);
        sum = { instance, dev, disk: part.disks[i] ?? dev, counts: new Float64Array(size) };
        disks.set(key, sum);
      }
      for (let j = part.offsets[i] as number; j < (part.offsets[i + 1] as number); j++) {
        const k = part.buckets[j] as number;
        sum.counts[k] = (sum.counts[k] as number) + (part.counts[j] as number);
      }
    }
  }
  return { disks, asked };
}

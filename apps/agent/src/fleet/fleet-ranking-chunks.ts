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
 *
 * The head and the tail are cut finer (added 2026-12-02): into fifths of a chunk (SUB_CHUNKS),
 * kept as chunks are once final, so that only what lies before the head's first fifth and after
 * the tail's last final fifth is asked every time: under a fifth (a minute at 15 s) at the head,
 * and the not-final end (finalAfter) and under a fifth at the tail, where whole chunks left up to
 * a chunk at either end (a 1 h page at 1,000 hosts: its head of 210 s took Prometheus 751–876 ms,
 * its tail of 90 s 449–543 ms). The fleet server keeps the fifths of a 1 h range's head and tail
 * warm (warmRankingFifths), so that a page opening on the last hour finds them kept.
 */
import { bucketCount, type BucketSchema } from '@blkheat/shared-types';
import { hostDiskKey, hostDiskOf } from './fleet-disks.js';
import { NumberBoundedMap } from './number-bounded-map.js';
import { denseCounts } from './native-buckets.js';
import type { PromHistogramSample } from './prometheus-api.js';

/** A chunk holds this many scrape intervals. */
export const CHUNK_SCRAPES = 20;

/** A range's head and tail are cut into this many parts a chunk (fifths: 4 scrape intervals each). */
export const SUB_CHUNKS = 5;

/** Numbers (bucket indexes and counts) kept at most: ~24 MB; 3 h of 4,000 disks is ~4 M. */
export const MAX_CHUNK_NUMBERS = 6_000_000;

/**
 * Numbers the fifths' own cache keeps at most (~8 MB): the fifths of a 1 h range's head and tail
 * are ~14 parts, ~1.5 M numbers at 4,000 disks. Their own bound, so that fifths a page's ranges
 * left behind (a tail's, an hour later no range's) never crowd the chunks out, and are the first
 * out.
 */
export const MAX_FIFTH_NUMBERS = 2_000_000;

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

/** The length (s) of a chunk's fifths, or undefined when a chunk does not split into whole seconds. */
export function fifthSeconds(chunkS: number): number | undefined {
  return chunkS % SUB_CHUNKS === 0 ? chunkS / SUB_CHUNKS : undefined;
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
  /** `${length}:${start}` → a part's counts (a chunk's, or a fifth's in the fifths' cache), oldest first. */
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

  /**
   * Whether the parts of `length` at `starts` that are kept fill over three quarters of the
   * bound: a warm loop that wants them all adds no more then (what it added would push out what
   * it wants, to be asked again and again).
   */
  wantedOverThreeQuarters(length: number, starts: Iterable<number>): boolean {
    let n = 0;
    for (const start of starts) {
      const part = this.get(length, start);
      if (part) n += numbersOf(part);
    }
    return this.chunks.overThreeQuarters(n);
  }

  get size(): { chunks: number; numbers: number } {
    return { chunks: this.chunks.count, numbers: this.chunks.numbers };
  }
}

/** A range cut for the cache: the final chunks and fifths in it, and the parts asked every time. */
export interface RangeParts {
  readonly chunkS: number;
  /** Starts of the final chunks, oldest first. */
  readonly chunks: readonly number[];
  /** The length of a fifth (fifthSeconds; undefined: none are cut). */
  readonly fifthS: number | undefined;
  /** Starts of the final fifths of the head and the tail, oldest first. */
  readonly fifths: readonly number[];
  /** [from, to) of the rest of the head and the tail (cut where a chunk starts): asked every time. */
  readonly live: readonly (readonly [number, number])[];
}

/** One part of a range and every disk's counts in it. */
export interface CountedPart {
  readonly from: number;
  readonly to: number;
  readonly counts: PartCounts;
}

/**
 * [from, to) cut at multiples of `chunkS`, each part inside one chunk's span, the head and the
 * tail at multiples of its fifths where they are final; undefined when no chunk in it is final
 * (ask it whole).
 */
export function rangeParts(from: number, to: number, chunkS: number, finalBefore: number): RangeParts | undefined {
  const first = Math.ceil(from / chunkS) * chunkS;
  const chunks: number[] = [];
  for (let s = first; s + chunkS <= Math.min(to, finalBefore); s += chunkS) chunks.push(s);
  const last = chunks[chunks.length - 1];
  if (last === undefined) return undefined;
  const end = last + chunkS;
  const fifthS = fifthSeconds(chunkS);
  const fifths: number[] = [];
  const live: [number, number][] = [];
  /** [a, z) inside one chunk's span: its final fifths kept, the rest asked. */
  const cut = (a: number, z: number): void => {
    if (fifthS === undefined) {
      live.push([a, z]);
      return;
    }
    const f0 = Math.min(z, Math.ceil(a / fifthS) * fifthS);
    if (a < f0) live.push([a, f0]);
    let f = f0;
    for (; f + fifthS <= Math.min(z, finalBefore); f += fifthS) fifths.push(f);
    if (f < z) live.push([f, z]);
  };
  if (from < first) cut(from, first);
  // The tail cut where a chunk starts: every part lies in one chunk's span (a sparkline's cell).
  for (let a = end; a < to; a += chunkS) cut(a, Math.min(a + chunkS, to));
  return { chunkS, chunks, fifthS, fifths, live };
}

/**
 * Every disk's counts over the range of `parts`, summed, and each part's (oldest first): the kept
 * chunks and fifths from `cache`, the others asked by `ask` (in parallel: PrometheusApi bounds how
 * many are open), final ones asked kept (the fifths in `fifths`). `asked` says how many parts
 * were asked of Prometheus.
 */
export async function rangeCounts(
  cache: RankingChunkCache,
  parts: RangeParts,
  ask: (from: number, to: number) => Promise<PartCounts>,
  schema: BucketSchema,
  fifths: RankingChunkCache = cache,
): Promise<{ readonly disks: Map<string, RangeCounts>; readonly parts: readonly CountedPart[]; readonly asked: number }> {
  let asked = 0;
  const pending: Promise<CountedPart>[] = [];
  const keptOrAsked = (length: number, starts: readonly number[], store: RankingChunkCache): void => {
    for (const start of starts) {
      const end = start + length;
      const kept = store.get(length, start);
      if (kept) {
        store.counts.kept++;
        pending.push(Promise.resolve({ from: start, to: end, counts: kept }));
        continue;
      }
      asked++;
      store.counts.asked++;
      pending.push(
        ask(start, end).then((counts) => {
          store.put(length, start, counts);
          return { from: start, to: end, counts };
        }),
      );
    }
  };
  keptOrAsked(parts.chunkS, parts.chunks, cache);
  if (parts.fifthS !== undefined) keptOrAsked(parts.fifthS, parts.fifths, fifths);
  for (const [from, to] of parts.live) {
    asked++;
    pending.push(ask(from, to).then((counts) => ({ from, to, counts })));
  }
  const counted = (await Promise.all(pending)).sort((a, b) => a.from - b.from);
  const disks = new Map<string, RangeCounts>();
  const size = bucketCount(schema);
  for (const { counts: part } of counted) {
    for (const [i, key] of part.keys.entries()) {
      let sum = disks.get(key);
      if (!sum) {
        const { instance, dev } = hostDiskOf(key);
        sum = { instance, dev, disk: part.disks[i] ?? dev, counts: new Float64Array(size) };
        disks.set(key, sum);
      }
      addCounts(part, i, sum.counts);
    }
  }
  return { disks, parts: counted, asked };
}

/** Adds disk i's counts in `part` into the dense `into`. */
function addCounts(part: PartCounts, i: number, into: Float64Array): void {
  for (let j = part.offsets[i] as number; j < (part.offsets[i + 1] as number); j++) {
    const k = part.buckets[j] as number;
    into[k] = (into[k] as number) + (part.counts[j] as number);
  }
}

/**
 * The ranked disks' p99 sparklines from the range's parts (no query of Prometheus): a point per
 * chunk span (`chunkS`) the range touches, or per `k` of them when there are more than
 * `maxPoints` (k the fewest that fit), each the p99 of the disk's counts in the parts inside it:
 * the first and last spans clipped to the range, as the table is. `from` is where the first
 * point's span starts (a multiple of the step), so the first point ends at `from + step`.
 */
export function sparkFromParts(
  parts: readonly CountedPart[],
  chunkS: number,
  keys: readonly string[],
  schema: BucketSchema,
  maxPoints: number,
  quantile: (counts: Float64Array) => number,
): { readonly from: number; readonly step: number; readonly points: number; readonly lines: Map<string, (number | null)[]> } | undefined {
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!first || !last) return undefined;
  const firstSpan = Math.floor(first.from / chunkS);
  const spans = Math.floor((last.to - 1) / chunkS) - firstSpan + 1;
  const per = Math.ceil(spans / maxPoints);
  const step = per * chunkS;
  const from = firstSpan * chunkS;
  const points = Math.ceil(spans / per);
  const size = bucketCount(schema);
  const wanted = new Map(keys.map((k, i) => [k, i]));
  // Per ranked disk, per point: its counts (none: the quantile is NaN, the point null).
  const sums = keys.map(() => Array.from({ length: points }, () => new Float64Array(size)));
  for (const part of parts) {
    const point = Math.floor((part.from - from) / step);
    for (const [i, key] of part.counts.keys.entries()) {
      const d = wanted.get(key);
      if (d !== undefined) addCounts(part.counts, i, sums[d]?.[point] as Float64Array);
    }
  }
  const lines = new Map<string, (number | null)[]>();
  for (const [d, key] of keys.entries()) {
    lines.set(
      key,
      (sums[d] as Float64Array[]).map((counts) => {
        const q = quantile(counts);
        return Number.isFinite(q) ? q : null;
      }),
    );
  }
  return { from, step, points, lines };
}

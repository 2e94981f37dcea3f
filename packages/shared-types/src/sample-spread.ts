/**
 * The one rule for `pick: 'spread'` of a samples request (added in protocol 4): which of the
 * samples matching a query over [from, to) an answer of at most `limit` carries when more match.
 * The agent's sample store, the dashboard's matching of a snapshot's samples and the fake agent
 * all pick through SpreadPicker, so a live answer and an imported one choose alike.
 *
 * - Every match, when no more than `limit` match.
 * - Else a tenth of the limit goes to the slowest matches (latency of the query's phase; the
 *   earlier of equals): an incident view hunts the outliers, and a colour scale fitted to the
 *   points shown then tops out at the range's slowest sampled I/O.
 * - The rest is spread over time: [from, to) is cut into slices of a round length (1-2-5 × 10^n
 *   µs, aligned to multiples of it, so a live window that slides keeps its slice edges), about
 *   eight samples a slice, and every slice gets an equal share, a slice with fewer matches than
 *   its share giving the rest to the others (water-filling). A quiet stretch, a stall say, keeps
 *   its few I/Os next to a busy one.
 * - Inside a slice the kept ones are those with the smallest spreadHash: a fixed pseudo-random
 *   choice, so asking again a second later keeps (nearly) the same points instead of new ones.
 *
 * Two passes over the matches in the same order: count() each, plan(), then offer() each;
 * result() gives the kept positions (the `at` passed in) in ascending order. Memory is bounded by
 * the limit and the slice count, never by the number of matches.
 */

/** What a samples answer carries when more match than its limit (protocol: SamplesRequest.pick). */
export type SamplePick = 'first' | 'spread';

/** Of a spread answer's limit, the share kept for the slowest matches. */
export const SPREAD_SLOWEST_SHARE = 0.1;
/** Samples per time slice aimed at. */
const PER_SLICE = 8;
/** Most slices aimed at (round lengths may make up to 2.5 × this). */
const MAX_SLICES = 1000;

/** One step of murmur3's body: mixes the low 32 bits of `v` into `h`. */
function mix(h: number, v: number): number {
  h ^= Math.imul(v >>> 0, 0xcc9e2d51);
  h = Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64;
  return h | 0;
}

/** A fixed pseudo-random 32-bit number of a sample (murmur3's mixing over its time, sector and latency). */
export function spreadHash(tsUs: number, sector: number | null, dNs: number): number {
  let h = 0x9747b28c;
  h = mix(h, tsUs);
  h = mix(h, Math.floor(tsUs / 2 ** 32));
  h = mix(h, sector === null ? 0xffffffff : sector);
  h = mix(h, Math.floor((sector ?? 0) / 2 ** 32));
  h = mix(h, dNs);
  h = mix(h, Math.floor(dNs / 2 ** 32));
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The smallest 1-2-5 × 10^n (≥ 1) not below `v`. */
function roundUp125(v: number): number {
  let p = 1;
  for (;;) {
    for (const m of [1, 2, 5]) if (m * p >= v) return m * p;
    p *= 10;
  }
}

export class SpreadPicker {
  /** Matches counted by pass 1. */
  matched = 0;
  private readonly sliceUs: number;
  private readonly firstSlice: number;
  private readonly counts: Uint32Array;
  /** The slowest matches: a min-heap on (latency, later first) of at most `slowCap`. */
  private readonly slowCap: number;
  private readonly slowV: number[] = [];
  private readonly slowAt: number[] = [];
  private readonly slowSlice: number[] = [];
  private planned: { all: true } | { all: false; slow: Set<number>; quota: Uint32Array; offset: Uint32Array } | undefined;
  /** Pass 2's pick per slice: max-heaps on (hash, at) of at most the slice's quota, in one array. */
  private heapHash = new Float64Array(0);
  private heapAt = new Float64Array(0);
  private heapSize = new Uint32Array(0);
  private readonly kept: number[] = [];

  constructor(
    fromUs: number,
    toUs: number,
    private readonly limit: number,
  ) {
    if (!(limit >= 1) || !(toUs > fromUs)) throw new RangeError(`spread over [${fromUs}, ${toUs}) with limit ${limit}`);
    this.slowCap = Math.floor(limit * SPREAD_SLOWEST_SHARE);
    const want = Math.max(1, Math.min(MAX_SLICES, Math.ceil((limit - this.slowCap) / PER_SLICE)));
    this.sliceUs = roundUp125((toUs - fromUs) / want);
    this.firstSlice = Math.floor(fromUs / this.sliceUs);
    this.counts = new Uint32Array(Math.floor((toUs - 1) / this.sliceUs) - this.firstSlice + 1);
  }

  private sliceOf(tsUs: number): number {
    return Math.max(0, Math.min(this.counts.length - 1, Math.floor(tsUs / this.sliceUs) - this.firstSlice));
  }

  /** Pass 1: a match completed at `tsUs` with latency `latencyNs`, at position `at` (increasing). */
  count(tsUs: number, latencyNs: number, at: number): void {
    this.matched++;
    const slice = this.sliceOf(tsUs);
    this.counts[slice] = (this.counts[slice] as number) + 1;
    if (this.slowCap === 0) return;
    const v = this.slowV;
    if (v.length < this.slowCap) {
      v.push(latencyNs);
      this.slowAt.push(at);
      this.slowSlice.push(slice);
      siftUp(v.length - 1, this.slowLess, this.slowSwap);
    } else if (latencyNs > (v[0] as number)) {
      v[0] = latencyNs;
      this.slowAt[0] = at;
      this.slowSlice[0] = slice;
      siftDown(0, v.length, this.slowLess, this.slowSwap);
    }
  }

  /** Between the passes: the slowest set and each slice's share. */
  plan(): void {
    if (this.matched <= this.limit) {
      this.planned = { all: true };
      return;
    }
    const slow = new Set(this.slowAt);
    const rest = Uint32Array.from(this.counts);
    for (const s of this.slowSlice) rest[s] = (rest[s] as number) - 1;
    const budget = this.limit - slow.size;
    // The largest level L with Σ min(rest, L) ≤ budget, then one more for evenly chosen slices still above it.
    let lo = 0;
    let hi = budget;
    const filled = (level: number): number => rest.reduce((sum, c) => sum + Math.min(c, level), 0);
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (filled(mid) <= budget) lo = mid;
      else hi = mid - 1;
    }
    const quota = rest.map((c) => Math.min(c, lo));
    const above = [...rest.keys()].filter((k) => (rest[k] as number) > lo);
    const extra = budget - filled(lo);
    above.forEach((k, j) => {
      if (Math.floor(((j + 1) * extra) / above.length) > Math.floor((j * extra) / above.length)) quota[k] = (quota[k] as number) + 1;
    });
    const offset = new Uint32Array(quota.length);
    let total = 0;
    quota.forEach((q, k) => {
      offset[k] = total;
      total += q;
    });
    this.heapHash = new Float64Array(total);
    this.heapAt = new Float64Array(total);
    this.heapSize = new Uint32Array(quota.length);
    this.planned = { all: false, slow, quota, offset };
  }

  /** Pass 2: the same matches in the same order, with their spreadHash. */
  offer(tsUs: number, hash: number, at: number): void {
    const p = this.planned;
    if (!p) throw new Error('SpreadPicker.offer before plan');
    if (p.all) return void this.kept.push(at);
    if (p.slow.has(at)) return;
    const k = this.sliceOf(tsUs);
    const q = p.quota[k] as number;
    if (q === 0) return;
    const base = p.offset[k] as number;
    const n = this.heapSize[k] as number;
    if (n < q) {
      this.heapHash[base + n] = hash;
      this.heapAt[base + n] = at;
      this.heapSize[k] = n + 1;
      this.heapUp(base, n);
    } else if (hash < (this.heapHash[base] as number) || (hash === this.heapHash[base] && at < (this.heapAt[base] as number))) {
      this.heapHash[base] = hash;
      this.heapAt[base] = at;
      this.heapDown(base, q);
    }
  }

  /** A slice's heap (at `base`, the largest on top) after its entry i was added. Written out: it runs once per match. */
  private heapUp(base: number, i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.heapAbove(base + i, base + parent)) return;
      this.heapSwap(base + i, base + parent);
      i = parent;
    }
  }

  /** A slice's heap of n entries after its top was replaced. */
  private heapDown(base: number, n: number): void {
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.heapAbove(base + l, base + m)) m = l;
      if (r < n && this.heapAbove(base + r, base + m)) m = r;
      if (m === i) return;
      this.heapSwap(base + i, base + m);
      i = m;
    }
  }

  /** The positions kept, ascending; truncated when more matched than the limit. */
  result(): { at: number[]; matched: number; truncated: boolean } {
    const p = this.planned;
    if (!p) throw new Error('SpreadPicker.result before plan');
    if (p.all) return { at: [...this.kept], matched: this.matched, truncated: false };
    const at = [...p.slow];
    this.heapSize.forEach((n, k) => {
      const base = p.offset[k] as number;
      for (let i = 0; i < n; i++) at.push(this.heapAt[base + i] as number);
    });
    return { at: at.sort((a, b) => a - b), matched: this.matched, truncated: true };
  }

  private readonly slowLess = (a: number, b: number): boolean => {
    const va = this.slowV[a] as number;
    const vb = this.slowV[b] as number;
    // Of equal latencies the later one is the "smaller": it goes first, the earlier stays.
    return va < vb || (va === vb && (this.slowAt[a] as number) > (this.slowAt[b] as number));
  };

  private readonly slowSwap = (a: number, b: number): void => {
    for (const arr of [this.slowV, this.slowAt, this.slowSlice]) [arr[a], arr[b]] = [arr[b] as number, arr[a] as number];
  };

  /** A slice's heap keeps the smallest (hash, at): the largest sits on top, next to go. */
  private heapAbove(a: number, b: number): boolean {
    const ha = this.heapHash[a] as number;
    const hb = this.heapHash[b] as number;
    return ha > hb || (ha === hb && (this.heapAt[a] as number) > (this.heapAt[b] as number));
  }

  private heapSwap(a: number, b: number): void {
    const h = this.heapHash[a] as number;
    this.heapHash[a] = this.heapHash[b] as number;
    this.heapHash[b] = h;
    const at = this.heapAt[a] as number;
    this.heapAt[a] = this.heapAt[b] as number;
    this.heapAt[b] = at;
  }
}

function siftUp(i: number, less: (a: number, b: number) => boolean, swap: (a: number, b: number) => void): void {
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!less(i, parent)) return;
    swap(i, parent);
    i = parent;
  }
}

function siftDown(i: number, n: number, less: (a: number, b: number) => boolean, swap: (a: number, b: number) => void): void {
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < n && less(l, m)) m = l;
    if (r < n && less(r, m)) m = r;
    if (m === i) return;
    swap(i, m);
    i = m;
  }
}

/** How pickSpread reads an item: its completion time (µs), its latency of the query's phase (ns) and its spreadHash. */
export interface SpreadKeys<T> {
  tsUs(item: T): number;
  latencyNs(item: T): number;
  hash(item: T): number;
}

/** What a spread pick of a list gives: the items kept, in their order. */
export interface SpreadResult<T> {
  readonly items: T[];
  readonly matched: number;
  readonly truncated: boolean;
}

/**
 * The spread pick of a list already matched (a snapshot's samples, an answer narrowed further
 * here): at most `limit` of `items`, in their order.
 */
export function pickSpread<T>(items: readonly T[], fromUs: number, toUs: number, limit: number, keys: SpreadKeys<T>): SpreadResult<T> {
  return runSteps(pickSpreadInSteps(items, fromUs, toUs, limit, keys, Infinity));
}

/**
 * pickSpread as steps: it yields after every `step` items of each of its two passes, so that a
 * page can run a big pick (a snapshot's 190,800 samples) a task at a time (runSteps runs it in
 * one go). The same picker in the same order: the pick does not depend on `step`.
 */
export function* pickSpreadInSteps<T>(
  items: readonly T[],
  fromUs: number,
  toUs: number,
  limit: number,
  keys: SpreadKeys<T>,
  step: number,
): Generator<void, SpreadResult<T>> {
  if (items.length <= limit) return { items: [...items], matched: items.length, truncated: false };
  const picker = new SpreadPicker(fromUs, toUs, limit);
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as T;
    picker.count(keys.tsUs(item), keys.latencyNs(item), i);
    if ((i + 1) % step === 0) yield;
  }
  picker.plan();
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as T;
    picker.offer(keys.tsUs(item), keys.hash(item), i);
    if ((i + 1) % step === 0) yield;
  }
  const r = picker.result();
  return { items: r.at.map((i) => items[i] as T), matched: r.matched, truncated: r.truncated };
}

/** Runs steps (a generator that yields between them) to their end, in this task; their result. */
export function runSteps<R>(steps: Generator<void, R>): R {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

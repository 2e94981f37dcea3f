/**
 * The latency axis. Buckets are exponential, so the dense bucket index is already a log
 * latency scale: we use it directly as the continuous "bucket" coordinate u, where dense
 * bucket d spans [d, d + 1). A latency in seconds maps into u exactly at bucket edges and
 * logarithmically inside regular buckets; the underflow bucket [0, first edge] is linear.
 */
import {
  type BucketSchema,
  formatLatency,
  lowerBoundSeconds,
  overflowIndex,
  regularBucketCount,
  upperBoundSeconds,
  upperBoundsNs,
} from '@blkheat/shared-types';

/** u of a latency in seconds. */
export function secondsToU(seconds: number, schema: BucketSchema): number {
  const first = upperBoundSeconds(0, schema); // edge between underflow and bucket 1
  if (!(seconds > first)) return Math.max(0, seconds) / first;
  const u = Math.log2(seconds) * 2 ** schema.scale - schema.minIndex + 2;
  // Overflow has no upper edge: squash everything above the last regular edge into it.
  const top = regularBucketCount(schema) + 1;
  return u >= top ? Math.min(top + 0.999, top + (u - top) / 8) : u;
}

/** Latency in seconds at u (inverse of secondsToU; overflow maps back to its squashed scale). */
export function uToSeconds(u: number, schema: BucketSchema): number {
  const first = upperBoundSeconds(0, schema);
  if (u <= 1) return Math.max(0, u) * first;
  const top = regularBucketCount(schema) + 1;
  const v = u >= top ? top + (u - top) * 8 : u;
  return 2 ** ((v + schema.minIndex - 2) / 2 ** schema.scale);
}

/**
 * Inclusive nanosecond bounds of the I/Os that fall into dense buckets [lo, hi], as the agent's
 * samples query wants them. Uses the exact integer edges the kernel bins with, so a sample the
 * kernel counted in bucket d is returned for a query on d and never for its neighbours.
 */
export function bucketRangeNs(lo: number, hi: number, schema: BucketSchema): { minNs: number; maxNs: number } {
  const edges = edgesNs(schema);
  const a = Math.max(0, Math.min(lo, hi));
  const b = Math.min(overflowIndex(schema), Math.max(lo, hi));
  const minNs = a === 0 ? 0 : Number((edges[a - 1] as bigint) + 1n);
  const maxNs = b >= overflowIndex(schema) ? Number.MAX_SAFE_INTEGER : Number(edges[b] as bigint);
  return { minNs, maxNs };
}

const edgeCache = new Map<string, bigint[]>();
function edgesNs(schema: BucketSchema): bigint[] {
  const key = `${schema.scale}/${schema.minIndex}/${schema.maxIndex}`;
  let edges = edgeCache.get(key);
  if (!edges) edgeCache.set(key, (edges = upperBoundsNs(schema)));
  return edges;
}

/** Latency bounds of a dense bucket in seconds, for labels. */
export function bucketBoundsSeconds(d: number, schema: BucketSchema): [number, number] {
  return [lowerBoundSeconds(d, schema), upperBoundSeconds(d, schema)];
}

/**
 * Human latency ("850 ns", "12.3 µs", "4.76 ms", "1.20 s"): shared-types owns it, the CLI prints
 * the same. Views ask it for their variants: `{ compact: true }` for axis ticks ("1µs", "10ms"),
 * `{ signed: true }` for differences ("+6.02 ms", "−850 ns", "±0").
 */
export { formatLatency } from '@blkheat/shared-types';

export interface LatencyTick {
  readonly u: number;
  readonly seconds: number;
  readonly label: string;
  /** Decade ticks (1, 10, 100 ×) get a label; the 2× and 5× ones are minor. */
  readonly major: boolean;
}

/**
 * Ticks at 1-2-5 × powers of ten inside [uLo, uHi]. When fewer than `minMajor` decades fit,
 * the 2× and 5× ticks are promoted to labelled ones so a narrow axis still reads.
 */
export function latencyTicks(uLo: number, uHi: number, schema: BucketSchema, minMajor = 3): LatencyTick[] {
  const sLo = uToSeconds(Math.max(uLo, 1), schema);
  const sHi = uToSeconds(Math.min(uHi, regularBucketCount(schema) + 1), schema);
  const out: LatencyTick[] = [];
  for (let e = Math.floor(Math.log10(sLo)) - 1; e <= Math.ceil(Math.log10(sHi)); e++) {
    for (const m of [1, 2, 5]) {
      const seconds = m * 10 ** e;
      const u = secondsToU(seconds, schema);
      // Underflow is linear and overflow squashed: only label the log part of the axis.
      if (u < Math.max(uLo, 1) || u > Math.min(uHi, regularBucketCount(schema) + 1)) continue;
      out.push({ u, seconds, label: formatLatency(seconds, { compact: true }), major: m === 1 });
    }
  }
  if (out.filter((t) => t.major).length < minMajor) return out.map((t) => ({ ...t, major: true }));
  return out;
}

/**
 * Buckets [lo, hi) holding every count of `hists` (dense histograms), widened to hold [lo, hi)
 * of `within` when given (a view's latency window); undefined when all are empty and no window.
 */
export function bucketWindowOf(hists: readonly ArrayLike<number>[], within?: readonly [number, number]): [number, number] | undefined {
  let lo = within ? within[0] : Infinity;
  let hi = within ? within[1] : -Infinity;
  for (const h of hists)
    for (let b = 0; b < h.length; b++)
      if ((h[b] as number) > 0) {
        lo = Math.min(lo, b);
        hi = Math.max(hi, b + 1);
      }
  return lo < hi ? [lo, hi] : undefined;
}

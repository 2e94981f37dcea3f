/**
 * Latency bucket scheme shared by the kernel programs, the agent and the dashboard.
 *
 * Buckets are base-2 exponential with 2^scale buckets per power of two, exactly the
 * Prometheus native-histogram / OpenTelemetry exponential "schema" `scale`, in seconds:
 * Prometheus bucket index i covers (2^((i-1)/2^scale), 2^(i/2^scale)] s (upper-inclusive).
 * Because boundaries are in seconds (not ns), counts export to Prometheus/OTel without
 * re-binning. We keep a dense index space:
 *
 *   dense 0            underflow  [0, 2^((minIndex-1)/2^scale)] s  (= Prometheus zero bucket)
 *   dense 1..regular   Prometheus index minIndex + dense - 1
 *   dense regular+1    overflow   (2^(maxIndex/2^scale), +inf) s
 *
 * The kernel side receives `upperBoundsNs()` as a read-only array, with a table over it that the
 * agent builds (apps/agent/src/collector/abi/bucket-table.ts), and finds the same upper-inclusive
 * bucket as bucketOfNs with integers only.
 */

export interface BucketSchema {
  /** Prometheus native-histogram schema / OTel exponential scale: 2^scale buckets per octave. */
  readonly scale: number;
  /** Prometheus bucket index of the first regular bucket. */
  readonly minIndex: number;
  /** Prometheus bucket index of the last regular bucket. */
  readonly maxIndex: number;
}

/**
 * The schema in use (protocol version 1): scale 2 (4 buckets per power of two, ~19% wide,
 * 4x finer than log2 histograms), from 2^-20 s (0.95 µs) to 2^6 s (64 s).
 */
export const BUCKET_SCHEMA: BucketSchema = Object.freeze({ scale: 2, minIndex: -79, maxIndex: 24 });

/**
 * The fine schema (agent option --schema 3; carried in protocol 3 and snapshot 3 data): scale 3,
 * 8 buckets per power of two (~9% wide, Rezolus' resolution), over the same 2^-20 s .. 2^6 s.
 */
export const FINE_BUCKET_SCHEMA: BucketSchema = Object.freeze({ scale: 3, minIndex: -159, maxIndex: 48 });

/** Number of regular (bounded, non-underflow, non-overflow) buckets. */
export function regularBucketCount(schema: BucketSchema = BUCKET_SCHEMA): number {
  return schema.maxIndex - schema.minIndex + 1;
}

/** Total dense buckets: underflow + regular + overflow. */
export function bucketCount(schema: BucketSchema = BUCKET_SCHEMA): number {
  return regularBucketCount(schema) + 2;
}

/** Dense index of the underflow bucket. */
export const UNDERFLOW = 0;

/** Dense index of the overflow bucket. */
export function overflowIndex(schema: BucketSchema = BUCKET_SCHEMA): number {
  return regularBucketCount(schema) + 1;
}

/** Prometheus bucket index of a dense regular bucket; undefined for underflow/overflow. */
export function prometheusIndex(dense: number, schema: BucketSchema = BUCKET_SCHEMA): number | undefined {
  if (dense <= UNDERFLOW || dense >= overflowIndex(schema)) return undefined;
  return schema.minIndex + dense - 1;
}

/** Lower bound in seconds of a dense bucket (exclusive, except underflow whose lower is 0). */
export function lowerBoundSeconds(dense: number, schema: BucketSchema = BUCKET_SCHEMA): number {
  checkDense(dense, schema);
  if (dense === UNDERFLOW) return 0;
  return 2 ** ((schema.minIndex + dense - 2) / 2 ** schema.scale);
}

/** Upper bound in seconds of a dense bucket (inclusive); Infinity for overflow. */
export function upperBoundSeconds(dense: number, schema: BucketSchema = BUCKET_SCHEMA): number {
  checkDense(dense, schema);
  if (dense === overflowIndex(schema)) return Infinity;
  return 2 ** ((schema.minIndex + dense - 1) / 2 ** schema.scale);
}

/** Lower/upper bounds in microseconds, as the CLI and the dashboard show them. */
export function boundsMicros(dense: number, schema: BucketSchema = BUCKET_SCHEMA): [number, number] {
  return [lowerBoundSeconds(dense, schema) * 1e6, upperBoundSeconds(dense, schema) * 1e6];
}

/**
 * Exact integer upper bounds in nanoseconds for dense buckets 0..regular (overflow has none):
 * entry k is floor(1e9 * 2^((minIndex - 1 + k) / 2^scale)). A latency of v ns belongs to the
 * smallest k with v <= bound[k] (v integer, so comparing with the floor is exact), else to
 * overflow. Computed with BigInt so no floating-point rounding can move a boundary.
 */
export function upperBoundsNs(schema: BucketSchema = BUCKET_SCHEMA): bigint[] {
  const out: bigint[] = [];
  for (let k = 0; k <= regularBucketCount(schema); k++) {
    out.push(floorNsTimesPow2(schema.minIndex - 1 + k, schema.scale));
  }
  return out;
}

/** Dense bucket of a latency in nanoseconds; same answer as the kernel's lookup (held to it by collector-buckets.test.ts). */
export function bucketOfNs(ns: number | bigint, schema: BucketSchema = BUCKET_SCHEMA): number {
  const v = typeof ns === 'bigint' ? ns : BigInt(Math.max(0, Math.floor(ns)));
  const bounds = boundsCache(schema);
  let lo = 0;
  let hi = bounds.length; // answer in [0, bounds.length]; bounds.length = overflow
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (v <= (bounds[mid] as bigint)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Dense bucket of a latency in seconds (floating point; for UI lookups, not for counting). */
export function bucketOfSeconds(seconds: number, schema: BucketSchema = BUCKET_SCHEMA): number {
  return bucketOfNs(BigInt(Math.max(0, Math.round(seconds * 1e9))), schema);
}

/** True when two schemas describe the same buckets. */
export function sameSchema(a: BucketSchema, b: BucketSchema): boolean {
  return a.scale === b.scale && a.minIndex === b.minIndex && a.maxIndex === b.maxIndex;
}

/** The named schemas: BUCKET_SCHEMA (scale 2, the default) and FINE_BUCKET_SCHEMA (scale 3). */
export const SUPPORTED_SCHEMAS: readonly BucketSchema[] = Object.freeze([BUCKET_SCHEMA, FINE_BUCKET_SCHEMA]);

/** The named schema of a scale (2 or 3, as in the agent's --schema option); undefined for any other. */
export function schemaOfScale(scale: number): BucketSchema | undefined {
  return SUPPORTED_SCHEMAS.find((s) => s.scale === scale);
}

/** Scales data may name: the dashboard draws these (and the kernel can bin at them). */
export const SUPPORTED_SCALES: readonly number[] = Object.freeze(SUPPORTED_SCHEMAS.map((s) => s.scale));

/** Most dense buckets a schema named in data may have (receivers allocate buckets × columns). */
export const MAX_BUCKET_COUNT = 512;

/** Regular buckets named in data must lie within [2^SCHEMA_MIN_EXP s, 2^SCHEMA_MAX_EXP s] (≈ 1 ns .. 68 min). */
const SCHEMA_MIN_EXP = -30;
const SCHEMA_MAX_EXP = 12;

/**
 * Why a schema named in data (a hello, a snapshot) cannot be used, or undefined when it can:
 * `scale` one of SUPPORTED_SCALES, integer indexes with minIndex ≤ maxIndex, regular buckets
 * within ≈ 1 ns .. 68 min, at most MAX_BUCKET_COUNT dense buckets. The named schemas pass; so
 * does any narrower or wider range of them within those limits.
 */
export function schemaProblem(schema: BucketSchema): string | undefined {
  const { scale, minIndex, maxIndex } = schema;
  if (!SUPPORTED_SCALES.includes(scale)) return `scale ${String(scale)} is not supported (expected ${SUPPORTED_SCALES.join(' or ')})`;
  if (!Number.isSafeInteger(minIndex) || !Number.isSafeInteger(maxIndex)) return 'minIndex and maxIndex must be integers';
  if (minIndex > maxIndex) return `minIndex ${minIndex} is above maxIndex ${maxIndex}`;
  const perOctave = 2 ** scale;
  // Lower edge of the first regular bucket 2^((minIndex-1)/2^scale), upper edge of the last 2^(maxIndex/2^scale).
  if (minIndex - 1 < SCHEMA_MIN_EXP * perOctave || maxIndex > SCHEMA_MAX_EXP * perOctave) {
    return `buckets ${minIndex}..${maxIndex} at scale ${scale} reach outside 2^${SCHEMA_MIN_EXP} s .. 2^${SCHEMA_MAX_EXP} s`;
  }
  if (bucketCount(schema) > MAX_BUCKET_COUNT) return `${bucketCount(schema)} buckets is more than ${MAX_BUCKET_COUNT}`;
  return undefined;
}

function checkDense(dense: number, schema: BucketSchema): void {
  if (!Number.isInteger(dense) || dense < 0 || dense > overflowIndex(schema)) {
    throw new RangeError(`bucket index ${dense} outside 0..${overflowIndex(schema)}`);
  }
}

const cache = new Map<string, bigint[]>();
function boundsCache(schema: BucketSchema): bigint[] {
  const key = `${schema.scale}/${schema.minIndex}/${schema.maxIndex}`;
  let bounds = cache.get(key);
  if (!bounds) {
    bounds = upperBoundsNs(schema);
    cache.set(key, bounds);
  }
  return bounds;
}

/** floor(1e9 * 2^(e / 2^scale)) exactly: the largest n with n^(2^scale) <= 1e(9*2^scale) * 2^e. */
function floorNsTimesPow2(e: number, scale: number): bigint {
  const root = 1n << BigInt(scale); // 2^scale-th root
  let num = 10n ** (9n * root);
  let den = 1n;
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  // Largest n with n^root * den <= num, by binary search on n.
  let lo = 0n;
  let hi = 1n;
  while (hi ** root * den <= num) hi <<= 1n;
  while (lo < hi) {
    const mid = (lo + hi + 1n) >> 1n;
    if (mid ** root * den <= num) lo = mid;
    else hi = mid - 1n;
  }
  return lo;
}

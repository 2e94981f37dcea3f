/**
 * The I/O size classes of size × latency (`ClassSeries.sz`) and of the samples request's
 * `sizeClasses`: class s holds I/Os of at most 2^s bytes and more than 2^(s-1), as the kernel
 * program keys them (`size_log2` in bpf/include/blkheat.h).
 */

/** The size class of an I/O of `bytes` bytes: the smallest s with bytes <= 2^s (0 for 0 or 1 byte). */
export function sizeClassOf(bytes: number): number {
  let s = 0;
  while (2 ** s < bytes) s++;
  return s;
}

/** Largest I/O size of size class s, in bytes (2^s). */
export function sizeClassBytes(s: number): number {
  return 2 ** s;
}

/** Largest size class a request may name (2^63 bytes: beyond any I/O). */
export const MAX_SIZE_CLASS = 63;

/**
 * Deterministic synthetic data for tests and benchmarks, so a failing case reproduces from
 * its seed.
 */
import { bucketCount } from '@blkheat/shared-types';

/** mulberry32: a tiny seeded PRNG returning numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A sparse histogram with each bucket present with probability `density`, counts 1..maxCount. */
export function randomSparseHist(random: () => number, density: number, maxCount: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < bucketCount(); i++) if (random() < density) out.push(i, 1 + Math.floor(random() * maxCount));
  return out;
}

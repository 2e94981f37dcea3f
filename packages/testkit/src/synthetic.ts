/**
 * Deterministic synthetic data for tests and benchmarks, so a failing case reproduces from
 * its seed.
 */
import { bucketCount } from '@blkheat/shared-types';

export { seededRandom } from '@blkheat/shared-types';

/** A sparse histogram with each bucket present with probability `density`, counts 1..maxCount. */
export function randomSparseHist(random: () => number, density: number, maxCount: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < bucketCount(); i++) if (random() < density) out.push(i, 1 + Math.floor(random() * maxCount));
  return out;
}

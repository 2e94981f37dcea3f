/**
 * mulberry32: a tiny seeded PRNG returning numbers in [0, 1), so synthetic data reproduces from
 * its seed. One owner for the tests' fixtures (testkit) and the agent's simulated fleet
 * (apps/agent/src/fleet/simulated-hosts.ts), which cannot import testkit.
 */
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

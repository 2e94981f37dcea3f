/**
 * Wall-clock seconds from the kernel's CLOCK_MONOTONIC timestamps. The kernel programs key
 * histograms by (monotonic ns + offset) / 1 s, with the offset (CLOCK_REALTIME - CLOCK_MONOTONIC)
 * kept current by the agent, so histogram seconds are wall-clock aligned.
 */

/** process.hrtime is CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads. */
export function monotonicNs(): bigint {
  return process.hrtime.bigint();
}

/**
 * CLOCK_REALTIME - CLOCK_MONOTONIC in ns. Date.now() has ms resolution: read it where it
 * ticks over so the offset is good to a few µs rather than up to a whole ms.
 */
export function wallOffsetNs(): bigint {
  const first = Date.now();
  let now = first;
  let mono = monotonicNs();
  // At most ~1 ms of spinning; bounded so a stuck clock cannot hang us.
  for (let i = 0; i < 1_000_000 && now === first; i++) {
    mono = monotonicNs();
    now = Date.now();
  }
  return BigInt(now) * 1_000_000n - mono;
}

/** The wall-clock second a monotonic timestamp falls in. */
export function slotOf(monoNs: bigint, offsetNs: bigint): number {
  return Number((monoNs + offsetNs) / 1_000_000_000n);
}

/** Unix microseconds of a monotonic timestamp. */
export function wallMicros(monoNs: bigint, offsetNs: bigint): number {
  return Number((monoNs + offsetNs) / 1000n);
}

/** Re-sync the offset when it drifted by more than this (NTP slews, steps). */
const OFFSET_TOLERANCE_NS = 500_000n;

/**
 * The offset the kernel programs are given (CLOCK_REALTIME - CLOCK_MONOTONIC), read at start
 * and re-synced when the wall clock moved: what the agent dates seconds and samples with.
 */
export class WallClock {
  offsetNs = wallOffsetNs();

  /** The wall-clock second now falls in, as the kernel programs date it. */
  slotNow(): number {
    return slotOf(monotonicNs(), this.offsetNs);
  }

  /** Unix seconds now (fractional), on the kernel programs' clock. */
  nowSeconds(): number {
    return Number(monotonicNs() + this.offsetNs) / 1e9;
  }

  /** Takes the current offset when it drifted beyond the tolerance; returns whether it changed. */
  resync(): boolean {
    const fresh = wallOffsetNs();
    const drift = fresh - this.offsetNs;
    if (drift <= OFFSET_TOLERANCE_NS && drift >= -OFFSET_TOLERANCE_NS) return false;
    this.offsetNs = fresh;
    return true;
  }
}

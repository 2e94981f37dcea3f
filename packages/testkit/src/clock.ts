/**
 * Waiting on the wall clock by whole seconds: the agent closes one frame per wall-clock second,
 * so tests line their I/O up with second boundaries.
 */
import { sleep } from './workload.js';

/**
 * Sleeps until the wall clock reads unix second `second` plus `offsetMs` (negative: that long
 * before it); returns at once when that time has passed.
 */
export async function sleepUntilSecond(second: number, offsetMs = 0): Promise<void> {
  const wait = second * 1000 + offsetMs - Date.now();
  if (wait > 0) await sleep(wait);
}

/**
 * Sleeps until `marginMs` after the next wall-clock second boundary and returns that second
 * (unix seconds): work started then falls inside it.
 */
export async function nextSecond(marginMs = 5): Promise<number> {
  const second = Math.floor(Date.now() / 1000) + 1;
  await sleepUntilSecond(second, marginMs);
  return second;
}

/** Milliseconds from now to `marginMs` after the next wall-clock second boundary (for a timer). */
export function msToNextSecond(marginMs: number): number {
  return 1000 - (Date.now() % 1000) + marginMs;
}

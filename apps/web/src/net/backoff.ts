/** Reconnect delays: exponential from `base` to `max`, with ±25% jitter so tabs spread out. */
export function backoffDelay(attempt: number, base = 500, max = 15_000, random: () => number = Math.random): number {
  const raw = Math.min(max, base * 2 ** Math.max(0, attempt));
  return Math.round(raw * (0.75 + 0.5 * random()));
}

/**
 * Human-readable latencies, for the CLI and the dashboard alike: 3 significant digits at most,
 * in the unit that keeps the number between 1 and 999.
 */

const UNITS: readonly [number, string][] = [
  [1, 's'],
  [1e-3, 'ms'],
  [1e-6, 'µs'],
  [1e-9, 'ns'],
];

/** "850ns", "1.19µs", "15.3ms", "2s", "∞" for Infinity. */
export function formatLatency(seconds: number): string {
  if (seconds === Infinity) return '∞';
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds === 0) return '0';
  for (const [scale, unit] of UNITS) {
    if (seconds >= scale * 0.9995 || unit === 'ns') return `${trim(seconds / scale)}${unit}`;
  }
  return `${seconds}s`;
}

function trim(v: number): string {
  const text = v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/**
 * Human-readable latencies, for the CLI and the dashboard alike (the one formatter both use):
 * 3 significant digits and a space before the unit, in the unit that keeps the number between
 * 1 and 999. And lists in messages ("1, 2 and 3"), so no message joins them its own way.
 */

const UNITS: readonly [number, string][] = [
  [1, 's'],
  [1e-3, 'ms'],
  [1e-6, 'µs'],
  [1e-9, 'ns'],
];

/** "850 ns", "1.19 µs", "15.3 ms", "2.00 s"; "0", "∞" for Infinity, "–" for what is no latency (negative, NaN). */
export function formatLatency(seconds: number): string {
  if (seconds === Infinity) return '∞';
  if (!Number.isFinite(seconds) || seconds < 0) return '–';
  if (seconds === 0) return '0';
  for (const [scale, unit] of UNITS) {
    // 0.9999 s prints as "1.00 s", not "1000 ms".
    if (seconds >= scale * 0.9995) return `${digits(seconds / scale)} ${unit}`;
  }
  return `${digits(seconds * 1e9)} ns`;
}

function digits(v: number): string {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/**
 * A list for a message: "1, 2 and 3", "2 or 3", "from" (`word` joins the last two); "" for
 * none, so a caller with a list that may be empty must say something else then.
 */
export function listText(items: readonly (string | number)[], word: 'and' | 'or' = 'and'): string {
  if (items.length <= 1) return items.map(String).join('');
  return `${items.slice(0, -1).join(', ')} ${word} ${String(items[items.length - 1])}`;
}

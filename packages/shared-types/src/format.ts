/**
 * The one formatter per unit, for the CLI and the dashboard alike: latencies (formatLatency),
 * rates (formatRate), bytes (formatBytes) and counts (formatCount). A view that needs a variant
 * asks the one formatter for it with an option, so no two views write the same value two ways
 * (an incident is read across views: the tooltip, the table and the CLI must agree).
 * And lists in messages ("1, 2 and 3"), so no message joins them its own way.
 */

/** Latency units, largest first: the multiplier from seconds and the symbol. */
const LATENCY_UNITS: readonly (readonly [number, string])[] = [
  [1, 's'],
  [1e3, 'ms'],
  [1e6, 'µs'],
  [1e9, 'ns'],
];

export interface LatencyOptions {
  /** For axis ticks, where labels must be short: "1µs", "2.5ms" (no trailing zeros, no space). */
  readonly compact?: boolean;
  /** For a difference of two latencies: "+6.02 ms", "−850 ns", "±0"; "–" only when unknown or not finite. */
  readonly signed?: boolean;
}

/**
 * "850 ns", "1.19 µs", "15.3 ms", "2.00 s": 3 significant digits (trailing zeros kept: they say
 * how precise the number is) in the largest unit the number is ≥ 1 in, moving up a unit when
 * rounding reaches 1000 (999.6 µs is "1.00 ms"); whole seconds from 1000 s ("3600 s"); two
 * decimals below 1 ns. "0"; "∞" for Infinity; "–" for what is no latency (negative, NaN, null,
 * undefined: a sample whose queue time is unknown).
 */
export function formatLatency(seconds: number | null | undefined, options: LatencyOptions = {}): string {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '–';
  const compact = options.compact ?? false;
  if (options.signed) {
    if (!Number.isFinite(seconds)) return '–';
    if (seconds === 0) return '±0';
    return `${seconds > 0 ? '+' : '−'}${latencyText(Math.abs(seconds), compact)}`;
  }
  if (seconds === Infinity) return '∞';
  if (!Number.isFinite(seconds) || seconds < 0) return '–';
  return latencyText(seconds, compact);
}

/** A finite latency ≥ 0 as text. */
function latencyText(seconds: number, compact: boolean): string {
  if (seconds === 0) return '0';
  let i = LATENCY_UNITS.findIndex(([per]) => seconds * per >= 1);
  if (i < 0) i = LATENCY_UNITS.length - 1; // below 1 ns: still ns
  const [per, unit] = LATENCY_UNITS[i] as readonly [number, string];
  const v = seconds * per;
  let text = v < 1 ? v.toFixed(2) : v.toPrecision(3);
  let shown = unit;
  if (Number(text) >= 1000) {
    // Rounded up to 1000 of this unit: that is 1.00 of the next, or whole seconds at the top.
    const up = LATENCY_UNITS[i - 1];
    if (up) [text, shown] = ['1.00', up[1]];
    else text = v.toFixed(0);
  }
  return compact ? `${Number(text)}${shown}` : `${text} ${shown}`;
}

/** What a rate, count or size writes for a value that is no number: "–" (no data), "∞". */
function nonFinite(v: number): string | undefined {
  if (Number.isNaN(v)) return '–';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '-∞';
  return undefined;
}

/** SI suffixes for rates and compact counts, largest first. */
const SI_SUFFIXES: readonly (readonly [number, string])[] = [
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

/**
 * 3 significant digits, trailing zeros dropped, with the SI suffix that keeps the number below
 * 1000 after rounding (999,600 is "1M", not "1000k").
 */
function siText(v: number): string {
  const r = Number(v.toPrecision(3));
  for (const [scale, suffix] of SI_SUFFIXES) {
    if (Math.abs(r) >= scale) return `${Number((r / scale).toPrecision(3))}${suffix}`;
  }
  return String(r);
}

/**
 * A rate (IOPS, MB/s, I/Os in flight): "0.5", "2.41", "999", "1k", "12.3k", "1.2M"; the caller
 * adds the unit ("/s", the lane's "MB/s"). 3 significant digits so a quiet disk's 0.4/s is not
 * "0". "–" for NaN (no data, never 0).
 */
export function formatRate(perSecond: number): string {
  return nonFinite(perSecond) ?? siText(perSecond);
}

export interface CountOptions {
  /** Where space is short (chips, legend ticks, scale maxima): "1.23M" instead of "1,234,567". */
  readonly compact?: boolean;
}

/** A count of things, whole: 1234567 → "1,234,567" (compact: "1.23M"); "–" for NaN. */
export function formatCount(n: number, options: CountOptions = {}): string {
  const bad = nonFinite(n);
  if (bad !== undefined) return bad;
  const whole = Math.round(n);
  return options.compact ? siText(whole) : grouped(whole);
}

/**
 * A whole number with its digits in groups of three, as en-US writes it ("-1,234,567"; "0" for
 * -0). Not toLocaleString: a page's first Intl number format loads ICU's data, 20-30 ms of one
 * task in chromium (the first render of an imported snapshot paid it), and each later call
 * costs ~20 µs. From 1e21 String() writes exponents: toLocaleString there (no count gets there).
 */
function grouped(whole: number): string {
  if (Math.abs(whole) >= 1e21) return whole.toLocaleString('en-US');
  const digits = String(Math.abs(whole));
  return (whole < 0 ? '-' : '') + digits.replace(/\B(?=(\d{3})+$)/g, ',');
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/**
 * A size or offset in binary units: 512 → "512 B", 4096 → "4 KiB", 1536 → "1.5 KiB". 3
 * significant digits with trailing zeros dropped (sizes are mostly powers of two: "4 KiB", not
 * "4.00 KiB"), whole numbers from 100 up ("1000 KiB" to "1023 KiB" before 1 MiB). "–" for NaN.
 */
export function formatBytes(n: number): string {
  const bad = nonFinite(n);
  if (bad !== undefined) return bad;
  let v = n;
  let i = 0;
  // Next unit once the number would round to 1024 in this one.
  while (Math.abs(v) >= 1023.5 && i < BYTE_UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  const text = Math.abs(v) >= 100 ? String(Math.round(v)) : String(Number(v.toPrecision(3)));
  return `${text} ${BYTE_UNITS[i] as string}`;
}

/**
 * A list for a message: "1, 2 and 3", "2 or 3", "from" (`word` joins the last two); "" for
 * none, so a caller with a list that may be empty must say something else then.
 */
export function listText(items: readonly (string | number)[], word: 'and' | 'or' = 'and'): string {
  if (items.length <= 1) return items.map(String).join('');
  return `${items.slice(0, -1).join(', ')} ${word} ${String(items[items.length - 1])}`;
}

/** Number, time and size formatting shared by views, tooltips and the PNG export. */

/**
 * Counts, rates and sizes: shared-types owns one formatter per unit (the CLI prints the same),
 * with options for the variants views need (formatCount's `compact` for chips and legends).
 * Latencies: formatLatency, re-exported by latency.ts.
 */
export { formatBytes, formatCount, formatRate } from '@blkheat/shared-types';

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** "14:03:07" in local time (on-call people read their own clock). */
export function formatClock(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "2024-01-02 14:03:07" local. */
export function formatDateTime(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${formatClock(unixSeconds)}`;
}

/** "14:03:07" when `unixSeconds` is on the same local day as `now`, else "2024-01-02 14:03:07". */
export function formatSince(unixSeconds: number, now: number): string {
  const a = new Date(unixSeconds * 1000);
  const b = new Date(now * 1000);
  const sameDay = a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  return sameDay ? formatClock(unixSeconds) : formatDateTime(unixSeconds);
}

/** "14:03:07.123456" from unix microseconds. */
export function formatMicroClock(tsUs: number): string {
  const s = Math.floor(tsUs / 1e6);
  return `${formatClock(s)}.${pad(Math.floor(tsUs - s * 1e6), 6)}`;
}

/** A duration in seconds: "45 s", "5 min", "1 h 30 min", "2 d". */
export function formatSpan(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) {
    const h = Math.floor(s / 3600);
    const m = Math.round((s % 3600) / 60);
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  return `${Math.round(s / 86400)} d`;
}

/** 0.1234 → "12.3%". */
export function formatShare(f: number): string {
  if (!(f > 0)) return '0%';
  if (f >= 0.999995) return '100%';
  const p = f * 100;
  return p >= 10 ? `${p.toFixed(1)}%` : p >= 0.01 ? `${p.toFixed(2)}%` : '<0.01%';
}

/** A difference of two shares in percentage points: 0.123 → "+12.3 pts", −0.0004 → "−0.04 pts". */
export function formatShareDelta(d: number): string {
  if (!Number.isFinite(d)) return '–';
  if (d === 0) return '±0 pts';
  const p = Math.abs(d) * 100;
  const text = p >= 10 ? p.toFixed(1) : p >= 0.01 ? p.toFixed(2) : '<0.01';
  return `${d > 0 ? '+' : '−'}${text} pts`;
}

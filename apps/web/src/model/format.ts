/** Number, time and size formatting shared by views, tooltips and the PNG export. */

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

/** 1234567 → "1,234,567". */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** 1234567 → "1.23M". */
export function formatCompact(n: number): string {
  const a = Math.abs(n);
  if (a < 1e3) return String(Math.round(n));
  if (a < 1e6) return `${+(n / 1e3).toPrecision(3)}k`;
  if (a < 1e9) return `${+(n / 1e6).toPrecision(3)}M`;
  return `${+(n / 1e9).toPrecision(3)}G`;
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

/** 4096 → "4 KiB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${+v.toPrecision(3)} ${units[i]}`;
}

/** Nanoseconds as a latency string, "–" when unknown. */
export function formatNs(ns: number | null): string {
  if (ns === null) return '–';
  if (ns < 1e3) return `${ns} ns`;
  if (ns < 1e6) return `${+(ns / 1e3).toPrecision(3)} µs`;
  if (ns < 1e9) return `${+(ns / 1e6).toPrecision(3)} ms`;
  return `${+(ns / 1e9).toPrecision(3)} s`;
}

/** Parsing of the human units the CLI takes: durations ("90s", "24h", "7d") and sizes ("512M"). */

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };
const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** "24h" -> 86400. A bare number is seconds. Undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,9})([smhd]?)$/i.exec(text.trim());
  if (!m) return undefined;
  return Number(m[1]) * (DURATION_UNITS[(m[2] || 's').toLowerCase()] as number);
}

/** "512M" -> 536870912 (binary units; an optional trailing B or iB). Undefined when malformed. */
export function parseSize(text: string): number | undefined {
  const m = /^(\d{1,15})\s*([kmgt]?)(i?b)?$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = SIZE_UNITS[(m[2] ?? '').toLowerCase()];
  return unit === undefined ? undefined : Number(m[1]) * unit;
}

/** 86400 -> "24h", 5400 -> "90m", 604800 -> "7d" (days only beyond one, as people say "24h"). */
export function formatDuration(seconds: number): string {
  if (seconds > 86400 && seconds % 86400 === 0) return `${seconds / 86400}d`;
  for (const [u, n] of [
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (seconds % n === 0 && seconds >= n) return `${seconds / n}${u}`;
  }
  return `${seconds}s`;
}

/** 536870912 -> "512M". */
export function formatSize(bytes: number): string {
  for (const [u, n] of [
    ['G', 1024 ** 3],
    ['M', 1024 ** 2],
    ['K', 1024],
  ] as const) {
    if (bytes % n === 0 && bytes >= n) return `${bytes / n}${u}`;
  }
  return `${bytes}`;
}

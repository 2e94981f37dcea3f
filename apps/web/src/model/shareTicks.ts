/**
 * Ticks of the share axis under the histograms (bar length = share of a disk's I/Os). Laid out
 * here, not left to d3's defaults, because d3 ticks a degenerate domain too: with no I/O in
 * the range the domain is [0, ε] and its ticks all read "<0.01%", drawn on top of each other.
 * So: no ticks at all without I/O (the histogram itself says "no I/O"), and otherwise only
 * ticks whose label differs from the last one kept and does not overlap it.
 */
import { ticks } from 'd3';
import { formatShare } from './format.js';

export interface ShareTick {
  /** Share (0..1), a position on the axis. */
  readonly value: number;
  readonly label: string;
  /** Label centre, px from the axis start. */
  readonly x: number;
}

/** Width of one character of the axis font (10 px monospace: about 6.7 px in chromium) and the least gap between labels. */
export const SHARE_CHAR_PX = 7;
const LABEL_GAP_PX = 6;

/** Rough label width in px (monospace). */
export function shareLabelWidth(label: string, charPx = SHARE_CHAR_PX): number {
  return label.length * charPx;
}

/**
 * Ticks for an axis from 0 to `maxShare` over `length` px, labels centred on their ticks and
 * never overlapping. None when `maxShare` is 0 (nothing to scale: no I/O in the range).
 */
export function shareTicks(maxShare: number, length: number, charPx = SHARE_CHAR_PX): ShareTick[] {
  if (!(maxShare > 0) || !(length > 0)) return [];
  const out: ShareTick[] = [];
  let lastRight = -Infinity;
  for (const value of ticks(0, maxShare, Math.max(2, Math.floor(length / 50)))) {
    const label = formatShare(value);
    const x = (value / maxShare) * length;
    const half = shareLabelWidth(label, charPx) / 2;
    if (label === out[out.length - 1]?.label || x - half < lastRight + LABEL_GAP_PX) continue;
    out.push({ value, label, x });
    lastRight = x + half;
  }
  return out;
}

/**
 * Which chips of a long picker (hosts, disks) are drawn. A fleet of a thousand hosts has 1,000
 * host chips and 4,000 disk chips: drawn all at once they fill screens of buttons nobody can
 * scan, and every render of the picker builds them again. A picker draws the first `limit`
 * chips a name filter matches, in their order, then any pressed chip past them (what is on screen
 * can always be turned off; a chip does not move when pressed), and says how many it left out.
 */

/** Chips a picker draws at most: a few lines of chips on a wide screen. */
export const CHIPS_FIRST = 40;

export interface ChipChoice<T> {
  /** Chips to draw: the first `limit` that match, then the pressed ones past them, in the order given. */
  readonly shown: readonly T[];
  /** Chips the filter matches but that are not drawn. */
  readonly hidden: number;
  /** Chips the filter matches (all of them when it is empty). */
  readonly matching: number;
}

/** Whether `name` matches a picker's filter: every space-separated word of it, case-insensitively. */
export function chipMatches(name: string, filter: string): boolean {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  const n = name.toLowerCase();
  return words.every((w) => n.includes(w));
}

export function pickChips<T>(
  items: readonly T[],
  name: (item: T) => string,
  pressed: (item: T) => boolean,
  filter: string,
  limit = CHIPS_FIRST,
): ChipChoice<T> {
  const matching = filter.trim() === '' ? items : items.filter((x) => chipMatches(name(x), filter));
  if (matching.length <= limit) return { shown: matching, hidden: 0, matching: matching.length };
  const shown = matching.slice(0, limit);
  for (let i = limit; i < matching.length; i++) {
    const x = matching[i] as T;
    if (pressed(x)) shown.push(x);
  }
  return { shown, hidden: matching.length - shown.length, matching: matching.length };
}

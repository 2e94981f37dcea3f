/**
 * Which rows of a long breakdown table (op classes, cgroups) are drawn. Each row is a table row and
 * a sparkline canvas: a snapshot may name 4,096 classes on one disk
 * (SNAPSHOT_LIMITS.classesPerDisk, and more across its frames), and drawing a row for every one
 * holds the page for seconds and makes thousands of canvases. The table draws the busiest rows
 * first (rows come sorted by count), a few more per request, plus any pinned row past them (a
 * selected class stays in view so it can be unselected), and sums up the rest in one line.
 */

/** Rows a breakdown table draws at first: more than real kernels name on one disk in practice. */
export const ROWS_FIRST = 50;
/** Rows each "show more" adds: about as much drawing as one task holds without the page noticing. */
export const ROWS_MORE = 100;

export interface CappedRows<T> {
  /** Rows to draw, in the order given. */
  readonly shown: readonly T[];
  /** Rows left out, their I/Os and their share of the table's I/Os. */
  readonly hidden: number;
  readonly hiddenN: number;
  readonly hiddenShare: number;
}

/** The first `limit` rows and the pinned ones after them; what is left out, summed. */
export function capRows<T extends { readonly n: number; readonly share: number }>(
  rows: readonly T[],
  limit: number,
  pinned: (row: T) => boolean,
): CappedRows<T> {
  if (rows.length <= limit) return { shown: rows, hidden: 0, hiddenN: 0, hiddenShare: 0 };
  const shown = rows.slice(0, limit);
  let hidden = 0;
  let hiddenN = 0;
  let hiddenShare = 0;
  for (let i = limit; i < rows.length; i++) {
    const r = rows[i] as T;
    if (pinned(r)) {
      shown.push(r);
    } else {
      hidden++;
      hiddenN += r.n;
      hiddenShare += r.share;
    }
  }
  return { shown, hidden, hiddenN, hiddenShare };
}

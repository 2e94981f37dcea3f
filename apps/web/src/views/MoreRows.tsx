/**
 * A breakdown table's rows past the first few (model/rowCap.ts): how many rows it draws, and
 * the line under it that says what is not drawn and draws more on request. One place, so the
 * op class and cgroup tables cap alike.
 */
import { useState } from 'react';
import { formatCount, formatShare } from '../model/format.js';
import { type CappedRows, ROWS_FIRST, ROWS_MORE } from '../model/rowCap.js';
import { useData } from '../store/pipelineStore.js';

/**
 * How many rows to draw, and a function that draws ROWS_MORE more. Back to ROWS_FIRST for
 * each imported snapshot (and going live): rows the user asked for in one file would otherwise
 * all be drawn at once for the next, which may have thousands.
 */
export function useRowLimit(): [number, () => void] {
  const source = useData((s) => s.snapshot);
  const [state, setState] = useState({ source, limit: ROWS_FIRST });
  // Reset while rendering (not in an effect): the new source's first render already draws few rows.
  if (state.source !== source) setState({ source, limit: ROWS_FIRST });
  const limit = state.source === source ? state.limit : ROWS_FIRST;
  return [limit, () => setState((s) => ({ ...s, limit: s.limit + ROWS_MORE }))];
}

/** The line under a capped table: rows not drawn, their I/Os and share, and "show more". Nothing when every row is drawn. */
export function MoreRows({ capped, noun, cols, onMore }: { capped: CappedRows<unknown>; noun: string; cols: number; onMore: () => void }) {
  if (capped.hidden === 0) return null;
  return (
    <tr className="more-rows" data-testid="more-rows" data-hidden={capped.hidden}>
      <td colSpan={cols}>
        {formatCount(capped.hidden)} more {noun}, {formatCount(capped.hiddenN)} I/Os ({formatShare(capped.hiddenShare)}), not listed{' '}
        <button type="button" className="link" onClick={onMore} data-testid="more-rows-show">
          show {formatCount(Math.min(ROWS_MORE, capped.hidden))} more
        </button>
      </td>
    </tr>
  );
}

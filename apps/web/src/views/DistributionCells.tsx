/**
 * The breakdown tables (op classes, cgroups): their frame and column heads, and the cells every
 * row ends with: its share of the range as a bar and a number, its p50 and p99, and its latency
 * distribution as a sparkline. One place, so the two tables read alike.
 */
import type { ReactNode } from 'react';
import { formatQuantile, type QuantileValue } from '../model/percentiles.js';
import { formatShare } from '../model/format.js';
import { EXPLAIN } from '../model/explain.js';
import { Spark } from './Spark.js';

export interface DistributionRow {
  readonly share: number;
  readonly hist: Float64Array;
  readonly quantiles: readonly QuantileValue[];
}

export function DistributionCells({ row, uLo, uHi }: { row: DistributionRow; uLo: number; uHi: number }) {
  const q = (label: string): string => formatQuantile(row.quantiles.find((x) => x.label === label));
  return (
    <>
      <td className="share">
        {/* To a tenth of a percent (a tenth of a pixel here): a live second moves a share in its
            fourth digit, and a style written anew is a layout and paint of the table for nothing. */}
        <span className="share-bar" style={{ width: `${Math.max(1, Math.round(row.share * 1000) / 10)}%` }} />
        <span className="share-text">{formatShare(row.share)}</span>
      </td>
      <td className="num">{q('p50')}</td>
      <td className="num">{q('p99')}</td>
      <td>
        <Spark hist={row.hist} uLo={uLo} uHi={uHi} />
      </td>
    </>
  );
}

/** The heads of DistributionCells' columns. */
function DistributionHeads() {
  return (
    <>
      <th scope="col">share</th>
      <th scope="col" className="num" title={EXPLAIN.percentile}>
        p50
      </th>
      <th scope="col" className="num" title={EXPLAIN.percentile}>
        p99
      </th>
      <th scope="col">distribution</th>
    </>
  );
}

/**
 * A breakdown table: a column naming each row (`nameHead`), its I/O count, the `extraHeads`,
 * then DistributionCells' columns; `children` are the rows, in that order, and `footer` the
 * line under them (MoreRows: the rows not drawn).
 */
export function BreakdownTable({
  nameHead,
  extraHeads,
  children,
  footer,
}: {
  nameHead: string;
  extraHeads?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}) {
  return (
    <div className="table-scroll">
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">{nameHead}</th>
            <th scope="col" className="num">
              I/Os
            </th>
            {extraHeads}
            <DistributionHeads />
          </tr>
        </thead>
        <tbody>{children}</tbody>
        {footer !== undefined && <tfoot>{footer}</tfoot>}
      </table>
    </div>
  );
}

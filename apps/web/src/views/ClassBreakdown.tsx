/**
 * Op-class breakdown of the visible range over the shown disks: count, failed I/Os (by block
 * status in the cell's title), share, latency percentiles and distribution per class. Clicking a class filters every view to it
 * (Ctrl/⌘-click adds or removes); "all classes" clears the filter. The busiest classes are
 * listed, and the selected ones; the rest on request (MoreRows). "Per disk" splits the table by
 * disk (issue 29: over every disk at once, a slow disk's reads hid under a fast disk's p50).
 */
import { useState } from 'react';
import { formatCount } from '../model/format.js';
import { statusText } from '../model/faults.js';
import type { ClassSummary } from '../model/breakdown.js';
import { clearClasses, clickClass } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { PHASE_WORDS } from '../model/phase.js';
import { capRows } from '../model/rowCap.js';
import { BreakdownTable, DistributionCells } from './DistributionCells.js';
import { MoreRows, useRowLimit } from './MoreRows.js';

/** `disk`: the disk's name when the table is split per disk (it names the row's test ids too). */
function Row({ c, selected, uLo, uHi, disk }: { c: ClassSummary; selected: boolean; uLo: number; uHi: number; disk?: string }) {
  const id = disk === undefined ? c.c : `${disk}-${c.c}`;
  return (
    <tr className={selected ? 'selected' : undefined} data-testid={`class-row-${id}`}>
      <th scope="row">
        <button
          type="button"
          className="class-button"
          aria-pressed={selected}
          title="Show only this class (Ctrl/⌘-click to add or remove); replaces a cgroup filter"
          data-testid={`class-${id}`}
          onClick={(e) => clickClass(c.c, e.ctrlKey || e.metaKey)}
        >
          {c.c}
        </button>
      </th>
      <td className="num" data-testid={`class-count-${id}`}>
        {formatCount(c.n)}
      </td>
      <td
        className={c.failed > 0 ? 'num class-errors' : 'num muted'}
        data-testid={`class-errors-${id}`}
        data-count={c.failed}
        title={c.failed > 0 ? `failed I/Os by block status: ${statusText(c.errors)}` : 'no failed I/Os'}
      >
        {formatCount(c.failed)}
      </td>
      <DistributionCells row={c} uLo={uLo} uHi={uHi} />
    </tr>
  );
}

/** Columns of the table: class, I/Os, errors, then DistributionCells' four. */
const COLUMNS = 7;

export function ClassBreakdown() {
  const classes = useUi((s) => s.classes);
  const kind = useUi((s) => s.kind);
  const summary = useData((s) => s.summary);
  const cur = useData((s) => s.window);
  const cgroup = useUi((s) => s.cgroup);
  const shownDevs = useData((s) => s.shownDevs);
  const disks = useData((s) => s.disks);
  const [split, setSplit] = useState(false);
  const rows = summary?.classes ?? [];
  const [limit, more] = useRowLimit();
  const selected = (c: ClassSummary): boolean => classes.includes(c.c);
  // The busiest classes and the selected ones: a snapshot may name thousands (model/rowCap.ts).
  const capped = capRows(rows, limit, selected);
  const uLo = cur?.yLo ?? 0;
  const uHi = (c: ClassSummary): number => cur?.yHi ?? c.hist.length;
  // Split per disk only with more than one disk shown (one disk's table is the whole table).
  const perDisk = split && shownDevs.length > 1;
  const byDisk = perDisk
    ? shownDevs.flatMap((dev) => {
        const list = summary?.classesByDisk.get(dev);
        return list && list.length > 0
          ? [{ dev, name: disks.find((d) => d.dev === dev)?.name ?? dev, capped: capRows(list, limit, selected) }]
          : [];
      })
    : [];
  // Classes filtered out of the heat maps still appear here (counts are over all classes).
  return (
    <section className="panel breakdown" aria-labelledby="breakdown-title" data-testid="class-breakdown" data-split={perDisk}>
      <header className="panel-head">
        <h2 id="breakdown-title">Op classes</h2>
        <span className="muted">
          visible range, {perDisk ? 'each shown disk' : 'shown disks together'} · {PHASE_WORDS[kind]}
        </span>
        {cgroup !== undefined && (
          <span className="tag tag-warn" data-testid="class-not-split">
            not split by cgroup: every cgroup’s I/O (a class replaces the cgroup filter)
          </span>
        )}
        <button
          type="button"
          aria-pressed={perDisk}
          disabled={shownDevs.length <= 1}
          onClick={() => setSplit(!split)}
          data-testid="class-split"
          title="One table per shown disk (each class's share of that disk's I/Os, and its own percentiles), or one over the shown disks together"
        >
          per disk
        </button>
        <button type="button" className="link" onClick={clearClasses} disabled={classes.length === 0} data-testid="class-all">
          all classes
        </button>
      </header>
      {rows.length === 0 ? (
        <p className="muted">No I/O in this range.</p>
      ) : (
        <BreakdownTable
          nameHead="class"
          extraHeads={
            <th scope="col" className="num" title="failed I/Os (in the I/O count), by block status in each cell's title">
              errors
            </th>
          }
          footer={perDisk ? undefined : <MoreRows capped={capped} noun="classes" cols={COLUMNS} onMore={more} />}
        >
          {perDisk
            ? byDisk.map((d) => [
                <tr key={`disk-${d.dev}`} className="class-disk" data-testid={`class-disk-${d.name}`}>
                  <th scope="rowgroup" colSpan={COLUMNS}>
                    {d.name}
                  </th>
                </tr>,
                ...d.capped.shown.map((c) => (
                  <Row key={`${d.dev}/${c.c}`} c={c} disk={d.name} selected={selected(c)} uLo={uLo} uHi={uHi(c)} />
                )),
                <MoreRows key={`more-${d.dev}`} capped={d.capped} noun={`classes on ${d.name}`} cols={COLUMNS} onMore={more} />,
              ])
            : capped.shown.map((c) => <Row key={c.c} c={c} selected={selected(c)} uLo={uLo} uHi={uHi(c)} />)}
        </BreakdownTable>
      )}
    </section>
  );
}

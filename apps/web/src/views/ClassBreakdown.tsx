/**
 * Op-class breakdown of the visible range over the shown disks: count, failed I/Os (by block
 * status in the cell's title), share, latency percentiles and distribution per class. Clicking a class filters every view to it
 * (Ctrl/⌘-click adds or removes); "all classes" clears the filter. The busiest classes are
 * listed, and the selected ones; the rest on request (MoreRows).
 */
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

function Row({ c, selected, uLo, uHi }: { c: ClassSummary; selected: boolean; uLo: number; uHi: number }) {
  return (
    <tr className={selected ? 'selected' : undefined} data-testid={`class-row-${c.c}`}>
      <th scope="row">
        <button
          type="button"
          className="class-button"
          aria-pressed={selected}
          title="Show only this class (Ctrl/⌘-click to add or remove); replaces a cgroup filter"
          data-testid={`class-${c.c}`}
          onClick={(e) => clickClass(c.c, e.ctrlKey || e.metaKey)}
        >
          {c.c}
        </button>
      </th>
      <td className="num" data-testid={`class-count-${c.c}`}>
        {formatCount(c.n)}
      </td>
      <td
        className={c.failed > 0 ? 'num class-errors' : 'num muted'}
        data-testid={`class-errors-${c.c}`}
        data-count={c.failed}
        title={c.failed > 0 ? `failed I/Os by block status: ${statusText(c.errors)}` : 'no failed I/Os'}
      >
        {formatCount(c.failed)}
      </td>
      <DistributionCells row={c} uLo={uLo} uHi={uHi} />
    </tr>
  );
}

export function ClassBreakdown() {
  const classes = useUi((s) => s.classes);
  const kind = useUi((s) => s.kind);
  const summary = useData((s) => s.summary);
  const cur = useData((s) => s.window);
  const cgroup = useUi((s) => s.cgroup);
  const rows = summary?.classes ?? [];
  const [limit, more] = useRowLimit();
  // The busiest classes and the selected ones: a snapshot may name thousands (model/rowCap.ts).
  const capped = capRows(rows, limit, (c) => classes.includes(c.c));
  // Classes filtered out of the heat maps still appear here (counts are over all classes).
  return (
    <section className="panel breakdown" aria-labelledby="breakdown-title" data-testid="class-breakdown">
      <header className="panel-head">
        <h2 id="breakdown-title">Op classes</h2>
        <span className="muted">visible range, shown disks · {PHASE_WORDS[kind]}</span>
        {cgroup !== undefined && (
          <span className="tag tag-warn" data-testid="class-not-split">
            not split by cgroup: every cgroup’s I/O (a class replaces the cgroup filter)
          </span>
        )}
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
          footer={<MoreRows capped={capped} noun="classes" cols={7} onMore={more} />}
        >
          {capped.shown.map((c) => (
            <Row key={c.c} c={c} selected={classes.includes(c.c)} uLo={cur?.yLo ?? 0} uHi={cur?.yHi ?? c.hist.length} />
          ))}
        </BreakdownTable>
      )}
    </section>
  );
}

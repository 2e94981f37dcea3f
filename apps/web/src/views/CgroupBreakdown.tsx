/**
 * Cgroups of one disk over the visible range (DiskFrame.cg): count, share, percentiles and
 * distribution of the phase on screen (device latency in data before protocol 4) per cgroup path. Clicking a cgroup filters every view to it
 * (clicking it again, or "every cgroup", removes the filter).
 */
import { CGROUP_NONE, CGROUP_OTHER } from '@blkheat/shared-types';
import type { CgroupSummary } from '../model/cgroups.js';
import { missingSplitText } from '../model/explain.js';
import { formatCount } from '../model/format.js';
import { bucketWindowOf } from '../model/latency.js';
import { PHASE_WORDS } from '../model/phase.js';
import { clearCgroup, clickCgroup } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { PanelDiskSelect, usePanelDisk } from './PanelDisk.js';
import { capRows } from '../model/rowCap.js';
import { BreakdownTable, DistributionCells } from './DistributionCells.js';
import { MoreRows, useRowLimit } from './MoreRows.js';
import { useFleetData } from './useFleetData.js';

/** What the protocol's special names mean, for their tooltips. */
function cgroupTitle(g: string): string {
  if (g === CGROUP_NONE) return 'I/O charged to no cgroup (requests without a bio: flushes)';
  if (g === CGROUP_OTHER) return 'every cgroup past the 64 busiest of a step, summed';
  if (g.startsWith('cgroup#')) return 'a cgroup removed before the agent could name it (its id)';
  return g;
}

function Row({ c, selected, uLo, uHi }: { c: CgroupSummary; selected: boolean; uLo: number; uHi: number }) {
  return (
    <tr className={selected ? 'selected' : undefined} data-testid="cgroup-row" data-cgroup={c.g} data-count={c.n}>
      <th scope="row">
        <button
          type="button"
          className="class-button cgroup-button"
          aria-pressed={selected}
          title={`${cgroupTitle(c.g)}\nShow only this cgroup's I/O in every view (replaces a class filter)`}
          data-testid="cgroup-button"
          onClick={() => clickCgroup(c.g)}
        >
          {c.g}
        </button>
      </th>
      <td className="num" data-testid="cgroup-count">
        {formatCount(c.n)}
      </td>
      <DistributionCells row={c} uLo={uLo} uHi={uHi} />
    </tr>
  );
}

export function CgroupBreakdown() {
  const cgroup = useUi((s) => s.cgroup);
  const fromFleet = useFleetData();
  const kind = useUi((s) => s.kind);
  const summary = useData((s) => s.summary);
  const cur = useData((s) => s.window);
  const dev = usePanelDisk();
  const b = dev !== undefined ? summary?.cgroups.get(dev) : undefined;
  const rows = b?.rows ?? [];
  const [limit, more] = useRowLimit();
  // A snapshot's frames may each name 64 other cgroups: the busiest are listed, the rest on request.
  const capped = capRows(rows, limit, (c) => c.g === cgroup);
  // Sparklines over the heat maps' latency window, widened to every cgroup's latency (the window
  // may be another phase's where this data has device latency only, or narrowed to the filtered cgroup).
  const [uLo, uHi] = bucketWindowOf(
    rows.map((r) => r.hist),
    cur ? [cur.yLo, cur.yHi] : undefined,
  ) ?? [0, 1];
  return (
    <section className="panel breakdown cgroups" aria-labelledby="cgroups-title" data-testid="cgroup-breakdown">
      <header className="panel-head">
        <h2 id="cgroups-title">Cgroups</h2>
        <PanelDiskSelect testId="cgroup-disk" />
        <span className="muted">visible range · {PHASE_WORDS[b?.kind ?? kind]}</span>
        {b && b.kind !== kind && (
          <span className="tag tag-warn" data-testid="cgroup-device-only">
            device time: this panel has no per-cgroup {PHASE_WORDS[kind]} data
          </span>
        )}
        <button type="button" className="link" onClick={clearCgroup} disabled={cgroup === undefined} data-testid="cgroup-all">
          every cgroup
        </button>
      </header>
      {rows.length === 0 ? (
        <p className="muted" data-testid="cgroup-empty">
          {b && b.framesWithIo > 0 && b.framesWithCg === 0 ? missingSplitText('cgroups', fromFleet) : 'No I/O in this range.'}
        </p>
      ) : (
        <BreakdownTable nameHead="cgroup" footer={<MoreRows capped={capped} noun="cgroups" cols={6} onMore={more} />}>
          {capped.shown.map((c) => (
            <Row key={c.g} c={c} selected={cgroup === c.g} uLo={uLo} uHi={uHi} />
          ))}
        </BreakdownTable>
      )}
      {rows.some((r) => r.g === CGROUP_OTHER) && (
        <p className="muted" data-testid="cgroup-other-note">
          {CGROUP_OTHER}: the cgroups past the 64 busiest of a step, summed; a cgroup that was among them in some steps has those steps’ I/O
          there, not in its own row.
        </p>
      )}
      {b && b.framesWithCg > 0 && b.framesWithCg < b.framesWithIo && (
        <p className="muted" data-testid="cgroup-partial">
          Part of this range has no per-cgroup split (recorded by an older agent): its I/O is not in this table.
        </p>
      )}
    </section>
  );
}

/** The sampled I/Os inside the selected cell or box, sortable by any column; the submit wait (protocol 4 `w_ns`) when the samples have it. */
import { useMemo } from 'react';
import type { IoSample } from '@blkheat/shared-types';
import { formatBytes, formatClock, formatCount, formatMicroClock } from '../model/format.js';
import { bucketBoundsSeconds, formatLatency } from '../model/latency.js';
import { PHASE_WORDS } from '../model/phase.js';
import { noSamplesReason, type SampleSortKey, sortSamples } from '../model/samples.js';
import { sizeClassBytes } from '../model/sizeLatency.js';
import { clearSelection, sortSamplesBy } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { boxText } from './OffsetScatterPanel.js';

const SHOWN = 500;

/** Wire nanoseconds in seconds, for formatLatency (null or absent: unknown, shown as "–"). */
const nsToSeconds = (ns: number | null | undefined): number | null => (ns === null || ns === undefined ? null : ns / 1e9);

const COLUMNS: { key: SampleSortKey; label: string; num?: boolean; render: (s: IoSample, name: (dev: string) => string) => string }[] = [
  { key: 'ts_us', label: 'completed', render: (s) => formatMicroClock(s.ts_us) },
  { key: 'dev', label: 'disk', render: (s, name) => name(s.dev) },
  { key: 'c', label: 'class', render: (s) => s.c },
  // Flushes have no sector (null on the wire): shown as a dash.
  { key: 'sector', label: 'sector', num: true, render: (s) => (s.sector === null ? '–' : String(s.sector)) },
  { key: 'bytes', label: 'size', num: true, render: (s) => formatBytes(s.bytes) },
  // Only when some sample has it (protocol 4): bio submission → request allocation.
  { key: 'w_ns', label: 'submit wait', num: true, render: (s) => formatLatency(nsToSeconds(s.w_ns)) },
  { key: 'q_ns', label: 'queue', num: true, render: (s) => formatLatency(nsToSeconds(s.q_ns)) },
  { key: 'd_ns', label: 'device', num: true, render: (s) => formatLatency(nsToSeconds(s.d_ns)) },
  { key: 'pid', label: 'pid', num: true, render: (s) => (s.pid ? String(s.pid) : '–') },
  { key: 'comm', label: 'comm', render: (s) => s.comm || '–' },
  { key: 'cg', label: 'cgroup', render: (s) => s.cg ?? '–' },
];

export function SamplesTable() {
  const sel = useData((s) => s.selection);
  const samples = useData((s) => s.samples);
  const sort = useUi((s) => s.sampleSort);
  const disks = useData((s) => s.disks);
  const snapshot = useData((s) => s.mode === 'snapshot');
  const rows = useMemo(() => sortSamples(samples.rows, sort.key, sort.dir), [samples.rows, sort]);
  const columns = useMemo(
    () => (samples.rows.some((r) => r.w_ns !== undefined) ? COLUMNS : COLUMNS.filter((c) => c.key !== 'w_ns')),
    [samples.rows],
  );
  if (!sel) {
    return (
      <section className="panel samples" aria-labelledby="samples-title" data-testid="samples">
        <header className="panel-head">
          <h2 id="samples-title">Sampled I/Os</h2>
        </header>
        <p className="muted">Click a heat map cell, or Alt-drag a box (or use the Select tool), to list the sampled I/Os inside it.</p>
      </section>
    );
  }
  const name = (dev: string): string => disks.find((d) => d.dev === dev)?.name ?? dev;
  const [lo] = bucketBoundsSeconds(sel.bucketLo, sel.schema);
  const [, hi] = bucketBoundsSeconds(sel.bucketHi, sel.schema);
  return (
    <section className="panel samples" aria-labelledby="samples-title" data-testid="samples">
      <header className="panel-head">
        <h2 id="samples-title">Sampled I/Os</h2>
        <span className="muted" data-testid="samples-scope">
          {name(sel.dev)} ·{' '}
          {sel.sectors
            ? `offset vs time box ${boxText({ from: sel.from, to: sel.to, sectorLo: sel.sectors.lo, sectorHi: sel.sectors.hi })} · every ${PHASE_WORDS[sel.kind]}`
            : `${formatClock(sel.from)}–${formatClock(sel.to)} · ${PHASE_WORDS[sel.kind]} ${formatLatency(lo)} – ${formatLatency(hi)}`}
          {sel.classes.length > 0 ? ` · ${sel.classes.join(', ')}` : ''}
          {sel.sizeClass !== undefined ? ` · size ≤ ${formatBytes(sizeClassBytes(sel.sizeClass))}` : ''}
          {sel.cgroup !== undefined ? ` · cgroup ${sel.cgroup}` : ''}
        </span>
        <button type="button" className="link" onClick={clearSelection} data-testid="samples-close">
          close
        </button>
      </header>
      {samples.status === 'loading' && <p className="muted">Loading…</p>}
      {samples.status === 'error' && (
        <p className="error" role="alert">
          Could not load samples: {samples.error}
        </p>
      )}
      {samples.status === 'done' && rows.length === 0 && (
        <p className="muted" data-testid="samples-empty">
          {noSamplesReason(sel, samples.kept, snapshot)}
        </p>
      )}
      {rows.length > 0 && (
        <>
          <p className="muted" data-testid="samples-count">
            {formatCount(rows.length)} sampled I/O{rows.length === 1 ? '' : 's'}
            {samples.truncated ? ' (more matched; narrow the selection)' : ''}
            {rows.length > SHOWN ? `, first ${SHOWN} shown` : ''}
          </p>
          <div className="table-scroll">
            <table className="grid samples-table" data-testid="samples-table">
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th
                      key={c.key}
                      scope="col"
                      className={c.num ? 'num' : undefined}
                      aria-sort={sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
                    >
                      <button type="button" className="sort" onClick={() => sortSamplesBy(c.key)} data-testid={`sort-${c.key}`}>
                        {c.label}
                        <span aria-hidden="true">{sort.key === c.key ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                      </button>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.slice(0, SHOWN).map((s, i) => (
                  <tr
                    key={`${s.ts_us}-${s.sector}-${i}`}
                    className={s.outlier ? 'outlier' : undefined}
                    data-ts-us={s.ts_us}
                    data-sector={s.sector ?? ''}
                    data-dev={s.dev}
                    data-class={s.c}
                    data-d-ns={s.d_ns}
                    data-q-ns={s.q_ns ?? ''}
                    data-w-ns={s.w_ns ?? ''}
                    data-pid={s.pid}
                    data-comm={s.comm}
                    data-bytes={s.bytes}
                    data-cg={s.cg ?? ''}
                  >
                    {columns.map((c) => (
                      <td key={c.key} className={c.num ? 'num' : undefined}>
                        {c.render(s, name)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

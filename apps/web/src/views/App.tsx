/** Page layout and page-wide behaviour (theme, Escape). */
import { useEffect } from 'react';
import type { DiskInfo } from '@blkheat/shared-types';
import { scheduler } from '../render/scheduler.js';
import { clearSelection, resetView, showHelp } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { CgroupBreakdown } from './CgroupBreakdown.js';
import { ClassBreakdown } from './ClassBreakdown.js';
import { DiskPicker } from './DiskPicker.js';
import { DiskRow } from './DiskRow.js';
import { DropZone } from './DropZone.js';
import { FilterBar } from './FilterBar.js';
import { FleetRanking } from './FleetRanking.js';
import { FleetStuck } from './FleetStuck.js';
import { Header } from './Header.js';
import { KeyboardHelp } from './KeyboardHelp.js';
import { HistoryFault } from './HistoryFault.js';
import { Legend } from './Legend.js';
import { Notices } from './Notices.js';
import { OffsetScatterPanel } from './OffsetScatterPanel.js';
import { PressureStrip } from './PressureStrip.js';
import { ResultsDock, useDocked } from './ResultsDock.js';
import { SamplesTable } from './SamplesTable.js';
import { SizeLatencyPanel } from './SizeLatencyPanel.js';
import { onSystemThemeChange, resetRenderTheme, resolvedTheme } from './theme.js';
import { TimeAxis } from './TimeAxis.js';
import { Toolbar } from './Toolbar.js';
import { Tooltip } from './Tooltip.js';

/** Smallest useful height of one latency bucket (px): a one-bucket spike must show and be hoverable. */
const MIN_CELL_PX = 4;
const MAX_ROW_PX = 480;

/**
 * Height of each disk's heat map: a share of the page for few disks, and never less than
 * MIN_CELL_PX per latency bucket shown (the page scrolls rather than squash the cells).
 */
function rowHeight(n: number, latencyRows: number): number {
  const base = n <= 1 ? 340 : n === 2 ? 240 : n === 3 ? 190 : 160;
  return Math.max(base, Math.min(MAX_ROW_PX, latencyRows * MIN_CELL_PX));
}

function useTheme(): void {
  const choice = useUi((s) => s.theme);
  useEffect(() => {
    const apply = (): void => {
      document.documentElement.dataset.theme = resolvedTheme(choice);
      resetRenderTheme();
      scheduler.invalidateMatching();
    };
    apply();
    return onSystemThemeChange(apply);
  }, [choice]);
}

function useGlobalKeys(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if ((e.key !== 'Escape' && e.key !== '?') || e.defaultPrevented) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT')) return;
      // The help open: Esc and ? close it (the dialog's own Esc closes it too), nothing else.
      if (useUi.getState().helpOpen || e.key === '?') {
        showHelp(!useUi.getState().helpOpen && e.key === '?');
        e.preventDefault();
        return;
      }
      if (useData.getState().selection) clearSelection();
      else resetView();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

export function App() {
  useTheme();
  useGlobalKeys();
  const shown = useData((s) => s.shownDevs);
  const disks = useData((s) => s.disks);
  const connection = useUi((s) => s.connection);
  const mode = useData((s) => s.mode);
  const latencyRows = useData((s) => s.latencyRows);
  // A selection's sampled I/Os and a comparison open in the dock (ResultsDock), not down among the panels.
  const docked = useDocked();
  const selected = useData((s) => s.selection !== undefined);
  const byDev = new Map(disks.map((d) => [d.dev, d]));
  const rows: DiskInfo[] = shown.map((dev) => byDev.get(dev) ?? { dev, name: dev, kind: 'request', present: true });
  const h = rowHeight(rows.length, latencyRows);
  return (
    <div className={docked ? 'app app-docked' : 'app'} data-testid="app">
      <Header />
      <KeyboardHelp />
      <HistoryFault />
      <Toolbar />
      <FilterBar />
      <DiskPicker />
      <main>
        <FleetStuck />
        <FleetRanking />
        <section className="heatmaps" aria-label="latency heat maps" data-testid="heatmaps">
          <TimeAxis />
          <PressureStrip />
          {rows.map((d) => (
            <DiskRow key={d.dev} disk={d} height={h} />
          ))}
          {rows.length === 0 && (
            <p className="empty" data-testid="empty">
              {mode === 'snapshot'
                ? 'This snapshot holds no I/O.'
                : connection === 'live'
                  ? 'Connected. Waiting for block I/O…'
                  : 'Waiting for the agent… (or drop a snapshot file here)'}
            </p>
          )}
          <Legend />
        </section>
        <OffsetScatterPanel />
        <div className="panels">
          <ClassBreakdown />
          <CgroupBreakdown />
          <SizeLatencyPanel />
          {!selected && <SamplesTable />}
        </div>
      </main>
      <ResultsDock />
      <Tooltip />
      <DropZone />
      <Notices />
    </div>
  );
}

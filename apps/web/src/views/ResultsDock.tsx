/**
 * Results where the eye is (issue 29): a click on a heat map cell (or a box, or a size cell)
 * lists its sampled I/Os, and an A/B comparison shows its distributions, in a dock fixed to the
 * bottom of the window, not in panels a few thousand pixels down the page. With both open, a tab
 * each; the one opened last is shown. The page keeps the clicked disk's heat map visible above
 * the dock: when the dock would cover it, the page scrolls it up just enough (never under the
 * sticky header). Esc or "close" clears the selection, "Clear" the comparison; with neither the
 * dock closes, and the list's hint is back among the panels.
 */
import { useLayoutEffect, useRef, useState } from 'react';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { ComparePanel } from './ComparePanel.js';
import { SamplesTable } from './SamplesTable.js';

/** Space kept between the disk's heat map and the dock, css px. */
const GAP_PX = 8;

type Tab = 'samples' | 'compare';
const TABS: readonly (readonly [Tab, string])[] = [
  ['samples', 'Sampled I/Os'],
  ['compare', 'Compare (A/B)'],
];

/** Scrolls the window so that `row` sits above the dock's top (and below the header), if the dock covers it. */
function keepAboveDock(row: Element, dockTop: number): void {
  const r = row.getBoundingClientRect();
  if (r.bottom + GAP_PX <= dockTop) return;
  const header = document.querySelector('.app-header')?.getBoundingClientRect().bottom ?? 0;
  // Bottom just above the dock, unless that would push its top under the header.
  const by = Math.min(r.bottom + GAP_PX - dockTop, r.top - header - GAP_PX);
  if (by > 0) window.scrollBy({ top: by, behavior: 'instant' });
}

/** Whether the dock is open: a selection or a comparison stands. */
export function useDocked(): boolean {
  const selected = useData((s) => s.selection !== undefined);
  const comparing = useUi((s) => s.compare !== undefined);
  return selected || comparing;
}

export function ResultsDock() {
  const sel = useData((s) => s.selection);
  const comparing = useUi((s) => s.compare !== undefined);
  const disks = useData((s) => s.disks);
  const dock = useRef<HTMLElement>(null);
  const name = sel ? (disks.find((d) => d.dev === sel.dev)?.name ?? sel.dev) : undefined;
  const key = sel ? `${sel.dev}/${sel.from}/${sel.to}/${sel.bucketLo}/${sel.bucketHi}` : '';
  // What was opened last is shown: the tab follows a new selection or a new comparison (derived
  // while rendering, as React's "storing information from previous renders" pattern does).
  const [tab, setTab] = useState<Tab>('samples');
  const [seen, setSeen] = useState({ key, comparing });
  if (seen.key !== key || seen.comparing !== comparing) {
    setSeen({ key, comparing });
    if (key && key !== seen.key) setTab('samples');
    else if (comparing && !seen.comparing) setTab('compare');
  }
  useLayoutEffect(() => {
    if (!name || !dock.current) return;
    const row = document.querySelector(`[data-testid="disk-row-${CSS.escape(name)}"]`);
    if (row) keepAboveDock(row, dock.current.getBoundingClientRect().top);
  }, [key, name]);
  if (!sel && !comparing) return null;
  const shown: Tab = !sel ? 'compare' : !comparing ? 'samples' : tab;
  return (
    <aside ref={dock} className="results-dock" aria-label="results" data-testid="results-dock" data-tab={shown}>
      {sel && comparing && (
        <div className="results-tabs" role="tablist">
          {TABS.map(([which, label]) => (
            <button
              key={which}
              type="button"
              role="tab"
              aria-selected={shown === which}
              onClick={() => setTab(which)}
              data-testid={`dock-tab-${which}`}
            >
              {label}
            </button>
          ))}
        </div>
      )}
      {shown === 'samples' ? <SamplesTable /> : <ComparePanel />}
    </aside>
  );
}

/**
 * Installs `window.__blkheat` (its shape is BlkheatHook, testhookApi.ts), composed of small
 * readers grouped by what they read: the stores (testhookStore.ts: state, compare, selection,
 * samples, notices; testhookSummary.ts: the visible range's summary), the heat maps' cells,
 * geometry and pixels (testhookHeatmap.ts), the panels as drawn (testhookPanels.ts), incidents
 * (testhookIncidents.ts), the fleet page's "Stuck now" list (testhookFleet.ts) and the render
 * scheduler (testhookRender.ts: idle, render stats). What was drawn where is read from one
 * registry, the scheduler's, which every view's draw records into (render/scheduler.ts).
 *
 * Read-only: it never changes the view. The accessors that answer client coordinates may scroll
 * the page to bring what they name into the viewport: cellCenter (the cell), sizeCellCenter
 * (the size heat map) and offsetScatter (the scatter).
 */
import type { BlkheatHook, TestHookSources } from './testhookApi.js';
import { fleetReads } from './testhookFleet.js';
import { heatmapReads } from './testhookHeatmap.js';
import { incidentReads } from './testhookIncidents.js';
import { panelReads } from './testhookPanels.js';
import { renderReads } from './testhookRender.js';
import { storeReads } from './testhookStore.js';
import { summaryReads } from './testhookSummary.js';

declare global {
  interface Window {
    __blkheat?: BlkheatHook;
  }
}

export function installTestHook(sources: TestHookSources): void {
  const hook: BlkheatHook = {
    version: 1,
    ...renderReads(sources),
    ...storeReads(sources),
    ...summaryReads(),
    ...heatmapReads(),
    ...panelReads(),
    ...incidentReads(),
    ...fleetReads(),
  };
  Object.defineProperty(window, '__blkheat', { value: Object.freeze(hook), configurable: false, writable: false });
}

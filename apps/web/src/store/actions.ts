/**
 * Everything the user can do, as plain functions over the stores and the data layer, so views,
 * keyboard shortcuts and tests call the same code. They write what the user asked for into the
 * UI store (app.ts passes the change on to the data layer) or call the data layer directly
 * (samples, files); they are bound to the data layer app.ts starts (bindActions).
 */
import type { IoSample, LatencyKind } from '@blkheat/shared-types';
import type { ColourNorm, ColourScaleKind } from '../model/colour.js';
import type { TimeRange } from '../model/compare.js';
import { type RankFilterKey, withRankFilter } from '../model/fleetRanking.js';
import { resolvePhase } from '../model/phase.js';
import type { CellSelection, SampleSortKey } from '../model/samples.js';
import { MAX_STUCK_SECONDS, MIN_STUCK_SECONDS } from '../model/stuck.js';
import {
  checkSnapshotSize,
  compareInSnapshot,
  exportSnapshotText,
  sliceSnapshot,
  snapshotFileName,
  snapshotFromFrames,
  snapshotTextWithCompare,
  snapshotWithCompare,
} from '../model/snapshot.js';
import type { Summary } from '../model/summary.js';
import { MAX_SPAN } from '../model/urlstate.js';
import { dragView, fixedView, liveView, panBy, roundView, type ViewState, zoomAt } from '../model/view.js';
import type { AgentClient } from '../net/client.js';
import { apiFetch } from '../net/endpoints.js';
import { parseSnapshotFile } from '../workers/snapshotImport.js';
import type { DataLayer } from '../pipeline/dataLayer.js';
import type { OffsetRequest } from '../pipeline/offsetSamples.js';
import { useData } from './pipelineStore.js';
import { dismissTagged, notify } from './notices.js';
import { type ThemeChoice, type Tool, useUi } from './uiStore.js';

/** What the "retry" button needs of the agent connection. */
type Connection = Pick<AgentClient, 'retryNow'>;

let bound: { readonly data: DataLayer; readonly connection: Connection | undefined } | undefined;

/** app.ts binds the data layer and the agent connection it starts. */
export function bindActions(data: DataLayer, connection: Connection | undefined): void {
  bound = { data, connection };
}

function data(): DataLayer {
  if (!bound) throw new Error('blkheat: an action ran before startApp() bound the data layer');
  return bound.data;
}

export function goLive(span?: number): void {
  const s = useUi.getState();
  if (useData.getState().mode === 'snapshot') return;
  const width = span ?? s.liveSpan;
  useUi.setState({ view: liveView(data().edge(), width), liveSpan: width });
}

/** The live view is the rest state; in a snapshot "reset" shows the whole snapshot. */
export function resetView(): void {
  const d = useData.getState();
  if (d.mode === 'snapshot' && d.snapshot) {
    const r = d.snapshot.range;
    setView(fixedView(r.from, r.to));
  } else {
    goLive();
  }
}

export function setView(v: ViewState): void {
  useUi.setState({ view: v });
}

function current(): ViewState {
  const s = useUi.getState();
  return s.view.following ? liveView(data().edge(), s.view.span) : s.view;
}

export function zoomBy(at: number, factor: number): void {
  setView(zoomAt(current(), at, factor, data().limits()));
}

export function panSeconds(dt: number): void {
  setView(panBy(current(), dt, data().limits()));
}

/** Pans `dt` seconds from `start` (the view when a drag began). */
export function panFrom(start: ViewState, dt: number): void {
  setView(panBy(start, dt, data().limits()));
}

/** Zoom to [a, b) (a drag on the time axis), rounded to whole seconds. */
export function zoomTo(a: number, b: number): void {
  setView(roundView(dragView(a, b, data().limits())));
}

/** The latency phase to show (one the data lacks shows device latency: model/phase.ts). */
export function setKind(choice: LatencyKind): void {
  data().clearSelection();
  useUi.setState({ kindChoice: choice, kind: resolvePhase(choice, useData.getState().submitTiming) });
}

export function setColour(colour: ColourScaleKind): void {
  useUi.setState({ colour });
}

/** Each disk's heat map on its own colour scale, or one scale shared by all. */
export function setNorm(norm: ColourNorm): void {
  useUi.setState({ norm });
}

export function setPercentiles(on: boolean): void {
  useUi.setState({ percentiles: on });
}

/** The stuck I/O threshold, seconds (one of the accepted values: see model/stuck.ts). */
export function setStuckThreshold(seconds: number): void {
  if (!(seconds >= MIN_STUCK_SECONDS && seconds <= MAX_STUCK_SECONDS)) throw new RangeError(`stuck threshold ${seconds} s out of range`);
  useUi.setState({ stuck: seconds });
}

/** Lists the stuck I/Os of `dev` under its row head, or closes the list when it is open. */
export function toggleStuckList(dev: string): void {
  useUi.setState((s) => ({ stuckListOf: s.stuckListOf === dev ? undefined : dev }));
}

export function setTheme(theme: ThemeChoice): void {
  useUi.setState({ theme });
  try {
    localStorage.setItem('blkheat.theme', theme);
  } catch {
    // storage disabled: the choice lasts for this page
  }
}

/** Opens or closes the `?` help (every key and gesture). */
export function showHelp(open: boolean): void {
  useUi.setState({ helpOpen: open });
}

export function setTool(tool: Tool): void {
  useUi.setState({ tool });
}

/**
 * Clicking a class: show only it; clicking it again (or the only one left) shows all. Ctrl/⌘
 * toggles. It replaces a cgroup filter: the data has no class split of cgroups.
 */
export function clickClass(c: string, additive: boolean): void {
  const cur = useUi.getState().classes;
  let next: string[];
  if (additive) next = cur.includes(c) ? cur.filter((x) => x !== c) : [...cur, c];
  else next = cur.length === 1 && cur[0] === c ? [] : [c];
  // Samples listed under the cgroup filter were kept by it: they go with it.
  if (useUi.getState().cgroup !== undefined) data().clearSelection();
  useUi.setState({ classes: next.sort(), cgroup: undefined });
}

export function clearClasses(): void {
  useUi.setState({ classes: [] });
}

/**
 * Clicking a cgroup: every view shows only its I/O (clicking it again shows all). It replaces
 * a class filter (the data has no class split of cgroups); the selected cells' samples go, as
 * they were picked under the other filter. Latency per cgroup is device time only (DiskFrame.cg
 * has no other phase): from another phase the page turns to Device, so that the click filters
 * what is drawn (the filter bar says so); the phase can be chosen again, with the filter shown as
 * not applied.
 */
export function clickCgroup(g: string): void {
  const cur = useUi.getState().cgroup;
  data().clearSelection();
  const next = cur === g ? undefined : g;
  useUi.setState({ cgroup: next, classes: [] });
  if (next !== undefined && useUi.getState().kind !== 'device') setKind('device');
}

export function clearCgroup(): void {
  if (useUi.getState().cgroup === undefined) return;
  data().clearSelection();
  useUi.setState({ cgroup: undefined });
}

/** The disk the cgroup and size panels show. */
export function setPanelDisk(dev: string): void {
  useUi.setState({ panelDisk: dev });
}

/** Shows or hides a disk; the first toggle turns the automatic choice into an explicit one. */
export function toggleDisk(dev: string): void {
  const d = useData.getState();
  const byDev = new Map(d.disks.map((x) => [x.dev, x.name]));
  const shown = d.shownDevs;
  const next = shown.includes(dev) ? shown.filter((x) => x !== dev) : [...shown, dev];
  useUi.setState({ diskChoice: next.map((x) => byDev.get(x) ?? x) });
}

/** Fleet view: shows every disk of a host, or hides them all when they are all shown. */
export function toggleHost(host: string): void {
  const d = useData.getState();
  const mine = d.disks.filter((x) => x.host === host);
  const shown = new Set(d.shownDevs);
  const allShown = mine.every((x) => shown.has(x.dev));
  for (const x of mine) {
    if (allShown) shown.delete(x.dev);
    else shown.add(x.dev);
  }
  useUi.setState({ diskChoice: d.disks.filter((x) => shown.has(x.dev)).map((x) => x.name) });
}

/** Fleet view: shows every disk of a host (a ranked row's click), leaving the other rows as they are. */
export function showHost(host: string): void {
  const d = useData.getState();
  const shown = new Set(d.shownDevs);
  for (const x of d.disks) if (x.host === host) shown.add(x.dev);
  useUi.setState({ diskChoice: d.disks.filter((x) => shown.has(x.dev)).map((x) => x.name) });
}

/** Fleet view: sets one of the ranked table's label filters (empty text clears it). */
export function setRankFilter(key: RankFilterKey, text: string): void {
  useUi.setState((s) => ({ rankFilter: withRankFilter(s.rankFilter, key, text) }));
}

export function autoDisks(): void {
  useUi.setState({ diskChoice: undefined });
}

export function selectCells(sel: CellSelection): void {
  void data().selectCells(sel);
}

export function setOffsetColour(by: 'latency' | 'class'): void {
  useUi.setState({ offsetColour: by });
}

/** A box brushed on the offset scatter: its samples become the selection (listed as they are). */
export function selectScatterSamples(sel: CellSelection, rows: readonly IoSample[], truncated: boolean): void {
  data().showSamples(sel, rows, truncated);
}

/** The offset scatter wants the samples of `r` (the data layer asks only when it changed). */
export function loadOffsetSamples(r: OffsetRequest): void {
  void data().loadOffsetSamples(r);
}

export function clearSelection(): void {
  data().clearSelection();
}

/** The heat maps' plot area was laid out `width` CSS px wide (the resolution follows it). */
export function setPlotWidth(width: number): void {
  useUi.setState({ plotWidth: Math.max(50, Math.round(width)) });
}

export function sortSamplesBy(key: SampleSortKey): void {
  const cur = useUi.getState().sampleSort;
  useUi.setState({ sampleSort: { key, dir: cur.key === key && cur.dir === 'desc' ? 'asc' : 'desc' } });
}

// ---------------------------------------------------------------- files

/** Reads a dropped or picked file as a snapshot; a bad file leaves the page as it was. */
export async function importFile(file: File): Promise<boolean> {
  const sizeProblem = checkSnapshotSize(file.size);
  if (sizeProblem) {
    notify('error', `Cannot import ${file.name}: ${sizeProblem}.`);
    return false;
  }
  return data().whileReadingFile(async () => {
    try {
      const r = await parseSnapshotFile(file);
      if (!r.ok) {
        notify('error', `Cannot import ${file.name}: ${r.message}`);
        return false;
      }
      // The whole snapshot, on its own data.
      const range = r.value.range;
      setView(fixedView(range.from, range.to));
      // The file's compare view, if it has one; a comparison of other times never carries over.
      const compare = compareInSnapshot(r.value);
      useUi.setState({ compare: typeof compare === 'string' ? undefined : compare });
      data().loadSnapshot(r.value, file.name, r.activity);
      notify('info', `Showing snapshot ${file.name} (offline).`, 'snapshot');
      if (typeof compare === 'string') notify('error', `${file.name}: ${compare}`, 'snapshot');
      return true;
    } catch (e) {
      notify('error', `Cannot import ${file.name}: ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
  });
}

/** Reconnects to the agent now instead of waiting out the backoff. */
export function retryConnection(): void {
  bound?.connection?.retryNow();
}

/** Back to live: the snapshot and every notice about it go away. */
export function closeSnapshot(): void {
  if (data().closeSnapshot()) {
    // The snapshot's compare ranges are of its host and times, not of the live agent's.
    useUi.setState({ view: liveView(data().edge(), useUi.getState().liveSpan), compare: undefined });
  }
  dismissTagged('snapshot');
}

export function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The summary of the visible range right now, for an export (summed now if it is not ready). */
export function exportSummary(): Summary | undefined {
  return data().freshSummary();
}

/** The visible range in whole columns (as its summary and an export cover it). */
export function visibleRange(): TimeRange | undefined {
  const s = exportSummary();
  return s ? { from: s.from, to: s.to } : undefined;
}

/**
 * The range exports cover: the visible window in whole columns, widened to the compare ranges
 * (an imported file must hold their frames to show the comparison again).
 */
export function exportRange(): { from: number; to: number } | undefined {
  const r = visibleRange();
  const choice = useUi.getState().compare;
  if (!r || !choice) return r;
  // The ranges as summed (whole steps of their frames) when known, else as chosen.
  const c = useData.getState().compare;
  const summed = c?.choice === choice ? c : undefined;
  const ranges = [r, summed?.baseline ?? choice.baseline, summed?.comparison ?? choice.comparison ?? r];
  return { from: Math.min(...ranges.map((x) => x.from)), to: Math.max(...ranges.map((x) => x.to)) };
}

/**
 * Exports the visible range as the agent's snapshot JSON: from the agent when live (it has
 * the samples), re-cut from the imported file in snapshot mode, or built from the frames the
 * page holds when the agent cannot answer (the note says so).
 */
export async function exportSnapshot(): Promise<void> {
  const range = exportRange();
  const ui = useUi.getState();
  if (!range) {
    notify('error', 'Nothing to export yet.');
    return;
  }
  if (range.to - range.from > MAX_SPAN) {
    notify(
      'error',
      'Export failed: the view and the compared ranges span more than a snapshot may (31 days); clear the comparison or move closer to it.',
    );
    return;
  }
  const compare = ui.compare;
  const snap = data().snapshot;
  if (snap) {
    const cut = snapshotWithCompare(sliceSnapshot(snap, range.from, range.to), compare);
    download(new Blob([exportSnapshotText(cut)], { type: 'application/json' }), snapshotFileName(snap.host.hostname, cut.range.from));
    return;
  }
  const host = ui.agent?.host.hostname ?? 'host';
  await data().whileBusy(async () => {
    try {
      const res = await apiFetch('api/v1/snapshot', { from: range.from, to: range.to });
      // The agent's file as it wrote it, with the compare view the page adds (when one is open).
      const body = compare ? snapshotTextWithCompare(await res.text(), compare) : await res.blob();
      download(new Blob([body], { type: 'application/json' }), snapshotFileName(host, range.from));
    } catch (e) {
      const live = data().live;
      // A fleet's frames asked without queue latency would read as none in a file.
      const lacking = data().heldWithoutQueue ? '; this page holds the fleet’s device latency only, so it saved nothing of its own' : '';
      if (!live.covers(range.from, range.to) || !ui.agent || lacking) {
        notify('error', `Export failed: ${e instanceof Error ? e.message : String(e)}${lacking}`);
        return;
      }
      const built = snapshotWithCompare(
        snapshotFromFrames(
          { agent: ui.agent.version, host: ui.agent.host, schema: data().schema(), disks: useData.getState().disks },
          live.range(range.from, range.to),
          [],
          { from: range.from, to: range.to, step: 1 },
          `built by the dashboard from the frames it held (agent export failed: ${e instanceof Error ? e.message : String(e)}); no samples`,
        ),
        compare,
      );
      download(new Blob([exportSnapshotText(built)], { type: 'application/json' }), snapshotFileName(host, range.from));
      notify('info', 'The agent could not export; saved the frames this page holds instead (no samples).');
    }
  });
}

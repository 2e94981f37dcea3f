/**
 * Everything the user can do, as plain functions over the store and the data manager, so
 * views, keyboard shortcuts and tests call the same code.
 */
import type { LatencyKind } from '@blkheat/shared-types';
import type { ColourNorm, ColourScaleKind } from '../model/colour.js';
import type { CellSelection, SampleSortKey } from '../model/samples.js';
import { checkSnapshotSize, exportSnapshotText, sliceSnapshot, snapshotFileName, snapshotFromFrames } from '../model/snapshot.js';
import { dragView, liveView, panBy, roundView, type ViewState, zoomAt } from '../model/view.js';
import type { AgentClient } from '../net/client.js';
import { apiFetch } from '../net/endpoints.js';
import { parseSnapshotFile } from '../workers/snapshotImport.js';
import { data } from './data.js';
import { dismissTagged, notify, type ThemeChoice, type Tool, useUi } from './store.js';

export function goLive(span?: number): void {
  const s = useUi.getState();
  if (s.mode === 'snapshot') return;
  const width = span ?? s.liveSpan;
  useUi.setState({ view: liveView(data.edge(), width), liveSpan: width });
}

/** The live view is the rest state; in a snapshot "reset" shows the whole snapshot. */
export function resetView(): void {
  const s = useUi.getState();
  if (s.mode === 'snapshot' && s.snapshot) {
    const r = s.snapshot.range;
    setView({ following: false, span: r.to - r.from, from: r.from, to: r.to });
  } else {
    goLive();
  }
}

export function setView(v: ViewState): void {
  useUi.setState({ view: v });
}

function current(): ViewState {
  const s = useUi.getState();
  return s.view.following ? liveView(data.edge(), s.view.span) : s.view;
}

export function zoomBy(at: number, factor: number): void {
  setView(zoomAt(current(), at, factor, data.limits()));
}

export function panSeconds(dt: number): void {
  setView(panBy(current(), dt, data.limits()));
}

/** Zoom to [a, b) (a drag on the time axis), rounded to whole seconds. */
export function zoomTo(a: number, b: number): void {
  setView(roundView(dragView(a, b, data.limits())));
}

export function setKind(kind: LatencyKind): void {
  useUi.setState({ kind, selection: undefined, samples: { status: 'idle', rows: [], truncated: false } });
}

export function setColour(colour: ColourScaleKind): void {
  useUi.setState({ colour });
  data.recolour();
}

/** Each disk's heat map on its own colour scale, or one scale shared by all. */
export function setNorm(norm: ColourNorm): void {
  useUi.setState({ norm });
}

export function setPercentiles(on: boolean): void {
  useUi.setState({ percentiles: on });
}

export function setTheme(theme: ThemeChoice): void {
  useUi.setState({ theme });
  try {
    localStorage.setItem('blkheat.theme', theme);
  } catch {
    // storage disabled: the choice lasts for this page
  }
}

export function setTool(tool: Tool): void {
  useUi.setState({ tool });
}

/** Clicking a class: show only it; clicking it again (or the only one left) shows all. Ctrl/⌘ toggles. */
export function clickClass(c: string, additive: boolean): void {
  const cur = useUi.getState().classes;
  let next: string[];
  if (additive) next = cur.includes(c) ? cur.filter((x) => x !== c) : [...cur, c];
  else next = cur.length === 1 && cur[0] === c ? [] : [c];
  useUi.setState({ classes: next.sort() });
}

export function clearClasses(): void {
  useUi.setState({ classes: [] });
}

/** Shows or hides a disk; the first toggle turns the automatic choice into an explicit one. */
export function toggleDisk(dev: string): void {
  const s = useUi.getState();
  const byDev = new Map(s.disks.map((d) => [d.dev, d.name]));
  const shown = s.shownDevs;
  const next = shown.includes(dev) ? shown.filter((d) => d !== dev) : [...shown, dev];
  useUi.setState({ diskChoice: next.map((d) => byDev.get(d) ?? d) });
}

export function autoDisks(): void {
  useUi.setState({ diskChoice: undefined });
}

export function selectCells(sel: CellSelection): void {
  void data.loadSamples(sel);
}

export function clearSelection(): void {
  useUi.setState({ selection: undefined, samples: { status: 'idle', rows: [], truncated: false } });
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
  data.pending++;
  try {
    const r = await parseSnapshotFile(file);
    if (!r.ok) {
      notify('error', `Cannot import ${file.name}: ${r.message}`);
      return false;
    }
    data.loadSnapshot(r.value, file.name);
    notify('info', `Showing snapshot ${file.name} (offline).`, 'snapshot');
    return true;
  } catch (e) {
    notify('error', `Cannot import ${file.name}: ${e instanceof Error ? e.message : String(e)}`);
    return false;
  } finally {
    data.pending--;
  }
}

/** What the "retry" button needs of the agent connection; app.ts binds the one it starts. */
let connection: Pick<AgentClient, 'retryNow'> | undefined;

export function bindConnection(c: Pick<AgentClient, 'retryNow'> | undefined): void {
  connection = c;
}

/** Reconnects to the agent now instead of waiting out the backoff. */
export function retryConnection(): void {
  connection?.retryNow();
}

/** Back to live: the snapshot and every notice about it go away. */
export function closeSnapshot(): void {
  data.closeSnapshot();
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

/** The range exports cover: the visible window in whole columns. */
export function exportRange(): { from: number; to: number } | undefined {
  const s = data.freshSummary();
  return s ? { from: s.from, to: s.to } : undefined;
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
  const snap = data.snapshot;
  if (snap) {
    const cut = sliceSnapshot(snap, range.from, range.to);
    download(new Blob([exportSnapshotText(cut)], { type: 'application/json' }), snapshotFileName(snap.host.hostname, cut.range.from));
    return;
  }
  const host = ui.agent?.host.hostname ?? 'host';
  data.pending++;
  try {
    const res = await apiFetch('api/v1/snapshot', { from: range.from, to: range.to });
    const blob = await res.blob();
    download(new Blob([blob], { type: 'application/json' }), snapshotFileName(host, range.from));
  } catch (e) {
    const cover = data.live.covers(range.from, range.to);
    if (!cover || !ui.agent) {
      notify('error', `Export failed: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    const built = snapshotFromFrames(
      { agent: ui.agent.version, host: ui.agent.host, schema: data.schema(), disks: ui.disks },
      data.live.range(range.from, range.to),
      [],
      { from: range.from, to: range.to, step: 1 },
      `built by the dashboard from the frames it held (agent export failed: ${e instanceof Error ? e.message : String(e)}); no samples`,
    );
    download(new Blob([exportSnapshotText(built)], { type: 'application/json' }), snapshotFileName(host, range.from));
    notify('info', 'The agent could not export; saved the frames this page holds instead (no samples).');
  } finally {
    data.pending--;
  }
}

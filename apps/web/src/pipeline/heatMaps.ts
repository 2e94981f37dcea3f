/**
 * The heat maps of the data window: per shown disk a HeatMatrix for the chosen latency phase and
 * classes and its percentile track, the latency window (rows shown) and the colour scales
 * (each disk's, fitted to its visible cells, and one shared by every disk). Rebuilt from the
 * window's frames when filters or disks change (no fetch); appended to per live frame.
 * Publishes which disks are shown, how many latency rows, and a version the renderers watch.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import { bucketCount, bucketOfSeconds, compareDev, FLEET_ROW_ID, type Frame } from '@blkheat/shared-types';
import { cgroupInForce } from '../model/cgroups.js';
import { colourDomain, CountScale } from '../model/colour.js';
import type { HeatMatrix, MatrixFilter } from '../model/heatmatrix.js';
import { PercentileTrack } from '../model/percentiles.js';
import { diskKinds } from '../model/phase.js';
import type { HeatMapSlice, SliceStore } from '../store/pipelineStore.js';
import type { UiReader } from '../store/uiStore.js';
import { type DataWindow, filterKey, matrixOf, sameList, type WindowSource } from './bufferedWindow.js';
import type { DataSource } from './source.js';

/** Most disks drawn automatically; more can be picked by hand. */
const AUTO_DISKS = 6;
/** The latency window shows at least this many octaves (powers of two). */
const MIN_Y_OCTAVES = 6;

/** Heat maps built ahead for a window, with the filter and disks they were built for. */
export interface Built {
  readonly filterKey: string;
  readonly devs: readonly string[];
  readonly matrices: Map<string, HeatMatrix>;
}

export interface HeatMapsOptions {
  readonly ui: UiReader;
  readonly store: SliceStore<HeatMapSlice>;
  readonly source: DataSource;
}

export class HeatMaps {
  private readonly ui: UiReader;
  private readonly store: SliceStore<HeatMapSlice>;
  private readonly source: DataSource;

  constructor(options: HeatMapsOptions) {
    this.ui = options.ui;
    this.store = options.store;
    this.source = options.source;
  }

  /** The window's frames, matrices or scales changed: renderers redraw. */
  bump(): void {
    this.store.setState((s) => ({ dataVersion: s.dataVersion + 1 }));
  }

  /** The cgroup filter in force on the heat maps: for every phase the data splits by cgroup (device latency only before protocol 4). */
  private cgroup(): string | undefined {
    const ui = this.ui.getState();
    return cgroupInForce(ui.cgroup, ui.kind, this.store.getState().cgroupPhases);
  }

  /** Each disk's heat map filter (its disk kind decides what a phase reads: phaseHist()), the kinds looked up once. */
  private filters(): (dev: string) => MatrixFilter {
    const ui = this.ui.getState();
    const cgroup = this.cgroup();
    const kindOf = diskKinds(this.store.getState().disks);
    const classes = cgroup === undefined && ui.classes.length > 0 ? new Set(ui.classes) : undefined;
    return (dev) => {
      const diskKind = kindOf(dev);
      return cgroup !== undefined ? { dev, kind: ui.kind, diskKind, cgroup } : { dev, kind: ui.kind, diskKind, classes };
    };
  }

  /** The heat maps' filter as a key: phase, classes, cgroup, and the bio-based disks among `devs` (a disk's kind changes what a phase reads). */
  private key(devs: readonly string[]): string {
    const ui = this.ui.getState();
    const cgroup = this.cgroup();
    const kindOf = diskKinds(this.store.getState().disks);
    const bio = devs.filter((d) => kindOf(d) === 'bio');
    return `${filterKey(ui.kind, cgroup === undefined ? ui.classes : [], cgroup)}|${bio.join(',')}`;
  }

  /**
   * Disks to draw: the user's choice (by name or MAJ:MIN), else every disk with I/O, and a big
   * fleet's fleet row (it has no live frames to say it has I/O: its ranges are read on demand).
   */
  resolveDevs(): string[] {
    const choice = this.ui.getState().diskChoice;
    const disks = this.store.getState().disks;
    const byName = new Map(disks.map((d) => [d.name, d.dev]));
    const known = new Set(disks.map((d) => d.dev));
    let devs: string[];
    if (choice !== undefined) {
      devs = choice.map((x) => byName.get(x) ?? x).filter((d) => known.has(d) || this.source.hasActive(d));
    } else {
      devs = this.source.activeDevs().slice(0, AUTO_DISKS);
      if (known.has(FLEET_ROW_ID)) devs.push(FLEET_ROW_ID);
    }
    return [...new Set(devs)].sort(compareDev);
  }

  /** The filter or the disks to draw changed since the window's heat maps were built. */
  stale(cur: DataWindow): boolean {
    const devs = this.resolveDevs();
    return cur.filterKey !== this.key(devs) || !sameList(cur.devs, devs);
  }

  /** Heat maps for a window about to be installed, built one disk at a time by the caller (`next` until done). */
  buildAhead(w: WindowSource): { built: Built; next: () => boolean } {
    const filterOf = this.filters();
    const devs = this.resolveDevs();
    const built: Built = { filterKey: this.key(devs), devs, matrices: new Map() };
    let i = 0;
    return {
      built,
      next: () => {
        const dev = built.devs[i++];
        if (dev === undefined) return false;
        built.matrices.set(dev, matrixOf(w, filterOf(dev)));
        return true;
      },
    };
  }

  /** Rebuilds matrices, tracks and domains of a window from its frames (`built`: heat maps made for it already). */
  derive(cur: DataWindow, built?: Built): void {
    const filterOf = this.filters();
    const devs = this.resolveDevs();
    cur.filterKey = this.key(devs);
    cur.devs = devs;
    // Heat maps built ahead are used only if the filter and the disks did not change meanwhile.
    const ready = built && built.filterKey === cur.filterKey && sameList(built.devs, devs) ? built.matrices : undefined;
    cur.matrices = new Map();
    cur.tracks = new Map();
    for (const dev of devs) {
      const m = ready?.get(dev) ?? matrixOf(cur, filterOf(dev));
      cur.matrices.set(dev, m);
      cur.tracks.set(dev, new PercentileTrack(m, cur.schema));
    }
    this.fitDomains(cur);
    if (!sameList(this.store.getState().shownDevs, devs)) this.store.setState({ shownDevs: devs });
  }

  /** Adds live frames appended to the window into every heat map (the filter as it is now). */
  appender(cur: DataWindow): (f: Frame) => void {
    const filterOf = this.filters();
    const filters = new Map([...cur.matrices.keys()].map((dev) => [dev, filterOf(dev)]));
    return (f) => {
      for (const [dev, m] of cur.matrices) m.addFrame(f, filters.get(dev) ?? filterOf(dev));
    };
  }

  /** The heat maps reach up to second `to` (seconds complete without a frame: not recorded). */
  extendTo(cur: DataWindow, to: number): void {
    for (const m of cur.matrices.values()) m.ensure(m.columnOf(to - 1));
  }

  /** The oldest second the heat maps still hold (their rings expire the oldest columns). */
  startTime(cur: DataWindow): number {
    let start = cur.from;
    for (const m of cur.matrices.values()) start = Math.max(start, m.startTime);
    return start;
  }

  /** Live frames from `since` on were appended: the latency window and colour scales widen to hold them. */
  widen(cur: DataWindow, since: number): void {
    this.fitDomains(cur, since);
  }

  /** Columns [c0, c1) of the window on screen now. */
  private visibleColumns(cur: DataWindow): [number, number] {
    // The view published to the page (as the summary reads it), not the source's moving edge.
    const v = this.store.getState().visible;
    return [Math.floor(v.from / cur.step), Math.ceil(v.to / cur.step)];
  }

  /**
   * Colour scales from the visible cells: each disk's from its own busiest visible cell,
   * the shared one from the busiest of all. With `since` (a live append) only columns from
   * that second on are looked at and scales only widen; otherwise they are refitted (and may
   * narrow). Returns true when a scale changed (the heat maps recolour).
   */
  fitScales(cur: DataWindow, since?: number): boolean {
    const kind = this.ui.getState().colour;
    const grow = since !== undefined;
    const [v0, c1] = this.visibleColumns(cur);
    const c0 = grow ? Math.max(v0, Math.floor(since / cur.step)) : v0;
    let changed = false;
    let all = 0;
    const scales = new Map<string, CountScale>();
    for (const [dev, m] of cur.matrices) {
      const max = m.maxCell(c0, c1);
      all = Math.max(all, max);
      const old = cur.scales.get(dev);
      const domain = colourDomain(max, old?.max, grow);
      const keep = old && old.max === domain && old.kind === kind;
      scales.set(dev, keep ? old : new CountScale(kind, domain));
      if (!keep) changed = true;
    }
    if (cur.scales.size !== scales.size) changed = true;
    cur.scales = scales;
    const domain = colourDomain(all, cur.scale.max, grow);
    if (domain !== cur.scale.max || cur.scale.kind !== kind) {
      cur.scale = new CountScale(kind, domain);
      changed = true;
    }
    return changed;
  }

  /**
   * Latency window from the data and colour scales from the visible cells; with `since` (live
   * appends) both only widen, looking at the new columns only.
   */
  private fitDomains(cur: DataWindow, since?: number): void {
    const grow = since !== undefined;
    let lo = Infinity;
    let hi = -Infinity;
    for (const m of cur.matrices.values()) {
      const ext = grow ? m.rowExtent(Math.floor(since / cur.step), m.end) : m.rowExtent();
      if (ext) {
        lo = Math.min(lo, ext[0]);
        hi = Math.max(hi, ext[1]);
      }
    }
    if (grow && !Number.isFinite(lo)) {
      this.fitScales(cur, since);
      return;
    }
    if (!Number.isFinite(lo)) {
      lo = bucketOfSeconds(10e-6, cur.schema);
      hi = bucketOfSeconds(100e-3, cur.schema);
    }
    // Pad by at least three quarters of an octave, snap to whole octaves (2^scale buckets), at
    // least MIN_Y_OCTAVES tall: the same latencies at either scale, twice the rows at scale 3.
    const rows = bucketCount(cur.schema);
    const octave = 2 ** cur.schema.scale;
    const pad = (3 * octave) / 4;
    const minRows = MIN_Y_OCTAVES * octave;
    let yLo = Math.max(0, Math.floor((lo - pad) / octave) * octave);
    let yHi = Math.min(rows, Math.ceil((hi + 1 + pad) / octave) * octave);
    while (yHi - yLo < minRows) {
      if (yLo > 0) yLo = Math.max(0, yLo - octave);
      if (yHi - yLo < minRows && yHi < rows) yHi = Math.min(rows, yHi + octave);
      if (yLo === 0 && yHi === rows) break;
    }
    if (grow) {
      yLo = Math.min(yLo, cur.yLo);
      yHi = Math.max(yHi, cur.yHi);
    }
    cur.yLo = yLo;
    cur.yHi = yHi;
    if (this.store.getState().latencyRows !== yHi - yLo) this.store.setState({ latencyRows: yHi - yLo });
    this.fitScales(cur, since);
  }

  /** The colour scale kind changed: new scale objects (bitmaps recolour). */
  recolour(cur: DataWindow): void {
    const kind = this.ui.getState().colour;
    cur.scale = new CountScale(kind, cur.scale.max);
    cur.scales = new Map([...cur.scales].map(([dev, sc]) => [dev, new CountScale(kind, sc.max)]));
  }
}

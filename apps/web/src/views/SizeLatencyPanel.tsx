/**
 * Size × latency of one disk over the visible range (ClassSeries.sz): a heat map of log2 size
 * classes (columns) × device latency buckets (rows), coloured by count with the main heat
 * map's scale rules (model/colour.ts: top colour = busiest cell, log or linear as the toolbar
 * says, the same palette), and the count per size class beside it. A click on a cell lists the
 * sampled I/Os of that size class and latency bucket. Each draw records what it drew (the view
 * and its viewport) in the scheduler's registry: the panel hit-tests through it, and the test
 * hook reads it.
 */
import { type MouseEvent, useEffect, useMemo, useRef, useState } from 'react';
import type { BucketSchema } from '@blkheat/shared-types';
import { colourDomain, CountScale } from '../model/colour.js';
import { apply, invert, timeToCss, bucketToCss, type Viewport } from '../model/coords.js';
import { missingSplitText } from '../model/explain.js';
import { formatBytes, formatCount } from '../model/format.js';
import { bucketBoundsSeconds, bucketWindowOf, formatLatency } from '../model/latency.js';
import { PHASE_WORDS } from '../model/phase.js';
import { sizeCell, sizeClassBytes, type SizeLatency } from '../model/sizeLatency.js';
import { renderLatencyAxis } from '../render/axes.js';
import { paintRamp } from '../render/ramp.js';
import { type DrawFn, DrawnKind, scheduler } from '../render/scheduler.js';
import { paintSizeHistogram, paintSizeLatency, sizeGridViewport } from '../render/sizeLatency.js';
import { useFleetData } from './useFleetData.js';
import { selectCells } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { placed } from './geometry.js';
import { PanelDiskSelect, usePanelDisk } from './PanelDisk.js';
import { paletteFor, renderTheme, resolvedTheme } from './theme.js';

const CELL_W = 52;
const MIN_CELL_H = 4;
const AXIS_W = 58;
const RAMP_W = 56;
const RAMP_H = 8;

/** What the panel draws: the grid of a disk, its latency window and colour scale. */
export interface SizeLatencyView {
  readonly dev: string;
  readonly grid: SizeLatency;
  readonly uLo: number;
  readonly uHi: number;
  readonly scale: CountScale;
}

/** The panel's scheduler key. */
export const SIZE_LATENCY_VIEW = 'size-latency';

/** What the panel drew: its view and the grid's viewport. */
export interface DrawnSizeLatency {
  readonly view: SizeLatencyView;
  readonly vp: Viewport;
}

export const SIZE_LATENCY_DRAWN = new DrawnKind<DrawnSizeLatency, HTMLCanvasElement>('size-latency');

/** The cell (size class, bucket) under a client point of the drawn panel. */
export function sizeCellAt(clientX: number, clientY: number): { s: number; bucket: number } | undefined {
  const d = placed(SIZE_LATENCY_VIEW, SIZE_LATENCY_DRAWN);
  if (!d) return undefined;
  const { view, vp } = d.value;
  const x = clientX - d.rect.left;
  const y = clientY - d.rect.top;
  if (x < 0 || y < 0 || x >= d.rect.width || y >= d.rect.height) return undefined;
  const col = Math.floor(apply(invert(timeToCss(vp)), x));
  const bucket = Math.floor(apply(invert(bucketToCss(vp)), y));
  const s = view.grid.sizes[col];
  return s === undefined || bucket < view.uLo || bucket >= view.uHi ? undefined : { s, bucket };
}

/** Client coordinates of the centre of cell (s, bucket), undefined when it is not drawn. */
export function sizeCellCentre(s: number, bucket: number): { x: number; y: number } | undefined {
  const d = placed(SIZE_LATENCY_VIEW, SIZE_LATENCY_DRAWN);
  if (!d) return undefined;
  const { view, vp } = d.value;
  const col = view.grid.sizes.indexOf(s);
  if (col < 0 || bucket < view.uLo || bucket >= view.uHi) return undefined;
  return { x: d.rect.left + apply(timeToCss(vp), col + 0.5), y: d.rect.top + apply(bucketToCss(vp), bucket + 0.5) };
}

/** The panel's view of `dev` for the current summary, latency window and colour choice. */
function useSizeView(dev: string | undefined): SizeLatencyView | undefined {
  const summary = useData((s) => s.summary);
  const cur = useData((s) => s.window);
  const colour = useUi((s) => s.colour);
  return useMemo(() => {
    if (dev === undefined) return undefined;
    const grid = summary?.sizes.get(dev);
    if (!grid || !cur || grid.sizes.length === 0) return undefined;
    // The main heat maps' latency window, widened to hold every cell (a filter may narrow theirs).
    const [uLo, uHi] = bucketWindowOf(grid.hists, [cur.yLo, cur.yHi]) ?? [cur.yLo, cur.yHi];
    return { dev, grid, uLo, uHi, scale: new CountScale(colour, colourDomain(grid.maxCell)) };
  }, [dev, summary, cur, colour]);
}

function SizeScale({ scale }: { scale: CountScale }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const theme = useUi((s) => resolvedTheme(s.theme));
  useEffect(() => {
    if (ref.current) paintRamp(ref.current, paletteFor(theme), RAMP_W, RAMP_H, window.devicePixelRatio || 1);
  }, [theme]);
  return (
    <span
      className="disk-scale"
      data-testid="size-scale"
      data-max={scale.max}
      title={`Colour scale (${scale.kind}): the top colour is ${formatCount(scale.max, { compact: true })} I/Os per cell, the busiest cell`}
    >
      <canvas ref={ref} aria-hidden="true" />
      <span>≤ {formatCount(scale.max, { compact: true })}/cell</span>
    </span>
  );
}

function SizeGrid({ view }: { view: SizeLatencyView }) {
  const heatRef = useRef<HTMLCanvasElement>(null);
  const histRef = useRef<HTMLCanvasElement>(null);
  const axisRef = useRef<SVGGElement>(null);
  const schema = useData((s) => s.window?.schema ?? s.schema);
  const cols = view.grid.sizes.length;
  const width = Math.max(120, cols * CELL_W);
  const height = Math.min(480, Math.max(200, (view.uHi - view.uLo) * MIN_CELL_H));
  const latest = useRef(view);

  useEffect(() => {
    const draw: DrawFn = (record) => {
      const v = latest.current;
      const ui = useUi.getState();
      const heat = heatRef.current;
      const hist = histRef.current;
      if (!heat || !hist) return;
      const theme = resolvedTheme(ui.theme);
      const vp = sizeGridViewport(v.grid, v.uLo, v.uHi, width, height, ui.dpr);
      const sel = useData.getState().selection;
      const col = sel?.sizeClass !== undefined && sel.dev === v.dev ? v.grid.sizes.indexOf(sel.sizeClass) : -1;
      paintSizeLatency(heat, vp, v.grid, v.scale, paletteFor(theme), {
        selected: sel && col >= 0 ? { col, bucket: sel.bucketLo } : undefined,
        colour: renderTheme(theme).selection,
      });
      paintSizeHistogram(hist, vp, v.grid, renderTheme(theme));
      if (axisRef.current) renderLatencyAxis(axisRef.current, v.uLo, v.uHi, schema, height);
      record(SIZE_LATENCY_DRAWN, heat, { view: v, vp });
    };
    const unregister = scheduler.register(SIZE_LATENCY_VIEW, draw);
    const unsub = [
      useUi.subscribe((s, p) => {
        if (s.theme !== p.theme || s.dpr !== p.dpr) scheduler.invalidate(SIZE_LATENCY_VIEW);
      }),
      useData.subscribe((s, p) => {
        if (s.selection !== p.selection) scheduler.invalidate(SIZE_LATENCY_VIEW);
      }),
    ];
    return () => {
      unregister();
      for (const u of unsub) u();
    };
  }, [width, height, schema]);
  useEffect(() => {
    latest.current = view;
    scheduler.invalidate(SIZE_LATENCY_VIEW);
  }, [view]);

  const [hover, setHover] = useState<{ s: number; bucket: number } | undefined>(undefined);
  const onMove = (e: MouseEvent): void => {
    const cell = sizeCellAt(e.clientX, e.clientY);
    if (cell?.s !== hover?.s || cell?.bucket !== hover?.bucket) setHover(cell);
  };
  const onClick = (e: MouseEvent): void => {
    const cell = sizeCellAt(e.clientX, e.clientY);
    const s = useData.getState().summary;
    const ui = useUi.getState();
    if (!cell || !s) return;
    selectCells({
      dev: view.dev,
      from: s.from,
      to: s.to,
      bucketLo: cell.bucket,
      bucketHi: cell.bucket,
      schema,
      kind: view.grid.kind,
      classes: ui.classes,
      cgroup: ui.cgroup,
      sizeClass: cell.s,
    });
  };
  const sizeLabels = (
    <div className="size-labels" style={{ width }} aria-hidden="true">
      {view.grid.sizes.map((s, i) => (
        <span key={s} style={{ width: CELL_W }}>
          {cols <= 12 || i % 2 === 0 ? formatBytes(sizeClassBytes(s)) : ''}
        </span>
      ))}
    </div>
  );
  return (
    <>
      <div className="size-grid">
        <svg className="y-axis" width={AXIS_W} height={height} aria-hidden="true">
          <g ref={axisRef} transform={`translate(${AXIS_W - 1},0)`} />
        </svg>
        <div>
          <canvas
            ref={heatRef}
            className="size-heat"
            style={{ width, height }}
            data-testid="size-heatmap"
            role="img"
            aria-label={`I/O size × ${PHASE_WORDS[view.grid.kind]}: size classes left to right (≤ ${formatBytes(sizeClassBytes(view.grid.sizes[0] ?? 0))} … ≤ ${formatBytes(
              sizeClassBytes(view.grid.sizes[cols - 1] ?? 0),
            )}), latency bottom to top. Click a cell for its sampled I/Os.`}
            onClick={onClick}
            onMouseMove={onMove}
            onMouseLeave={() => setHover(undefined)}
          />
          {sizeLabels}
        </div>
        <div>
          <canvas
            ref={histRef}
            className="size-hist"
            style={{ width, height }}
            data-testid="size-histogram"
            role="img"
            aria-label={`I/Os per size class: ${view.grid.sizes.map((s, i) => `≤ ${formatBytes(sizeClassBytes(s))} ${formatCount(view.grid.counts[i] ?? 0)}`).join(', ')}`}
          />
          {sizeLabels}
        </div>
        <span className="muted size-hist-max" data-testid="size-hist-max">
          ≤ {formatCount(Math.max(0, ...view.grid.counts))} I/Os per size
        </span>
      </div>
      <p className="muted size-hover" data-testid="size-hover" aria-live="polite">
        {hover
          ? `${sizeCellText(hover.s, hover.bucket, sizeCell(view.grid, hover.s, hover.bucket), schema)}: click to list its sampled I/Os`
          : 'Point at a cell for its count; click it for its sampled I/Os.'}
      </p>
    </>
  );
}

/** The selected size cell in words (the samples panel names it too). */
export function sizeCellText(s: number, bucket: number, count: number | undefined, schema: BucketSchema): string {
  const [lo, hi] = bucketBoundsSeconds(bucket, schema);
  return `≤ ${formatBytes(sizeClassBytes(s))} · ${formatLatency(lo)} – ${formatLatency(hi)}${count !== undefined ? ` · ${formatCount(count)} I/Os` : ''}`;
}

export function SizeLatencyPanel() {
  const dev = usePanelDisk();
  const fromFleet = useFleetData();
  const view = useSizeView(dev);
  const summary = useData((s) => s.summary);
  const cgroup = useUi((s) => s.cgroup);
  const classes = useUi((s) => s.classes);
  const kind = useUi((s) => s.kind);
  const grid = dev !== undefined ? summary?.sizes.get(dev) : undefined;
  const sel = useData((s) => s.selection);
  const selCount =
    view && sel?.sizeClass !== undefined && sel.dev === view.dev ? sizeCell(view.grid, sel.sizeClass, sel.bucketLo) : undefined;
  return (
    <section className="panel size-latency" aria-labelledby="size-title" data-testid="size-latency">
      <header className="panel-head">
        <h2 id="size-title">Size × latency</h2>
        <PanelDiskSelect testId="size-disk" />
        <span className="muted">
          visible range · {PHASE_WORDS[grid?.kind ?? kind]} · {classes.length > 0 ? classes.join(', ') : 'all classes'}
        </span>
        {grid && grid.kind !== kind && (
          <span className="tag tag-warn" data-testid="size-device-only">
            device time: this panel has no per-size {PHASE_WORDS[kind]} data
          </span>
        )}
        {cgroup !== undefined && (
          <span className="tag tag-warn" data-testid="size-not-split">
            not split by cgroup: every cgroup’s I/O
          </span>
        )}
        {view && <SizeScale scale={view.scale} />}
      </header>
      {view ? (
        <>
          <SizeGrid view={view} />
          {sel?.sizeClass !== undefined && view && sel.dev === view.dev && (
            <p className="muted" data-testid="size-selected">
              Selected: {sizeCellText(sel.sizeClass, sel.bucketLo, selCount, sel.schema)} (sampled I/Os below)
            </p>
          )}
        </>
      ) : (
        <p className="muted" data-testid="size-empty">
          {grid && grid.framesWithSz === 0 && summary?.disks.get(dev ?? '')?.n
            ? missingSplitText('sizes', fromFleet)
            : 'No I/O in this range.'}
        </p>
      )}
    </section>
  );
}

/**
 * Offset vs time: the panel disk's sampled I/Os in the visible range, x = completion time on
 * the heat maps' time axis (same range, same width), y = first sector (linear, byte offsets on
 * the axis), coloured by latency (the heat map palette over the latencies of the points drawn,
 * scatterLatencyScale) or by class. More sampled I/Os than the bound: the agent spreads the
 * points over the range (the slowest always in); an agent that cannot sends the oldest, which
 * the panel says, shading the time it did not load.
 * Dragging a box selects the points inside it: the samples table lists exactly them. Each draw
 * records what it drew (viewport, samples, colouring) in the scheduler's registry (the test hook
 * reads it).
 */
import { type PointerEvent, useEffect, useMemo, useRef, useState } from 'react';
import { type IoSample, overflowIndex } from '@blkheat/shared-types';
import { FLEET_NO_SAMPLES } from '../model/explain.js';
import { formatBytes, formatClock, formatCount } from '../model/format.js';
import { formatLatency, uToSeconds } from '../model/latency.js';
import { alignCeil, alignFloor } from '../model/resolution.js';
import {
  boxFromCss,
  classColours,
  inBox,
  type OffsetBox,
  type OffsetViewport,
  SECTOR_BYTES,
  sampleClasses,
  sampleTime,
  scaleLabels,
  scatterLatencyScale,
  sectorExtent,
} from '../model/offsetScatter.js';
import { renderOffsetAxis, renderTimeAxis } from '../render/axes.js';
import { paintOffsetScatter, type ScatterColouring } from '../render/offsetScatter.js';
import { paintRamp } from '../render/ramp.js';
import { DrawnKind, scheduler } from '../render/scheduler.js';
import { loadOffsetSamples, selectScatterSamples, setOffsetColour } from '../store/actions.js';
import { type OffsetSamplesState, useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { Y_AXIS_WIDTH } from './DiskRow.js';
import { PanelDiskSelect, usePanelDisk } from './PanelDisk.js';
import { useFleetData } from './useFleetData.js';
import { paletteFor, renderTheme, resolvedTheme } from './theme.js';

const HEIGHT = 220;
const AXIS_H = 24;
const RAMP_W = 120;
const RAMP_H = 8;
/** The scatter's scheduler key. */
export const OFFSET_SCATTER_VIEW = 'offset-scatter';

/** What the scatter drew: its time × sector viewport, the samples it was given and how they were coloured. */
export interface DrawnScatter {
  readonly vp: OffsetViewport;
  readonly rows: readonly IoSample[];
  readonly colouring: ScatterColouring;
}

export const OFFSET_SCATTER_DRAWN = new DrawnKind<DrawnScatter, HTMLCanvasElement>('offset-scatter');

/**
 * Asks for the samples of the panel disk in the visible range whenever one of them changes.
 * Following live, the range is taken in whole columns of the heat maps (their step): the scatter
 * is asked again when a column starts, not every second. At an hour's 10 s columns that is one
 * question (and one repaint of up to 2,000 points) in ten; its newest points are then at most a
 * column old, as the heat map's newest column is one still filling (bench/web, issue 29 item 6).
 */
function useOffsetSamples(dev: string | undefined): OffsetSamplesState | undefined {
  const visible = useData((s) => s.visible);
  const step = useData((s) => (visible.following ? (s.window?.step ?? 1) : 1));
  const mode = useData((s) => s.mode);
  const snapshot = useData((s) => s.snapshot);
  const connection = useUi((s) => s.connection);
  const kind = useUi((s) => s.kind);
  const classes = useUi((s) => s.classes);
  const cgroup = useUi((s) => s.cgroup);
  const from = alignFloor(Math.floor(visible.from), step);
  const to = alignCeil(Math.ceil(visible.to), step);
  useEffect(() => {
    if (dev !== undefined) loadOffsetSamples({ dev, from, to, kind, classes, cgroup });
  }, [dev, from, to, kind, classes, cgroup, mode, snapshot, connection]);
  const offset = useData((s) => s.offset);
  return offset && offset.dev === dev ? offset : undefined;
}

/** The latency ramp and its ends: the fitted scale's bucket edges (`title`: the slowest point's own latency). */
function LatencyKey({ labels, maxNs }: { labels: readonly [string, string]; maxNs: number | undefined }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const theme = useUi((s) => resolvedTheme(s.theme));
  useEffect(() => {
    if (ref.current) paintRamp(ref.current, paletteFor(theme), RAMP_W, RAMP_H, window.devicePixelRatio || 1);
  }, [theme]);
  return (
    <span
      className="offset-key"
      data-testid="offset-legend"
      data-by="latency"
      title={maxNs !== undefined ? `colours span the points drawn; the slowest took ${formatLatency(maxNs / 1e9)}` : undefined}
    >
      <span data-testid="offset-legend-lo">{labels[0]}</span>
      <canvas ref={ref} aria-hidden="true" />
      <span data-testid="offset-legend-hi">{labels[1]}</span>
    </span>
  );
}

function ClassKey({ colours }: { colours: ReadonlyMap<string, string> }) {
  return (
    <span className="offset-key" data-testid="offset-legend" data-by="class">
      {[...colours].map(([c, css]) => (
        <span key={c} className="offset-class" data-class={c}>
          <span className="swatch" style={{ background: css }} aria-hidden="true" />
          {c}
        </span>
      ))}
    </span>
  );
}

export function OffsetScatterPanel() {
  const dev = usePanelDisk();
  const offset = useOffsetSamples(dev);
  const by = useUi((s) => s.offsetColour);
  const width = useUi((s) => s.plotWidth);
  const cur = useData((s) => s.window);
  const schema = useData((s) => s.window?.schema ?? s.schema);
  const visible = useData((s) => s.visible);
  const kind = useUi((s) => s.kind);
  const rows = useMemo(() => offset?.rows ?? [], [offset]);
  const colours = useMemo(() => classColours(sampleClasses(rows)), [rows]);
  const [lo, hi] = useMemo(() => sectorExtent(rows), [rows]);
  const scale = useMemo(
    () => scatterLatencyScale(rows, kind, schema, visible.from, visible.to),
    [rows, kind, schema, visible.from, visible.to],
  );
  // Nothing drawn with a latency: the ramp reads as the heat maps' window (no point takes a colour from it).
  const uLo = scale?.uLo ?? cur?.yLo ?? 0;
  const uHi = scale?.uHi ?? cur?.yHi ?? 1;
  const labels: [string, string] = scale
    ? scaleLabels(scale, schema)
    : [formatLatency(uToSeconds(uLo, schema)), formatLatency(uToSeconds(uHi, schema))];
  const canvas = useRef<HTMLCanvasElement>(null);
  const yAxis = useRef<SVGGElement>(null);
  const xAxis = useRef<SVGGElement>(null);
  const brush = useRef<{ x0: number; y0: number; box: OffsetBox } | undefined>(undefined);
  // Only the oldest came (an agent that cannot spread): the time after the last one was not loaded.
  const oldestOnly = (offset?.truncated ?? false) && offset?.pick === 'first';
  const lastTime = rows.length > 0 ? rows.reduce((m, s) => Math.max(m, sampleTime(s)), -Infinity) : undefined;
  const latest = useRef({ dev, rows, lo, hi, by, colours, uLo, uHi, schema, width, oldestOnly, lastTime });

  const viewport = (): OffsetViewport => {
    const v = useData.getState().visible;
    const l = latest.current;
    return { from: v.from, to: v.to, sectorLo: l.lo, sectorHi: l.hi, width: l.width, height: HEIGHT, dpr: useUi.getState().dpr };
  };

  useEffect(() => {
    const unregister = scheduler.register(OFFSET_SCATTER_VIEW, (record) => {
      const el = canvas.current;
      const l = latest.current;
      if (!el || l.width <= 0) return;
      const ui = useUi.getState();
      const theme = resolvedTheme(ui.theme);
      const rt = renderTheme(theme);
      const vp = viewport();
      const colouring: ScatterColouring =
        l.by === 'latency'
          ? { by: 'latency', kind: ui.kind, uLo: l.uLo, uHi: l.uHi, schema: l.schema, palette: paletteFor(theme) }
          : { by: 'class', kind: ui.kind, colours: l.colours };
      const sel = useData.getState().selection;
      const box =
        sel?.sectors && sel.dev === l.dev ? { from: sel.from, to: sel.to, sectorLo: sel.sectors.lo, sectorHi: sel.sectors.hi } : undefined;
      paintOffsetScatter(el, vp, l.rows, colouring, {
        box,
        brush: brush.current?.box,
        unloadedFrom: l.oldestOnly ? l.lastTime : undefined,
        colour: rt.selection,
        muted: rt.muted,
        gap: rt.gap,
      });
      if (yAxis.current) renderOffsetAxis(yAxis.current, vp.sectorLo, vp.sectorHi, HEIGHT);
      if (xAxis.current) renderTimeAxis(xAxis.current, vp.from, vp.to, vp.width, 'bottom', useData.getState().window?.step ?? 1);
      record(OFFSET_SCATTER_DRAWN, el, { vp, rows: l.rows, colouring });
    });
    const unsub = [
      useUi.subscribe((s, p) => {
        if (s.theme !== p.theme || s.dpr !== p.dpr || s.kind !== p.kind) scheduler.invalidate(OFFSET_SCATTER_VIEW);
      }),
      useData.subscribe((s, p) => {
        if (s.selection !== p.selection || s.visible !== p.visible || s.window !== p.window) scheduler.invalidate(OFFSET_SCATTER_VIEW);
      }),
    ];
    return () => {
      unregister();
      for (const u of unsub) u();
    };
  }, []);
  useEffect(() => {
    latest.current = { dev, rows, lo, hi, by, colours, uLo, uHi, schema, width, oldestOnly, lastTime };
    scheduler.invalidate(OFFSET_SCATTER_VIEW);
  }, [dev, rows, lo, hi, by, colours, uLo, uHi, schema, width, oldestOnly, lastTime]);

  const [hint, setHint] = useState<string | undefined>(undefined);
  const fromFleet = useFleetData();
  const local = (e: PointerEvent): { x: number; y: number } => {
    const r = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    return { x: Math.max(0, Math.min(r.width, e.clientX - r.left)), y: Math.max(0, Math.min(r.height, e.clientY - r.top)) };
  };
  const onDown = (e: PointerEvent): void => {
    if (e.button !== 0) return;
    const p = local(e);
    (e.currentTarget as HTMLCanvasElement).setPointerCapture(e.pointerId);
    brush.current = { x0: p.x, y0: p.y, box: boxFromCss(viewport(), p.x, p.y, p.x, p.y) };
  };
  const onMove = (e: PointerEvent): void => {
    const b = brush.current;
    if (!b) return;
    const p = local(e);
    b.box = boxFromCss(viewport(), b.x0, b.y0, p.x, p.y);
    setHint(boxText(b.box));
    scheduler.invalidate(OFFSET_SCATTER_VIEW);
  };
  const onUp = (e: PointerEvent): void => {
    const b = brush.current;
    brush.current = undefined;
    setHint(undefined);
    if (!b || dev === undefined) return;
    const p = local(e);
    if (Math.abs(p.x - b.x0) < 2 && Math.abs(p.y - b.y0) < 2) return void scheduler.invalidate(OFFSET_SCATTER_VIEW);
    const box = boxFromCss(viewport(), b.x0, b.y0, p.x, p.y);
    const ui = useUi.getState();
    selectScatterSamples(
      {
        dev,
        from: box.from,
        to: box.to,
        bucketLo: 0,
        // Every latency: the box is in time × offset.
        bucketHi: overflowIndex(schema),
        schema,
        kind: ui.kind,
        classes: ui.classes,
        cgroup: ui.cgroup,
        sectors: { lo: box.sectorLo, hi: box.sectorHi },
      },
      latest.current.rows.filter((s) => inBox(s, box)),
      offset?.truncated ?? false,
    );
  };

  const shown = rows.filter((s) => s.sector !== null).length;
  const spread = offset?.truncated === true && offset.pick === 'spread';
  const matched = offset?.matched;
  return (
    <section className="panel offset-scatter" aria-labelledby="offset-title" data-testid="offset-scatter">
      <header className="panel-head">
        <h2 id="offset-title">Offset vs time</h2>
        <PanelDiskSelect testId="offset-disk" />
        <span className="muted" data-testid="offset-count">
          {offset === undefined || (offset.status === 'loading' && rows.length === 0)
            ? 'loading sampled I/Os…'
            : spread
              ? `${formatCount(shown)} drawn of ${matched !== undefined ? `${formatCount(matched)} sampled I/Os` : 'more sampled I/Os'} · visible range`
              : `${formatCount(shown)} sampled I/O${shown === 1 ? '' : 's'} · visible range`}
        </span>
        {spread && (
          <span className="tag tag-info" data-testid="offset-spread">
            spread evenly over the range, the slowest always in; zoom in to see all
          </span>
        )}
        {oldestOnly && (
          <span className="tag tag-warn" data-testid="offset-truncated">
            oldest {formatCount(rows.length)} shown
            {lastTime !== undefined ? ` (to ${formatClock(Math.floor(lastTime))}; later ones shaded, not loaded)` : ''}: this agent cannot
            spread them over the range; zoom in to see all
          </span>
        )}
        <span className="offset-colour" role="radiogroup" aria-label="colour points by">
          {(['latency', 'class'] as const).map((k) => (
            <button
              key={k}
              type="button"
              role="radio"
              aria-checked={by === k}
              className={by === k ? 'on' : undefined}
              onClick={() => setOffsetColour(k)}
              data-testid={`offset-by-${k}`}
            >
              {k}
            </button>
          ))}
        </span>
        {by === 'latency' ? <LatencyKey labels={labels} maxNs={scale?.maxNs} /> : <ClassKey colours={colours} />}
      </header>
      {offset?.status === 'error' && (
        <p className="error" role="alert">
          Could not load samples: {offset.error}
        </p>
      )}
      <div className="offset-plot" style={{ gridTemplateColumns: `${Y_AXIS_WIDTH}px ${width}px` }}>
        <svg className="y-axis" width={Y_AXIS_WIDTH} height={HEIGHT} aria-hidden="true">
          <g ref={yAxis} transform={`translate(${Y_AXIS_WIDTH - 1},0)`} />
        </svg>
        <canvas
          ref={canvas}
          style={{ width, height: HEIGHT }}
          data-testid="offset-canvas"
          role="img"
          aria-label={`Sampled I/Os of the visible range: completion time left to right, byte offset on the disk bottom to top (${formatBytes(lo * SECTOR_BYTES)} – ${formatBytes(hi * SECTOR_BYTES)}). Drag a box to list the I/Os inside it.`}
          onPointerDown={onDown}
          onPointerMove={onMove}
          onPointerUp={onUp}
        />
        <span />
        <svg width={width} height={AXIS_H} aria-hidden="true">
          <g ref={xAxis} />
        </svg>
      </div>
      <p className="muted" data-testid="offset-hint" aria-live="polite">
        {hint ??
          (fromFleet && rows.length === 0 ? FLEET_NO_SAMPLES : undefined) ??
          'Drag a box to list the sampled I/Os inside it (flushes have no offset and are not drawn).'}
      </p>
    </section>
  );
}

/** A brushed box in words (the samples panel names it too). */
export function boxText(b: OffsetBox): string {
  return `${formatClock(Math.floor(b.from))}–${formatClock(Math.ceil(b.to))} · offsets ${formatBytes(b.sectorLo * SECTOR_BYTES)} – ${formatBytes((b.sectorHi + 1) * SECTOR_BYTES)}`;
}

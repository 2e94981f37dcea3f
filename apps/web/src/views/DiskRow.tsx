/**
 * One disk: latency axis | heat map ("no data" bands under the cells, percentile lines and an
 * overlay for cursor/brush/selection above) | sideways histogram of the visible range sharing
 * the heat map's latency axis. The head line says the same in words: I/Os and rate, the
 * histogram's percentiles, this heat map's colour scale, and hints. Drawing goes through the
 * scheduler; React only lays the elements out.
 */
import { useEffect, useRef } from 'react';
import type { DiskInfo } from '@blkheat/shared-types';
import { type CountScale, PALETTE_SIZE, paletteCss } from '../model/colour.js';
import { apply } from '../model/coords.js';
import { formatCompact, formatCount, formatShare } from '../model/format.js';
import { formatLatency } from '../model/latency.js';
import { allInLowestBucket, type QuantileValue } from '../model/percentiles.js';
import { renderLatencyAxis, renderShareAxis } from '../render/axes.js';
import { prepareCanvas, renderContext, type RenderContext } from '../render/contract.js';
import { HeatLayers } from '../render/heatLayers.js';
import { drawHistogram } from '../render/histogram.js';
import { scheduler } from '../render/scheduler.js';
import { data } from '../store/data.js';
import { useHover, useUi } from '../store/store.js';
import { heatmapGeometry, registerGeometry } from './geometry.js';
import { bindHeatmapGestures } from './interactions.js';
import { paletteFor, renderTheme, resolvedTheme } from './theme.js';
import { type Size, useElementSize } from './useElementSize.js';

export const Y_AXIS_WIDTH = 58;
export const HIST_WIDTH = 200;

const RAMP_W = 56;
const RAMP_H = 8;

/** This heat map's colour scale in the head line: a small ramp and its top count. */
function DiskScale({ name, scale, shared }: { name: string; scale: CountScale | undefined; shared: boolean }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const theme = useUi((s) => resolvedTheme(s.theme));
  useEffect(() => {
    const c = ref.current;
    if (!c) return;
    const ctx = prepareCanvas(c, RAMP_W, RAMP_H, window.devicePixelRatio || 1);
    if (!ctx) return;
    const lut = paletteFor(theme);
    for (let i = 1; i < PALETTE_SIZE; i++) {
      ctx.fillStyle = paletteCss(lut, i);
      ctx.fillRect(((i - 1) / (PALETTE_SIZE - 1)) * RAMP_W, 0, RAMP_W / (PALETTE_SIZE - 1) + 0.5, RAMP_H);
    }
  }, [theme]);
  const max = scale ? formatCompact(scale.max) : '–';
  // The ramp is always rendered (its effect paints it once per theme).
  return (
    <span
      className="disk-scale"
      data-testid={`disk-scale-${name}`}
      data-max={scale?.max}
      title={
        shared
          ? `One colour scale for every disk (${scale?.kind ?? ''}): the top colour is ${max} I/Os per cell`
          : `This heat map's own colour scale (${scale?.kind ?? ''}): the top colour is ${max} I/Os per cell, its busiest visible cell`
      }
    >
      <canvas ref={ref} aria-hidden="true" />
      <span>
        ≤ {max}/cell{shared ? ' (shared)' : ''}
      </span>
    </span>
  );
}

/** The histogram's percentiles as text ("p50 47.1 µs · p90 …"), coloured like its marks. */
function quantileText(qs: readonly QuantileValue[]): string {
  return qs.map((q) => `${q.label} ${formatLatency(q.seconds)}`).join(' · ');
}

/** The heat map's render context right now (shared by drawing, hit-testing and the overlay). */
function heatContext(width: number, height: number): RenderContext | undefined {
  const cur = data.current;
  if (!cur || width <= 0 || height <= 0) return undefined;
  const v = useUi.getState().view;
  return renderContext({ from: v.from, to: v.to, uLo: cur.yLo, uHi: cur.yHi, width, height, dpr: data.dpr }, cur.step);
}

export function DiskRow({ disk, height }: { disk: DiskInfo; height: number }) {
  const dev = disk.dev;
  const heatRef = useRef<HTMLCanvasElement>(null);
  const gapsRef = useRef<HTMLCanvasElement>(null);
  const linesRef = useRef<HTMLCanvasElement>(null);
  const overlayRef = useRef<HTMLCanvasElement>(null);
  const histRef = useRef<HTMLCanvasElement>(null);
  const yAxisRef = useRef<SVGGElement>(null);
  const shareAxisRef = useRef<SVGGElement>(null);
  const plotRef = useRef<HTMLDivElement>(null);
  const plotSize = useRef<Size>({ width: 0, height: 0 });
  useElementSize(plotRef, (w, h) => {
    plotSize.current = { width: w, height: h };
    scheduler.invalidateMatching('');
  });
  useUi((s) => s.summaryVersion); // re-render the header line when the summary changes
  const summary = data.summary();
  const kind = useUi((s) => s.kind);
  const norm = useUi((s) => s.norm);

  useEffect(() => {
    const layers =
      heatRef.current && linesRef.current ? new HeatLayers(heatRef.current, linesRef.current, gapsRef.current ?? undefined) : undefined;
    const size = plotSize;
    let yKey = '';

    const drawHeat = (): void => {
      const cur = data.current;
      const rc = heatContext(size.current.width, size.current.height);
      if (!layers || !cur || !rc) return;
      const ui = useUi.getState();
      const themeName = resolvedTheme(ui.theme);
      const theme = renderTheme(themeName);
      layers.draw(
        rc,
        cur.matrices.get(dev),
        cur.tracks.get(dev),
        {
          palette: paletteFor(themeName),
          scale: data.scaleFor(dev, cur) ?? cur.scale,
          percentiles: ui.percentiles,
          lineColours: theme.percentiles,
          gapColour: theme.gap,
        },
        data.known(cur),
      );
      const key = `${JSON.stringify(cur.schema)}/${cur.yLo}/${cur.yHi}/${rc.viewport.height}`;
      if (key !== yKey && yAxisRef.current) {
        yKey = key;
        renderLatencyAxis(yAxisRef.current, cur.yLo, cur.yHi, cur.schema, rc.viewport.height);
      }
    };

    const drawOverlay = (): void => {
      const canvas = overlayRef.current;
      const rc = heatContext(size.current.width, size.current.height);
      const cur = data.current;
      if (!canvas || !rc || !cur) return;
      const ctx = prepareCanvas(canvas, rc.viewport.width, rc.viewport.height, rc.viewport.dpr);
      if (!ctx) return;
      const { width: w, height: h } = rc.viewport;
      ctx.clearRect(0, 0, w, h);
      const ui = useUi.getState();
      const theme = renderTheme(resolvedTheme(ui.theme));
      const hv = useHover.getState();
      // Synced cursor: the same time on every disk.
      if (hv.t !== undefined && !hv.drag) {
        const x = Math.round(apply(rc.time, hv.t)) + 0.5;
        ctx.strokeStyle = theme.foreground;
        ctx.globalAlpha = 0.5;
        ctx.beginPath();
        ctx.moveTo(x, 0);
        ctx.lineTo(x, h);
        ctx.stroke();
        ctx.globalAlpha = 1;
      }
      if (hv.dev === dev && hv.col !== undefined && hv.bucket !== undefined && !hv.drag) {
        const x0 = apply(rc.time, hv.col * cur.step);
        const x1 = apply(rc.time, (hv.col + 1) * cur.step);
        const y0 = apply(rc.bucket, hv.bucket + 1);
        const y1 = apply(rc.bucket, hv.bucket);
        ctx.strokeStyle = theme.foreground;
        ctx.lineWidth = 1.5;
        ctx.strokeRect(Math.round(x0) - 0.5, Math.round(y0) - 0.5, Math.max(2, x1 - x0) + 1, Math.max(2, y1 - y0) + 1);
      }
      const sel = ui.selection;
      if (sel && sel.dev === dev && sel.kind === ui.kind) {
        const x0 = apply(rc.time, sel.from);
        const x1 = apply(rc.time, sel.to);
        const y0 = apply(rc.bucket, sel.bucketHi + 1);
        const y1 = apply(rc.bucket, sel.bucketLo);
        ctx.strokeStyle = theme.selection;
        ctx.lineWidth = 2;
        ctx.setLineDash([4, 2]);
        ctx.strokeRect(x0 - 1, y0 - 1, Math.max(2, x1 - x0) + 2, Math.max(2, y1 - y0) + 2);
        ctx.setLineDash([]);
      }
      const drag = hv.drag;
      if (drag && (drag.kind === 'zoom' || drag.dev === dev)) {
        const x0 = apply(rc.time, Math.min(drag.t0, drag.t1));
        const x1 = apply(rc.time, Math.max(drag.t0, drag.t1));
        ctx.fillStyle = theme.selection;
        ctx.strokeStyle = theme.selection;
        ctx.lineWidth = 1;
        if (drag.kind === 'zoom') {
          ctx.globalAlpha = 0.18;
          ctx.fillRect(x0, 0, x1 - x0, h);
          ctx.globalAlpha = 1;
          ctx.strokeRect(Math.round(x0) + 0.5, 0.5, Math.round(x1 - x0), h - 1);
        } else if (drag.kind === 'box') {
          const y0 = apply(rc.bucket, Math.floor(Math.max(drag.u0, drag.u1)) + 1);
          const y1 = apply(rc.bucket, Math.floor(Math.min(drag.u0, drag.u1)));
          ctx.globalAlpha = 0.18;
          ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
          ctx.globalAlpha = 1;
          ctx.strokeRect(x0 + 0.5, y0 + 0.5, x1 - x0, y1 - y0);
        }
      }
    };

    const drawHist = (): void => {
      const canvas = histRef.current;
      const cur = data.current;
      const s = data.summary();
      const h = size.current.height;
      if (!canvas || !cur || !s || h <= 0) return;
      const ctx = prepareCanvas(canvas, HIST_WIDTH, h, data.dpr);
      if (!ctx) return;
      const ui = useUi.getState();
      const hv = useHover.getState();
      const d = s.perDisk.get(dev);
      drawHistogram(
        ctx,
        { from: 0, to: 1, uLo: cur.yLo, uHi: cur.yHi, width: HIST_WIDTH, height: h, dpr: data.dpr },
        {
          hist: d?.hist ?? [],
          total: d?.total ?? 0,
          quantiles: d?.quantiles ?? [],
          maxShare: s.maxShare,
          highlight: hv.dev === dev && hv.bucket !== undefined ? hv.bucket : undefined,
        },
        renderTheme(resolvedTheme(ui.theme)),
      );
      if (shareAxisRef.current) renderShareAxis(shareAxisRef.current, s.maxShare, HIST_WIDTH);
    };

    const unregister = [
      scheduler.register(`heat:${dev}`, drawHeat),
      scheduler.register(`overlay:${dev}`, drawOverlay),
      scheduler.register(`hist:${dev}`, drawHist),
      registerGeometry(dev, () => {
        const el = overlayRef.current;
        const rc = heatContext(size.current.width, size.current.height);
        const cur = data.current;
        if (!el || !rc || !cur) return undefined;
        return { rect: el.getBoundingClientRect(), rc, step: cur.step };
      }),
      useHover.subscribe((s, p) => {
        if (s.t !== p.t || s.dev !== p.dev || s.col !== p.col || s.bucket !== p.bucket || s.drag !== p.drag) {
          scheduler.invalidate(`overlay:${dev}`);
          if ((s.dev === dev || p.dev === dev) && (s.bucket !== p.bucket || s.dev !== p.dev)) scheduler.invalidate(`hist:${dev}`);
        }
      }),
      useUi.subscribe((s, p) => {
        if (s.summaryVersion !== p.summaryVersion || s.theme !== p.theme) scheduler.invalidate(`hist:${dev}`);
        if (s.selection !== p.selection) scheduler.invalidate(`overlay:${dev}`);
        if (s.colour !== p.colour || s.norm !== p.norm) scheduler.invalidate(`heat:${dev}`);
      }),
    ];
    const el = overlayRef.current;
    const unbind = el ? bindHeatmapGestures(el, dev, () => heatmapGeometry(dev)) : undefined;
    return () => {
      for (const u of unregister) u();
      unbind?.();
    };
  }, [dev]);

  const d = summary?.perDisk.get(dev);
  const ds = summary?.disks.get(dev);
  // A rate over the seconds with data: not the future, not before the agent started, not outages.
  const covered = summary?.covered ?? 0;
  const rate = ds && covered > 0 ? `${formatCount(ds.n / covered)}/s` : '–/s';
  const p99 = d?.quantiles.find((q) => q.label === 'p99');
  const quantiles = d?.quantiles ?? [];
  // Queue latency all ≤ 1 µs: dispatched straight from the plug (start and issue share a clock).
  const straight = kind === 'queue' && disk.kind !== 'bio' && d !== undefined && allInLowestBucket(d.hist);
  return (
    <section className="disk-row" data-testid={`disk-row-${disk.name}`} data-dev={dev} aria-label={`Disk ${disk.name}`}>
      <header className="disk-row-head">
        <span className="disk-name">{disk.name}</span>
        <span className="disk-dev">{dev}</span>
        {disk.kind === 'bio' && (
          <span className="tag" title="bio-based device: latency is queue → complete; no queue latency">
            bio
          </span>
        )}
        {!disk.present && (
          <span className="tag tag-warn" title="This device went away; its history stays.">
            gone
          </span>
        )}
        {kind === 'queue' && disk.kind === 'bio' && <span className="tag tag-warn">no queue latency for bio-based disks</span>}
        <span className="disk-stats" data-testid={`disk-stats-${disk.name}`} title={`rate over the ${formatCount(covered)} s with data`}>
          {ds ? `${formatCount(ds.n)} I/Os · ${rate}` : 'no I/O'}
          {p99 ? ` · p99 ${formatLatency(p99.seconds)}` : ''}
          {ds && ds.dropped > 0 ? ` · ${formatCount(ds.dropped)} not sampled` : ''}
          {ds && ds.missed > 0 ? ` · ${formatCount(ds.missed)} start unseen (${formatShare(ds.missed / Math.max(1, ds.n))})` : ''}
          {ds && ds.untimed > 0 ? ` · ${formatCount(ds.untimed)} untimed` : ''}
          {ds && ds.failed > 0 ? ` · ${formatCount(ds.failed)} failed` : ''}
          {ds && ds.passthrough > 0 ? ` · ${formatCount(ds.passthrough)} passthrough` : ''}
        </span>
        {straight && (
          <span
            className="tag tag-info"
            data-testid={`queue-hint-${disk.name}`}
            title="Every request went from its start to the driver within 1 µs: nothing waited in the block layer. Device latency shows where the time went."
          >
            all queue latency ≤ 1 µs: requests went straight to the device
          </span>
        )}
        <DiskScale name={disk.name} scale={data.scaleFor(dev)} shared={norm === 'shared'} />
        <span className="disk-quantiles" data-testid={`disk-quantiles-${disk.name}`}>
          {quantiles.map((q) => (
            <span key={q.label} className={`q q-${q.label.replace('.', '')}`}>
              {q.label} {formatLatency(q.seconds)}
            </span>
          ))}
        </span>
      </header>
      <div className="disk-row-body" style={{ gridTemplateRows: `${height}px 20px` }}>
        <svg className="y-axis" width={Y_AXIS_WIDTH} height={height} aria-hidden="true">
          <g ref={yAxisRef} transform={`translate(${Y_AXIS_WIDTH - 1},0)`} />
        </svg>
        <div className="plot" ref={plotRef}>
          <canvas ref={gapsRef} className="gaps" data-testid={`gaps-${disk.name}`} aria-hidden="true" />
          <canvas ref={heatRef} className="heat" data-testid={`heatmap-${disk.name}`} aria-hidden="true" />
          <canvas ref={linesRef} className="lines" aria-hidden="true" />
          <canvas
            ref={overlayRef}
            className="overlay"
            tabIndex={0}
            role="img"
            data-testid={`heatmap-overlay-${disk.name}`}
            aria-label={`${kind} latency heat map of ${disk.name}: time left to right, latency bottom to top. Drag to zoom, click a cell for its I/Os, arrow keys move the cell cursor, Enter lists its I/Os.`}
          />
        </div>
        <canvas
          ref={histRef}
          className="hist"
          data-testid={`histogram-${disk.name}`}
          aria-label={`latency histogram of ${disk.name} for the visible range: ${
            d && d.total > 0 ? `${formatCount(d.total)} I/Os; ${quantileText(quantiles)}` : 'no I/O'
          }`}
          role="img"
        />
        <svg className="share-axis" width={HIST_WIDTH} height={20} aria-hidden="true">
          <g ref={shareAxisRef} />
        </svg>
      </div>
    </section>
  );
}

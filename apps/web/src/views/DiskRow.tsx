/**
 * One disk: latency axis | heat map ("no data" bands under the cells, percentile lines and an
 * overlay for cursor/brush/selection above) | sideways histogram of the visible range sharing
 * the heat map's latency axis. The head line says the same in words: I/Os and rate, the
 * histogram's percentiles, this heat map's colour scale, and hints. React only lays the
 * elements out; useDiskDrawing keeps the canvases drawn (through the scheduler).
 */
import { useEffect, useMemo, useRef } from 'react';
import type { DiskInfo } from '@blkheat/shared-types';
import type { CountScale } from '../model/colour.js';
import { formatCount, formatRate, formatShare, formatSpan } from '../model/format.js';
import { cgroupInForce } from '../model/cgroups.js';
import { allInLowestBucket, formatQuantile, labelledQuantile, quantilesText } from '../model/percentiles.js';
import { PHASE_WORDS, phaseMissingOnBio } from '../model/phase.js';
import { submitWaitText } from '../model/submitWait.js';
import { EXPLAIN } from '../model/explain.js';
import { paintRamp } from '../render/ramp.js';
import { scheduler } from '../render/scheduler.js';
import { useData } from '../store/pipelineStore.js';
import { shownQuantiles, windowScale } from '../store/shownWindow.js';
import { useUi } from '../store/uiStore.js';
import { stuckOf } from './incidents.js';
import { StuckBadge, StuckList } from './StuckIo.js';
import { paletteFor, resolvedTheme } from './theme.js';
import { type DiskElements, useDiskDrawing } from './useDiskDrawing.js';
import { type Size, useElementSize } from './useElementSize.js';
import { AgentLink } from './AgentLink.js';

export const Y_AXIS_WIDTH = 58;
export const HIST_WIDTH = 200;
/** Height of the throughput strip (four lanes: IOPS, MB/s, in flight, oldest in flight), CSS px. */
export const TPUT_HEIGHT = 80;

const RAMP_W = 56;
const RAMP_H = 8;

/** This heat map's colour scale in the head line: a small ramp and its top count. */
function DiskScale({ name, scale, shared }: { name: string; scale: CountScale | undefined; shared: boolean }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const theme = useUi((s) => resolvedTheme(s.theme));
  useEffect(() => {
    if (ref.current) paintRamp(ref.current, paletteFor(theme), RAMP_W, RAMP_H, window.devicePixelRatio || 1);
  }, [theme]);
  const max = scale ? formatCount(scale.max, { compact: true }) : '–';
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

export function DiskRow({ disk, height }: { disk: DiskInfo; height: number }) {
  const dev = disk.dev;
  const heatRef = useRef<HTMLCanvasElement>(null);
  const gapsRef = useRef<HTMLCanvasElement>(null);
  const linesRef = useRef<HTMLCanvasElement>(null);
  const overlayRef = useRef<HTMLCanvasElement>(null);
  const histRef = useRef<HTMLCanvasElement>(null);
  const tputRef = useRef<HTMLCanvasElement>(null);
  const tputLabelsRef = useRef<HTMLCanvasElement>(null);
  const yAxisRef = useRef<SVGGElement>(null);
  const shareAxisRef = useRef<SVGGElement>(null);
  const plotRef = useRef<HTMLDivElement>(null);
  const plotSize = useRef<Size>({ width: 0, height: 0 });
  useElementSize(plotRef, (w, h) => {
    plotSize.current = { width: w, height: h };
    scheduler.invalidateMatching('');
  });
  const elements = useMemo<DiskElements>(
    () => ({
      heat: heatRef,
      gaps: gapsRef,
      lines: linesRef,
      overlay: overlayRef,
      hist: histRef,
      tput: tputRef,
      tputLabels: tputLabelsRef,
      tputHeight: TPUT_HEIGHT,
      yAxis: yAxisRef,
      shareAxis: shareAxisRef,
      plotSize,
      histWidth: HIST_WIDTH,
    }),
    [],
  );
  useDiskDrawing(dev, elements);
  useData((s) => s.summaryVersion); // the head line shows the scales refitted when a summary run ends
  const summary = useData((s) => s.summary);
  const rankSamples = useData((s) => s.rankSamples);
  const schema = useData((s) => s.schema);
  const kind = useUi((s) => s.kind);
  const norm = useUi((s) => s.norm);
  // What the row shows of the window and the newest frame, selected: a live frame (every second)
  // re-renders it only when these change, not for each new window.
  const scale = useData((s) => windowScale(s.window, dev, norm));
  const cgroupPhases = useData((s) => s.cgroupPhases);
  const cgroup = useUi((s) => cgroupInForce(s.cgroup, s.kind, cgroupPhases));
  const threshold = useUi((s) => s.stuck);
  // The newest live frame while it shows this disk stuck (else undefined: no re-render per frame).
  const lastFrame = useData((s) => (stuckOf(s.lastFrame, s.mode, dev, threshold) ? s.lastFrame : undefined));
  const listOpen = useUi((s) => s.stuckListOf === dev);
  const connection = useUi((s) => s.connection);
  // Judged on the newest live frame: loud while an I/O hangs, quiet again once it completed.
  const stuck = stuckOf(lastFrame, 'live', dev, threshold);

  const d = summary?.perDisk.get(dev);
  const ds = summary?.disks.get(dev);
  // A rate over the whole visible range the agent recorded (idle seconds too; not the future, not
  // before the agent started, not outages), saying over how long, and the busiest step's beside it.
  // Written as the throughput strip writes IOPS (3 significant digits: a quiet disk's 0.4/s is not "0/s").
  const over = summary?.windowSeconds ?? 0;
  const perSecond = (n: number): string => (over > 0 ? `${formatRate(n / over)}/s over ${formatSpan(over)}` : '–/s');
  const busiest = summary?.peaks.get(dev);
  const peak = busiest ? ` · peak ${formatRate(busiest.rate)}/s${busiest.step !== 1 ? ` (${formatSpan(busiest.step)} steps)` : ''}` : '';
  // Under a cgroup filter the count is the cgroup's (its heat map's total), the disk's beside it.
  const cgCount = cgroup !== undefined ? (d?.total ?? 0) : undefined;
  const cgs = summary?.cgroups.get(dev);
  const noCgData = cgroup !== undefined && cgs !== undefined && cgs.framesWithIo > 0 && cgs.framesWithCg === 0;
  // Bounds from the histogram, exact where sampled I/Os give the latency at the rank.
  const quantiles = shownQuantiles({ summary, rankSamples, schema }, dev);
  const p99 = quantiles.find((q) => q.label === 'p99');
  // Whatever the phase on screen: the application waited mostly for a request, not for the device.
  const waitNote = summary?.submitWait.get(dev);
  // Queue latency all ≤ 1 µs: dispatched straight from the plug (start and issue share a clock).
  const straight = kind === 'queue' && disk.kind !== 'bio' && d !== undefined && allInLowestBucket(d.hist);
  return (
    <section
      className={stuck ? 'disk-row disk-row-stuck' : 'disk-row'}
      data-testid={`disk-row-${disk.name}`}
      data-dev={dev}
      data-stuck={stuck ? 'true' : 'false'}
      aria-label={`Disk ${disk.name}`}
    >
      <header className="disk-row-head">
        <span className="disk-name">{disk.name}</span>
        {stuck && (
          <StuckBadge
            name={disk.name}
            dev={dev}
            stuck={stuck}
            open={listOpen}
            stale={connection !== 'live' && lastFrame ? lastFrame.ts + lastFrame.step : undefined}
          />
        )}
        {/* In a fleet view `dev` is the fleet's own id, not a device number: not shown. */}
        {disk.host === undefined && <span className="disk-dev">{dev}</span>}
        {disk.link && (
          <AgentLink href={disk.link} host={disk.host ?? disk.name} testId={`agent-link-${disk.name}`} why="per-I/O drill-down" />
        )}
        {disk.kind === 'bio' && (
          <span
            className="tag"
            title="bio-based device: timed bio submission → completion (its total is its device latency); no queue or submit phase"
          >
            bio
          </span>
        )}
        {!disk.present && (
          <span className="tag tag-warn" title="This device went away; its history stays.">
            gone
          </span>
        )}
        {phaseMissingOnBio(kind) && disk.kind === 'bio' && (
          <span className="tag tag-warn" data-testid={`no-phase-${disk.name}`}>
            no {PHASE_WORDS[kind]} for bio-based disks
          </span>
        )}
        {waitNote && (
          <span
            className="tag tag-warn"
            data-testid={`submit-wait-${disk.name}`}
            data-total-p99={waitNote.totalP99.seconds}
            data-submit-p99={waitNote.submitP99.seconds}
            title="Over the visible range, the p99 of the wait for a request (bio submission → request allocation: a frozen queue, QoS throttling, no free tag) is at least half the p99 of the total latency the application sees: the time is spent before the device. Submit wait (toolbar) shows it."
          >
            {submitWaitText(waitNote, disk.name)}
          </span>
        )}
        {noCgData && (
          <span className="tag tag-warn" data-testid={`no-cgroup-data-${disk.name}`}>
            no per-cgroup data in this range (older agent): not drawn under the cgroup filter
          </span>
        )}
        <span
          className="disk-stats"
          data-testid={`disk-stats-${disk.name}`}
          data-window-seconds={over}
          title={`${EXPLAIN.rate} ${EXPLAIN.percentile}`}
        >
          {cgCount !== undefined
            ? `${formatCount(cgCount)} I/Os of the cgroup · ${perSecond(cgCount)} (disk: ${ds ? formatCount(ds.n) : 0})`
            : ds
              ? `${formatCount(ds.n)} I/Os · ${perSecond(ds.n)}${peak}`
              : 'no I/O'}
          {p99 ? ` · ${labelledQuantile(p99)}` : ''}
          {ds && ds.dropped > 0 && (
            <span data-testid={`disk-unsampled-${disk.name}`} title={EXPLAIN.notSampled}>
              {` · ${formatCount(ds.dropped)} without a sample record`}
            </span>
          )}
          {ds && ds.missed > 0 && (
            <span
              title={EXPLAIN.startUnseen}
            >{` · ${formatCount(ds.missed)} start unseen (${formatShare(ds.missed / Math.max(1, ds.n))})`}</span>
          )}
          {ds && ds.untimed > 0 && (
            <span data-testid={`disk-untimed-${disk.name}`} title={EXPLAIN.untimed}>
              {` · ${formatCount(ds.untimed)} untimed`}
            </span>
          )}
          {ds && ds.failed > 0 ? ` · ${formatCount(ds.failed)} failed` : ''}
          {ds && ds.passthrough > 0 && <span title={EXPLAIN.passthrough}>{` · ${formatCount(ds.passthrough)} passthrough`}</span>}
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
        <DiskScale name={disk.name} scale={scale} shared={norm === 'shared'} />
        <span className="disk-quantiles" data-testid={`disk-quantiles-${disk.name}`} title={EXPLAIN.percentile}>
          {quantiles.map((q) => (
            <span key={q.label} className={`q q-${q.label.replace('.', '')}`} data-kind={q.kind} data-seconds={q.seconds}>
              {q.label} {formatQuantile(q)}
            </span>
          ))}
        </span>
      </header>
      {stuck && listOpen && lastFrame && <StuckList name={disk.name} stuck={stuck} thresholdS={threshold} frameTs={lastFrame.ts} />}
      <div className="disk-row-body" style={{ gridTemplateRows: `${height}px ${TPUT_HEIGHT}px` }}>
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
            aria-label={`${PHASE_WORDS[kind]} heat map of ${disk.name}: time left to right, latency bottom to top. Drag to zoom, click a cell for its I/Os, arrow keys move the cell cursor, Enter lists its I/Os.`}
          />
        </div>
        <canvas
          ref={histRef}
          className="hist"
          data-testid={`histogram-${disk.name}`}
          aria-label={`${PHASE_WORDS[kind]} histogram of ${disk.name} for the visible range: ${
            d && d.total > 0 ? `${formatCount(d.total)} I/Os; ${quantilesText(quantiles)}` : 'no I/O'
          }`}
          role="img"
        />
        <div className="tput" style={{ height: TPUT_HEIGHT }}>
          <canvas
            ref={tputRef}
            className="tput-bars"
            data-testid={`throughput-${disk.name}`}
            role="img"
            aria-label={`IOPS, MB/s, I/Os in flight and the age of the oldest of them on ${disk.name} per heat map column, on the heat map's time axis`}
          />
          <canvas ref={tputLabelsRef} className="tput-labels" aria-hidden="true" />
        </div>
        <svg className="share-axis" width={HIST_WIDTH} height={20} aria-hidden="true">
          <g ref={shareAxisRef} />
        </svg>
      </div>
    </section>
  );
}

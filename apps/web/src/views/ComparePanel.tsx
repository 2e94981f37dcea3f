/**
 * Compare (A/B): a baseline range against a comparison range (pinned, or the visible range), per
 * disk and op class: both latency distributions overlaid (each normalised to its own count), the
 * percentiles baseline → comparison with the signed delta, and the difference of the shares per
 * bucket on a diverging scale. Lays the rows out; compareCharts.ts keeps their canvases drawn.
 */
import { useEffect, useMemo, useRef } from 'react';
import { ALL_CLASSES, type CompareDisk, type CompareRow } from '../model/compare.js';
import { formatCount, formatDateTime, formatShareDelta, formatSince, formatSpan } from '../model/format.js';
import { EXPLAIN } from '../model/explain.js';
import { formatLatency } from '../model/latency.js';
import { formatQuantile } from '../model/percentiles.js';
import { PHASE_WORDS } from '../model/phase.js';
import { paintDivergingRamp } from '../render/ramp.js';
import { scheduler } from '../render/scheduler.js';
import { clearCompare, compareWithView, setBaselineFromView, setComparisonFromView } from '../store/compareActions.js';
import type { ComparedRange } from '../store/pipelineStore.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { compareViewKey, DIFFERENCE_HEIGHT, OVERLAY_HEIGHT, useCompareCharts } from './compareCharts.js';
import { type Size, useElementSize } from './useElementSize.js';

const RAMP_W = 120;
const RAMP_H = 8;

/** The class part of test ids and labels ("all" for the row of every class). */
export function compareClassId(c: string): string {
  return c === ALL_CLASSES ? 'all' : c;
}

function RangeText({ which, range, follows }: { which: string; range: ComparedRange | undefined; follows?: boolean }) {
  return (
    <span
      className={`compare-range compare-range-${which}`}
      data-testid={`compare-${which}-range`}
      data-from={range?.from}
      data-to={range?.to}
      data-step={range?.step}
    >
      <strong>{which}</strong>{' '}
      {range
        ? `${formatDateTime(range.from)} – ${formatSince(range.to, range.from)} (${formatSpan(range.to - range.from)}${range.step > 1 ? `, ${range.step} s steps` : ''})`
        : '…'}
      {follows ? <span className="muted"> · the view</span> : null}
    </span>
  );
}

function DiffLegend({ max }: { max: number }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const theme = useUi((s) => s.theme);
  useEffect(() => {
    if (ref.current) paintDivergingRamp(ref.current, RAMP_W, RAMP_H, window.devicePixelRatio || 1);
  }, [theme]);
  return (
    <span className="compare-legend-diff" title="comparison − baseline, each as a share of its own I/Os, per latency bucket">
      <span className="num">{formatShareDelta(-max)}</span>
      <canvas ref={ref} aria-hidden="true" />
      <span className="num">{formatShareDelta(max)}</span>
    </span>
  );
}

function Row({ dev, name, row }: { dev: string; name: string; row: CompareRow }) {
  const overlay = useRef<HTMLCanvasElement>(null);
  const difference = useRef<HTMLCanvasElement>(null);
  const charts = useRef<HTMLDivElement>(null);
  const size = useRef<Size>({ width: 0, height: 0 });
  const key = compareViewKey(dev, row.c);
  useElementSize(charts, (w, h) => {
    size.current = { width: w, height: h };
    scheduler.invalidate(key);
  });
  useCompareCharts(dev, row.c, overlay, difference, size);
  const id = `${name}-${compareClassId(row.c)}`;
  const label = row.c === ALL_CLASSES ? 'all classes' : row.c;
  return (
    <div className="compare-row" data-testid={`compare-row-${id}`}>
      <div className="compare-row-head">
        <span className="compare-class">{label}</span>
        <span className="muted num" data-testid={`compare-counts-${id}`}>
          {formatCount(row.baseline.total)} → {formatCount(row.comparison.total)} I/Os
        </span>
      </div>
      <table className="grid compare-deltas">
        <tbody>
          {row.deltas.map((d) => (
            <tr key={d.label} data-testid={`compare-delta-${id}-${d.label}`} data-delta={d.delta}>
              <th scope="row">{d.label}</th>
              <td className="num" title={EXPLAIN.percentile}>
                {formatQuantile(d.baseline)}
              </td>
              <td aria-hidden="true">→</td>
              <td className="num" title={EXPLAIN.percentile}>
                {formatQuantile(d.comparison)}
              </td>
              <td
                className={`num delta ${d.delta === undefined ? '' : d.delta > 0 ? 'slower' : d.delta < 0 ? 'faster' : ''}`}
                title="The difference of the two bucket tops: the change itself is within a bucket of it (±0: the same bucket)"
              >
                {formatLatency(d.delta, { signed: true })}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="compare-charts" ref={charts}>
        <canvas
          ref={overlay}
          role="img"
          data-testid={`compare-overlay-${id}`}
          style={{ height: OVERLAY_HEIGHT }}
          aria-label={`latency distributions of ${name}, ${label}: baseline filled, comparison outlined, each as a share of its own I/Os`}
        />
        <canvas
          ref={difference}
          role="img"
          data-testid={`compare-diff-${id}`}
          style={{ height: DIFFERENCE_HEIGHT }}
          aria-label={`comparison minus baseline share per latency bucket of ${name}, ${label}: red bars up where the comparison has more, blue down where it has less`}
        />
      </div>
    </div>
  );
}

function Disk({ disk, name }: { disk: CompareDisk; name: string }) {
  return (
    <section className="compare-disk" data-testid={`compare-disk-${name}`} aria-label={`compare ${name}`}>
      <header className="compare-disk-head">
        <strong>{name}</strong>
        <span className="compare-key">
          <span className="swatch-baseline" aria-hidden="true" /> baseline <span className="swatch-comparison" aria-hidden="true" />{' '}
          comparison
        </span>
        <DiffLegend max={disk.maxDiff} />
      </header>
      {disk.rows.map((r) => (
        <Row key={r.c} dev={disk.dev} name={name} row={r} />
      ))}
    </section>
  );
}

export function ComparePanel() {
  const choice = useUi((s) => s.compare);
  const state = useData((s) => s.compare);
  const disks = useData((s) => s.disks);
  const names = useMemo(() => new Map(disks.map((d) => [d.dev, d.name])), [disks]);
  if (!choice) return null;
  const follows = choice.comparison === undefined;
  return (
    <section className="panel compare" aria-labelledby="compare-title" data-testid="compare-panel" data-status={state?.status}>
      <header className="panel-head">
        <h2 id="compare-title">Compare (A/B)</h2>
        <RangeText which="baseline" range={state?.baseline} />
        <span aria-hidden="true">vs</span>
        <RangeText which="comparison" range={state?.comparison} follows={follows} />
        <span className="muted">{state ? PHASE_WORDS[state.kind] : 'latency'}, each range normalised to its own I/Os</span>
        <span className="compare-actions">
          <button
            type="button"
            onClick={setBaselineFromView}
            data-testid="compare-set-baseline"
            title="The visible range becomes the baseline"
          >
            View as baseline
          </button>
          <button
            type="button"
            onClick={setComparisonFromView}
            data-testid="compare-set-comparison"
            title="Pin the visible range as the comparison (it stays when the view moves on)"
          >
            View as comparison
          </button>
          {!follows && (
            <button
              type="button"
              onClick={compareWithView}
              data-testid="compare-follow"
              title="Compare the baseline with whatever is visible"
            >
              Compare with the view
            </button>
          )}
          <button type="button" className="link" onClick={clearCompare} data-testid="compare-clear">
            close
          </button>
        </span>
      </header>
      {state?.status === 'error' ? (
        <p className="notice-inline error" data-testid="compare-error">
          Cannot compare: {state.error}
        </p>
      ) : !state || state.status === 'loading' ? (
        <p className="muted" data-testid="compare-loading">
          {state?.waitingFor ? `Waiting for ${state.waitingFor}…` : 'Reading the two ranges…'}
        </p>
      ) : state.disks.length === 0 ? (
        <p className="muted">No I/O in either range.</p>
      ) : (
        state.disks.map((d) => <Disk key={d.dev} disk={d} name={names.get(d.dev) ?? d.dev} />)
      )}
    </section>
  );
}

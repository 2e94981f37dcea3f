/**
 * A fleet view's ranked table (added after 0.4.0): the worst host × disk rows of the visible
 * range by p99 device latency, as the fleet server answered (Prometheus ranks; the page draws),
 * with p99.9, I/Os, errors, the oldest I/O in flight, untimed I/Os and a p99 sparkline per row.
 * Label filters (job, instance glob, disk glob, class) narrow it and go into the URL. A click on
 * a row shows that host's heat map rows (the host picker's rows) and scrolls to them; each row
 * links to its host's own agent. Fleet page only: an agent's page ranks its disks in the header
 * (WorstDisks).
 */
import { useEffect, useRef, useState } from 'react';
import { type DiskInfo, type RankedDisk, rankedCellTexts } from '@blkheat/shared-types';
import { formatClock } from '../model/format.js';
import { RANKING_FILTER_KEYS, rankFilterProblem, type RankFilterKey, sparkScale } from '../model/fleetRanking.js';
import { paintLineSpark } from '../render/spark.js';
import { setRankFilter, showHost } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { renderTheme, resolvedTheme } from './theme.js';
import { AgentLink } from './AgentLink.js';

const SPARK_W = 96;
const SPARK_H = 18;

const PLACEHOLDER: Readonly<Record<RankFilterKey, string>> = {
  job: 'job',
  instance: 'host glob: db-*',
  disk: 'disk glob: nvme*',
  class: 'class: Read',
};

function LineSpark({ values, lo, hi }: { values: readonly (number | null)[]; lo: number; hi: number }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const theme = useUi((s) => resolvedTheme(s.theme));
  useEffect(() => {
    const size = { width: SPARK_W, height: SPARK_H, dpr: window.devicePixelRatio || 1 };
    if (ref.current) paintLineSpark(ref.current, values, lo, hi, size, renderTheme(theme).bar);
  }, [values, lo, hi, theme]);
  return <canvas ref={ref} className="spark rank-spark" aria-hidden="true" />;
}

/**
 * One filter input: applied on Enter or when it loses focus (one question per filter, not per
 * key). Keyed by its applied value, so a filter set elsewhere (a link) starts it afresh.
 */
function FilterInput({ k, value }: { k: RankFilterKey; value: string }) {
  const [text, setText] = useState(value);
  const problem = text.trim() === '' ? undefined : rankFilterProblem(k, text.trim());
  const apply = (): void => {
    if (problem === undefined && text.trim() !== value) setRankFilter(k, text);
  };
  return (
    <input
      type="search"
      className={problem ? 'rank-filter invalid' : 'rank-filter'}
      value={text}
      placeholder={PLACEHOLDER[k]}
      aria-label={`ranking filter: ${k}`}
      title={problem ?? `${k}: ${k === 'instance' || k === 'disk' ? 'a glob (* any characters, ? one)' : 'exact'}; Enter applies`}
      data-testid={`rank-filter-${k}`}
      onChange={(e) => setText(e.target.value)}
      onBlur={apply}
      onKeyDown={(e) => {
        if (e.key === 'Enter') apply();
      }}
    />
  );
}

interface RowProps {
  readonly r: RankedDisk;
  readonly i: number;
  readonly scale: { lo: number; hi: number } | undefined;
  readonly onPick: (host: string) => void;
}

function Row({ r, i, scale, onPick }: RowProps) {
  const t = rankedCellTexts(r);
  return (
    <tr
      className="rank-row"
      data-testid={`rank-row-${i}`}
      data-instance={r.instance}
      data-disk={r.disk}
      data-p99={r.p99}
      onClick={() => onPick(r.instance)}
      title={`Show ${r.instance}'s rows`}
    >
      <td className="num muted">{i + 1}</td>
      <th scope="row">
        {r.instance}/{r.disk}
      </th>
      <td className="num" data-testid={`rank-p99-${i}`}>
        {t.p99}
      </td>
      <td className="num" data-testid={`rank-p999-${i}`}>
        {t.p999}
      </td>
      <td className="num" data-testid={`rank-ios-${i}`}>
        {t.ios}
      </td>
      <td className={r.errors > 0 ? 'num class-errors' : 'num muted'} data-testid={`rank-errors-${i}`}>
        {t.errors}
      </td>
      <td className="num" data-testid={`rank-inflight-${i}`}>
        {t.oldestInflight}
      </td>
      <td className={r.untimed > 0 ? 'num' : 'num muted'} data-testid={`rank-untimed-${i}`}>
        {t.untimed}
      </td>
      <td>{r.spark && scale ? <LineSpark values={r.spark} lo={scale.lo} hi={scale.hi} /> : null}</td>
      <td>{r.link && <AgentLink href={r.link} host={r.instance} testId={`rank-link-${i}`} />}</td>
    </tr>
  );
}

/** The first drawn heat map row of `host`, if any. */
function hostRow(host: string, shown: readonly string[], disks: readonly DiskInfo[]): Element | null {
  const dev = shown.find((d) => disks.find((x) => x.dev === d)?.host === host);
  return dev === undefined ? null : document.querySelector(`.disk-row[data-dev="${CSS.escape(dev)}"]`);
}

/** Scrolls to the first row of the host a ranked row's click showed: now, or once it is drawn. */
export function useScrollToHost(): (host: string) => void {
  const pending = useRef<string | undefined>(undefined);
  const shown = useData((s) => s.shownDevs);
  const disks = useData((s) => s.disks);
  useEffect(() => {
    const el = pending.current === undefined ? null : hostRow(pending.current, shown, disks);
    if (!el) return;
    el.scrollIntoView({ block: 'start' });
    pending.current = undefined;
  }, [shown, disks]);
  return (host) => {
    const el = hostRow(host, shown, disks);
    if (el) el.scrollIntoView({ block: 'start' });
    else pending.current = host;
  };
}

export function FleetRanking() {
  const state = useData((s) => s.fleetRanking);
  const filter = useUi((s) => s.rankFilter);
  const scrollTo = useScrollToHost();
  if (!state) return null;
  const pick = (host: string): void => {
    showHost(host);
    scrollTo(host);
  };
  const r = state.ranking;
  const scale = r ? sparkScale(r) : undefined;
  return (
    <section
      className="panel rank-panel"
      aria-label="worst disks of the fleet"
      data-testid="fleet-ranking"
      data-status={state.status}
      data-params={JSON.stringify(state.params)}
    >
      <div className="panel-head">
        <h2>Worst disks</h2>
        <span className="muted" data-testid="rank-range">
          {r ? `by p99 device latency, ${formatClock(r.from)}–${formatClock(r.to)}` : 'asking Prometheus…'}
        </span>
        <span className="rank-filters">
          {RANKING_FILTER_KEYS.map((k) => (
            <FilterInput key={`${k}\u0000${filter[k] ?? ''}`} k={k} value={filter[k] ?? ''} />
          ))}
        </span>
        {r && (
          <span className="muted" data-testid="rank-queries" data-queries={r.prometheusQueries}>
            {r.prometheusQueries} Prometheus quer{r.prometheusQueries === 1 ? 'y' : 'ies'}
          </span>
        )}
      </div>
      {state.status === 'error' && (
        <p className="tag tag-warn" role="alert" data-testid="rank-error">
          {state.error}
        </p>
      )}
      <div className="table-scroll">
        <table className="grid rank-table">
          <thead>
            <tr>
              <th className="num">#</th>
              <th>host/disk</th>
              <th className="num">p99</th>
              <th className="num">p99.9</th>
              <th className="num">I/Os</th>
              <th className="num">errors</th>
              <th className="num" title="The oldest I/O with the driver at any second close in the range">
                oldest in flight
              </th>
              <th className="num" title="I/Os /proc/diskstats counted that no blkheat probe saw">
                untimed
              </th>
              <th title="p99 over the range, one point per step (one scale for every row)">p99 over time</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(r?.disks ?? []).map((d, i) => (
              <Row key={`${d.instance}\u0000${d.dev}`} r={d} i={i} scale={scale} onPick={pick} />
            ))}
            {r && r.disks.length === 0 && (
              <tr>
                <td colSpan={10} className="muted" data-testid="rank-empty">
                  No disk with I/O in this range{Object.keys(filter).length > 0 ? ' matches the filters' : ''}.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Title bar (it stays at the top): host and kernel, connection state, Live/Paused, snapshot banner, the loudest incident now (also the tab's title), the disks ranked worst first, stuck I/O on disks not shown. */
import { useEffect } from 'react';
import { formatCount, formatDateTime, formatSpan } from '../model/format.js';
import { closeSnapshot, goLive, resetView, retryConnection } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { pageAlert, pageTitle } from '../model/alert.js';
import { EXPLAIN } from '../model/explain.js';
import { stuckOf } from './incidents.js';
import { WorstDisks } from './WorstDisks.js';

const STATE_LABEL = { connecting: 'connecting…', live: 'connected', reconnecting: 'reconnecting…', offline: 'offline' } as const;

export function Header() {
  const connection = useUi((s) => s.connection);
  const detail = useUi((s) => s.connectionDetail);
  const agent = useUi((s) => s.agent);
  const mode = useData((s) => s.mode);
  const snapshot = useData((s) => s.snapshot);
  const following = useUi((s) => s.view.following);
  const view = useUi((s) => s.view);
  const summary = useData((s) => s.summary);
  const lastFrame = useData((s) => s.lastFrame);
  const shown = useData((s) => s.shownDevs);
  const disks = useData((s) => s.disks);
  const threshold = useUi((s) => s.stuck);
  // A disk the user left out of the view can hang too: say so here, where it cannot be missed.
  const hiddenStuck = (lastFrame?.disks ?? [])
    .filter((d) => !shown.includes(d.dev) && stuckOf(lastFrame, mode, d.dev, threshold) !== undefined)
    .map((d) => disks.find((x) => x.dev === d.dev)?.name ?? d.dev);
  let dropped = 0;
  let missed = 0;
  for (const d of summary?.disks.values() ?? []) {
    dropped += d.dropped;
    missed += d.missed;
  }
  const host = mode === 'snapshot' ? snapshot?.host : agent?.host;
  const fleet = mode === 'live' ? agent?.fleet : undefined;
  const fleetProblem = useUi((s) => s.agentStatus?.fleetProblem);
  const hostCount = new Set(useData((s) => s.disks).flatMap((d) => (d.host === undefined ? [] : [d.host]))).size;
  const hostname = host?.hostname;
  const agentStatus = useUi((s) => s.agentStatus);
  const alert = pageAlert(lastFrame, mode, threshold, (dev) => disks.find((x) => x.dev === dev)?.name ?? dev, agentStatus);
  const title = pageTitle(alert, hostname, mode === 'snapshot');
  useEffect(() => {
    document.title = title;
  }, [title]);
  return (
    <header className="app-header">
      <h1 className="brand">
        blk<span>heat</span>
      </h1>
      <div className="host" data-testid="host">
        {fleet ? (
          <span data-testid="fleet-source" title={`Drawn from ${fleet.prometheus}'s native histograms`}>
            <strong>fleet</strong>{' '}
            <span className="muted">
              {hostCount} host{hostCount === 1 ? '' : 's'} · Prometheus {fleet.prometheus} · scraped every {fleet.scrapeInterval} s
            </span>
            {fleetProblem && (
              <span className="tag tag-warn" role="alert" data-testid="fleet-problem" data-since={fleetProblem.since}>
                no data since {formatDateTime(fleetProblem.since)}: {fleetProblem.message}
              </span>
            )}
          </span>
        ) : host ? (
          <>
            <strong>{host.hostname}</strong> <span className="muted">{host.kernel}</span>
            {mode === 'live' && agent && <span className="muted"> · agent {agent.version}</span>}
          </>
        ) : (
          <span className="muted">waiting for the agent…</span>
        )}
      </div>
      <div className="status">
        {mode === 'live' ? (
          <span
            className={`badge conn-${connection}`}
            data-testid="connection"
            data-state={connection}
            title={detail ? `${STATE_LABEL[connection]}: ${detail}` : STATE_LABEL[connection]}
          >
            <span className="dot" aria-hidden="true" />
            {STATE_LABEL[connection]}
            {connection !== 'live' && detail ? <span className="muted"> ({detail})</span> : null}
            {connection === 'offline' && (
              <button type="button" className="link" onClick={retryConnection}>
                retry
              </button>
            )}
          </span>
        ) : null}
        {mode === 'snapshot' && snapshot ? (
          <span className="badge snapshot" data-testid="snapshot-badge" title={snapshot.note ?? ''}>
            Snapshot <strong>{snapshot.name}</strong> · recorded {formatDateTime(snapshot.range.from)} (
            {formatSpan(snapshot.range.to - snapshot.range.from)}) · offline
            <button type="button" className="link" onClick={resetView}>
              whole snapshot
            </button>
            <button type="button" className="link" onClick={closeSnapshot} data-testid="close-snapshot">
              back to live
            </button>
          </span>
        ) : following ? (
          <span className="badge live" data-testid="live-indicator" data-live="true">
            <span className="dot" aria-hidden="true" /> Live · last {formatSpan(view.span)}
          </span>
        ) : (
          <span className="badge paused" data-testid="live-indicator" data-live="false">
            ❚❚ Paused · {formatDateTime(view.from)} + {formatSpan(view.to - view.from)}
            <button type="button" className="primary" onClick={() => goLive()} data-testid="back-to-live" title="Back to live (Esc)">
              Back to live
            </button>
          </span>
        )}
        {alert && (
          <span
            className={`tag ${alert.kind === 'history' ? 'tag-warn' : 'tag-stuck'}`}
            role="alert"
            data-testid="page-alert"
            data-kind={alert.kind}
            title="The loudest incident now, seen wherever the page is scrolled (also in the tab's title)"
          >
            ⚠ {alert.text}
          </span>
        )}
        <WorstDisks />
        {hiddenStuck.length > 0 && (
          <span
            className="tag tag-stuck"
            data-testid="stuck-hidden"
            title="I/O in flight longer than the stuck threshold on disks not shown: add them in the disk list"
          >
            stuck I/O on {hiddenStuck.join(', ')} (not shown)
          </span>
        )}
        {summary && summary.unrecorded > 0 && (
          <span
            className="badge gap-badge"
            data-testid="unrecorded"
            title="Seconds of the visible range the agent did not record (it was not running): hatched on the heat maps, not counted in rates"
          >
            <span className="gap-swatch" aria-hidden="true" /> no data for {formatSpan(summary.unrecorded)}
          </span>
        )}
        {(dropped > 0 || missed > 0) && (
          <span
            className="muted counters"
            data-testid="dropped"
            title={`${EXPLAIN.notSampled}${missed > 0 ? ` Start unseen: ${EXPLAIN.startUnseen}` : ''}`}
          >
            {formatCount(dropped)} without a sample record{missed > 0 ? ` · ${formatCount(missed)} start unseen` : ''}
          </span>
        )}
      </div>
    </header>
  );
}

/**
 * A fleet view's "Stuck now" list (added after 0.4.0): every host × disk whose oldest I/O in
 * flight (with the driver, or a bio waiting for a request) is over 5 s at its newest scrape, as
 * the fleet server answered (GET /api/v1/fleet/stuck), oldest first. The answer comes every
 * scrape interval; between two, each age grows with this page's clock (model/fleetStuck.ts), so
 * the list never shows an age younger than the scrape it came from says. A click on a row shows
 * that host's heat map rows, as a ranked row's click does; each row links to its host's agent.
 */
import { useEffect, useState } from 'react';
import { formatLatency, STUCK_KIND_TEXT, stuckCellTexts, type FleetStuck, type StuckDisk } from '@blkheat/shared-types';
import { formatClock } from '../model/format.js';
import { stuckAgeNow, stuckEmptyText } from '../model/fleetStuck.js';
import { showHost } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useScrollToHost } from './FleetRanking.js';
import { AgentLink } from './AgentLink.js';

/** This page's clock (ms), ticking every second while mounted: the ages grow with it. */
function useSecondClock(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

interface RowProps {
  readonly r: StuckDisk;
  readonly i: number;
  readonly ageS: number;
  readonly onPick: (host: string) => void;
}

function Row({ r, i, ageS, onPick }: RowProps) {
  const t = stuckCellTexts(r, ageS);
  const other = r.other ? `; then also ${formatLatency(r.other.ageS)} ${STUCK_KIND_TEXT[r.other.kind]}` : '';
  return (
    <tr
      className="rank-row stuck-row"
      data-testid={`stuck-row-${i}`}
      data-instance={r.instance}
      data-disk={r.disk}
      data-kind={r.kind}
      data-age={ageS.toFixed(3)}
      data-scraped-at={r.scrapedAt}
      onClick={() => onPick(r.instance)}
      title={`Show ${r.instance}'s rows (figures of the scrape at ${formatClock(Math.floor(r.scrapedAt))}${other})`}
    >
      <th scope="row">
        {r.instance}/{r.disk}
      </th>
      <td className="num class-errors" data-testid={`stuck-age-${i}`}>
        {t.age}
      </td>
      <td data-testid={`stuck-kind-${i}`}>{t.kind}</td>
      <td className="num">{t.inflight}</td>
      <td>{r.link && <AgentLink href={r.link} host={r.instance} testId={`stuck-link-${i}`} />}</td>
    </tr>
  );
}

function StuckRows({ answer, receivedAtMs, onPick }: { answer: FleetStuck; receivedAtMs: number; onPick: (host: string) => void }) {
  const now = useSecondClock();
  if (answer.disks.length === 0) {
    return (
      <p className="muted" data-testid="stuck-empty">
        {stuckEmptyText(answer.min)}
      </p>
    );
  }
  return (
    <table className="grid rank-table">
      <thead>
        <tr>
          <th>host/disk</th>
          <th className="num" title="Age of its oldest I/O now: at its newest scrape, plus the time since">
            oldest
          </th>
          <th>which I/O</th>
          <th className="num" title="I/Os with the driver, or bios waiting for a request, at that scrape">
            in flight
          </th>
          <th />
        </tr>
      </thead>
      <tbody>
        {answer.disks.map((d, i) => (
          <Row key={`${d.instance}\u0000${d.dev}`} r={d} i={i} ageS={stuckAgeNow(d, answer, receivedAtMs, now)} onPick={onPick} />
        ))}
        {answer.more > 0 && (
          <tr>
            <td colSpan={5} className="muted">
              and {answer.more} more
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

export function FleetStuck() {
  const state = useData((s) => s.fleetStuck);
  const scrollTo = useScrollToHost();
  if (!state) return null;
  const pick = (host: string): void => {
    showHost(host);
    scrollTo(host);
  };
  const a = state.answer;
  return (
    <section
      className="panel rank-panel stuck-panel"
      aria-label="I/O stuck now across the fleet"
      data-testid="fleet-stuck"
      data-status={state.status}
      data-at={a?.at}
    >
      <div className="panel-head">
        <h2>Stuck now</h2>
        <span className="muted" data-testid="stuck-when">
          {a ? `as of ${formatClock(Math.floor(a.at))}, each host's newest scrape` : 'asking Prometheus…'}
        </span>
      </div>
      {state.status === 'error' && (
        <p className="tag tag-warn" role="alert" data-testid="stuck-error">
          {state.error}
        </p>
      )}
      {a && <StuckRows answer={a} receivedAtMs={state.receivedAtMs} onPick={pick} />}
    </section>
  );
}

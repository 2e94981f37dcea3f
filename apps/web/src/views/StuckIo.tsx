/**
 * Stuck I/O in a disk's row head: a loud badge ("stuck: 2 I/Os, oldest 12.3 s") while the newest
 * live frame has I/O in flight longer than the threshold, and, when the badge is clicked, the
 * list of those I/Os (pid, comm, sector, size, class, age), re-rendered with every live frame,
 * and the bios waiting for a request (protocol 4: how many, the oldest's age, a frozen queue).
 * When the I/O completes the next frame no longer has it: badge and list go. While the agent is
 * unreachable the badge says how old its verdict is.
 */
import { formatBytes, formatClock, formatCount } from '../model/format.js';
import { formatLatency } from '../model/latency.js';
import { type StuckState, stuckText } from '../model/stuck.js';
import { toggleStuckList } from '../store/actions.js';

export function StuckBadge({
  name,
  dev,
  stuck,
  open,
  stale,
}: {
  name: string;
  dev: string;
  stuck: StuckState;
  open: boolean;
  /** The newest live frame's end when no new frames come (the agent is unreachable): the verdict is that old. */
  stale: number | undefined;
}) {
  return (
    <button
      type="button"
      className="tag tag-stuck"
      data-testid={`stuck-${name}`}
      data-count={stuck.count}
      aria-expanded={open}
      title="I/O in flight longer than the stuck threshold (toolbar) when the newest second closed. Click to list them."
      onClick={() => toggleStuckList(dev)}
    >
      {stuckText(stuck, formatLatency)}
      {stale !== undefined ? ` (as of ${formatClock(stale)})` : ''}
    </button>
  );
}

export function StuckList({ name, stuck, thresholdS, frameTs }: { name: string; stuck: StuckState; thresholdS: number; frameTs: number }) {
  return (
    <div className="stuck-list" data-testid={`stuck-list-${name}`} data-ts={frameTs}>
      {stuck.count > 0 && (
        <p className="muted">
          In flight for more than {formatLatency(thresholdS)} at {formatClock(frameTs + 1)}
          {stuck.atLeast ? ' (the agent lists the oldest few: more may be stuck)' : ''}
          {stuck.ios.length === 0 ? '; the agent listed none of them' : ''}
        </p>
      )}
      {stuck.waiting && (
        <p className="muted" data-testid={`stuck-waiting-${name}`} data-count={stuck.waiting.count} data-oldest={stuck.waiting.oldestS}>
          {formatCount(stuck.waiting.count)} bio{stuck.waiting.count === 1 ? '' : 's'} waiting for a request at {formatClock(frameTs + 1)}{' '}
          (not yet with the driver), the oldest for {formatLatency(stuck.waiting.oldestS)}
          {stuck.frozen ? ': the queue is frozen' : ''}
        </p>
      )}
      {stuck.ios.length > 0 && (
        <table className="grid">
          <thead>
            <tr>
              <th scope="col" className="num">
                pid
              </th>
              <th scope="col">comm</th>
              <th scope="col" className="num">
                sector
              </th>
              <th scope="col" className="num">
                size
              </th>
              <th scope="col">class</th>
              <th scope="col" className="num">
                age
              </th>
            </tr>
          </thead>
          <tbody>
            {stuck.ios.map((io, i) => (
              <tr key={`${io.pid}/${io.sector ?? ''}/${io.c}/${i}`} data-testid="stuck-io" data-pid={io.pid} data-age={io.ageS}>
                <td className="num">{io.pid || '–'}</td>
                <td>{io.comm || '–'}</td>
                <td className="num">{io.sector ?? '–'}</td>
                <td className="num">{formatBytes(io.bytes)}</td>
                <td>{io.c}</td>
                <td className="num" data-testid="stuck-io-age">
                  {formatLatency(io.ageS)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

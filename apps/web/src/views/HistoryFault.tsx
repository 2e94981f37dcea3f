/**
 * The banner shown while the agent cannot write its history (a full disk, an unreachable data
 * dir): the live view goes on, but what is on screen now will not be there to look back at,
 * and those seconds will read back as "no data". It goes away with the next status that has
 * no fault. Live mode only: a snapshot on screen is not affected.
 */
import { formatSince } from '../model/format.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';

export function HistoryFault() {
  const fault = useUi((s) => s.agentStatus?.historyFault);
  const mode = useData((s) => s.mode);
  // "Today" by the agent's clock (its newest second), which `since` is on too.
  const now = useData((s) => s.lastFrameTs);
  if (!fault || mode !== 'live') return null;
  const since = formatSince(fault.since, now ?? fault.since);
  // The sentence goes on after the agent's message: no double full stop.
  const message = fault.message.replace(/[.\s]+$/, '');
  return (
    <div className="history-fault" role="alert" data-testid="history-fault" data-since={fault.since}>
      <strong>History is not being recorded since {since}:</strong> <span className="history-fault-message">{message}</span>
      <span>. The live view goes on; seconds not recorded show as no data.</span>
    </div>
  );
}

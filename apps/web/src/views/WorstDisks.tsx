/**
 * The header's ranking of the disks (model/worstDisks.ts): which is worst now, and why, in one
 * line that stays in view wherever the page is scrolled. Live and following, over the newest
 * frame's stuck I/O and the visible range; otherwise over the visible range ("in view").
 */
import { P99 } from '../model/percentiles.js';
import { PHASE_WORDS } from '../model/phase.js';
import { rankDisks, standingText } from '../model/worstDisks.js';
import { useData } from '../store/pipelineStore.js';
import { shownQuantiles } from '../store/shownWindow.js';
import { useUi } from '../store/uiStore.js';
import { stuckOf } from './incidents.js';

/** Disks named in the line; the rest are in their rows. */
const LISTED = 3;

export function WorstDisks() {
  const summary = useData((s) => s.summary);
  const rankSamples = useData((s) => s.rankSamples);
  const schema = useData((s) => s.schema);
  const shown = useData((s) => s.shownDevs);
  const disks = useData((s) => s.disks);
  const lastFrame = useData((s) => s.lastFrame);
  const mode = useData((s) => s.mode);
  const threshold = useUi((s) => s.stuck);
  const following = useUi((s) => s.view.following);
  const kind = useUi((s) => s.kind);
  if (!summary || shown.length < 2) return null;
  const label = P99[0].label;
  const ranked = rankDisks({
    // A disk left out of the view can hang too: it is ranked with the shown ones.
    devs: [...shown, ...(lastFrame?.disks ?? []).map((d) => d.dev).filter((dev) => stuckOf(lastFrame, mode, dev, threshold))],
    p99: (dev) => (shown.includes(dev) ? shownQuantiles({ summary, rankSamples, schema }, dev).find((q) => q.label === label) : undefined),
    stuck: (dev) => stuckOf(lastFrame, mode, dev, threshold),
    failed: (dev) => summary.disks.get(dev)?.failed ?? 0,
  }).slice(0, LISTED);
  if (ranked.length === 0) return null;
  const name = (dev: string): string => disks.find((d) => d.dev === dev)?.name ?? dev;
  const now = mode === 'live' && following;
  return (
    <span
      className="worst-disks"
      data-testid="worst-disks"
      title={`The disks ranked worst first: a stuck I/O (in flight longer than the stuck threshold${now ? ' now' : ''}) first, the longest first; then by the p99 of ${PHASE_WORDS[kind]} over the visible range; then by failed I/Os`}
    >
      <span className="muted">worst {now ? 'now' : 'in view'}:</span>
      {ranked.map((s, i) => (
        <span key={s.dev} className="worst-disk" data-testid={`worst-disk-${i}`} data-dev={s.dev}>
          {i > 0 ? ' › ' : ' '}
          <strong>{name(s.dev)}</strong> {standingText(s)}
        </span>
      ))}
    </span>
  );
}

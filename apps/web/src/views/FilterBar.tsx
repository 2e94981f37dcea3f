/**
 * The cgroup filter while it is on: which cgroup, a button that removes it, and in plain words
 * what it cannot filter (the data has no per-cgroup split of op classes, of sizes or bytes, and
 * data before protocol 4 none of any latency phase but device latency), so nothing unfiltered
 * passes for filtered.
 */
import { cgroupFilterApplies } from '../model/cgroups.js';
import { PHASE_WORDS } from '../model/phase.js';
import { clearCgroup, setKind } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';

export function FilterBar() {
  const cgroup = useUi((s) => s.cgroup);
  const kind = useUi((s) => s.kind);
  const cgroupPhases = useData((s) => s.cgroupPhases);
  if (cgroup === undefined) return null;
  const applies = cgroupFilterApplies(kind, cgroupPhases);
  const phase = PHASE_WORDS[kind];
  const Phase = phase.charAt(0).toUpperCase() + phase.slice(1);
  return (
    <div className={applies ? 'filter-bar' : 'filter-bar filter-bar-off'} role="status" data-testid="filter-bar" data-applied={applies}>
      <span className="filter-chip" data-testid="filter-cgroup" data-cgroup={cgroup}>
        cgroup <strong>{cgroup}</strong>
        <button
          type="button"
          className="link"
          onClick={clearCgroup}
          aria-label={`remove the cgroup filter ${cgroup}`}
          data-testid="filter-cgroup-remove"
        >
          ✕ remove
        </button>
      </span>
      {applies ? (
        <span className="muted" data-testid="filter-scope">
          Heat maps, histograms, percentiles, each disk’s I/O count and sampled I/Os show this cgroup only, in {phase}. Not split by cgroup,
          so shown for every cgroup: op classes, size × latency, throughput.
        </span>
      ) : (
        <span className="filter-warn" data-testid="filter-not-applied">
          {Phase} is not split by cgroup in this data (agents before protocol 4 split device latency only): the heat maps show every
          cgroup’s {phase}, not this cgroup’s.{' '}
          <button type="button" className="link" onClick={() => setKind('device')}>
            show device latency
          </button>
        </span>
      )}
    </div>
  );
}

/**
 * The test hook's reads of incidents: stuck I/O as a disk's row head judges it (the newest live
 * frame, from the stores), and the stuck spans and fault columns its heat map marked (what its
 * overlay drew, from the scheduler's registry).
 */
import { useData } from './store/pipelineStore.js';
import { useUi } from './store/uiStore.js';
import type { BlkheatHook } from './testhookApi.js';
import { stuckOf } from './views/incidents.js';
import { drawnHeat } from './views/useDiskDrawing.js';

export function incidentReads(): Pick<BlkheatHook, 'stuck' | 'faults'> {
  return {
    stuck(dev) {
      const d = useData.getState();
      const thresholdS = useUi.getState().stuck;
      const now = stuckOf(d.lastFrame, d.mode, dev, thresholdS);
      return {
        thresholdS,
        frameTs: d.mode === 'live' ? d.lastFrame?.ts : undefined,
        count: now?.count ?? 0,
        atLeast: now?.atLeast ?? false,
        oldestS: now?.oldestS ?? 0,
        ios: now?.ios.map((io) => ({ ...io })) ?? [],
        spans: (drawnHeat(dev)?.value.incidents?.stuck ?? []).map((x) => ({ start: x.start, end: x.end, ageS: x.ageS, pid: x.pid })),
      };
    },
    faults(dev) {
      const drawn = drawnHeat(dev)?.value;
      const step = drawn?.rc.step ?? 1;
      return (drawn?.incidents?.faults ?? []).map((f) => ({
        ts: f.col * step,
        failed: f.failed,
        byStatus: { ...f.byStatus },
        requeues: f.requeues,
      }));
    },
  };
}

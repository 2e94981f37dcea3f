/**
 * What a disk's incident views show, from the stores: stuck I/O now (the newest live frame's
 * in-flight I/Os over the threshold: the row head's loud badge and its list) and the marks on
 * its heat map (stuck spans and columns with failed I/Os or requeues, from the data window's
 * frames, plus the newest live frame while live so a hang shows up to the second it was last
 * seen). The marks are cached per data version, view and threshold; the model does the work
 * (model/stuck.ts, model/faults.ts).
 */
import type { Frame } from '@blkheat/shared-types';
import { faultColumns } from '../model/faults.js';
import { stuckNow, stuckSpans, type StuckState } from '../model/stuck.js';
import type { IncidentMarks } from '../render/incidents.js';
import { useData } from '../store/dataStore.js';
import { useUi } from '../store/store.js';

/** Stuck I/O of `dev` in the newest live frame (undefined: none, or not live). */
export function stuckOf(lastFrame: Frame | undefined, mode: 'live' | 'snapshot', dev: string, thresholdS: number): StuckState | undefined {
  if (mode !== 'live' || !lastFrame) return undefined;
  return stuckNow(
    lastFrame.disks.find((d) => d.dev === dev),
    thresholdS,
  );
}

const cache = new Map<string, { key: string; marks: IncidentMarks }>();

/** The incident marks of `dev` for the window and view on screen now. */
export function incidentMarks(dev: string): IncidentMarks | undefined {
  const d = useData.getState();
  const cur = d.window;
  if (!cur) return undefined;
  const threshold = useUi.getState().stuck;
  const live = d.mode === 'live' ? d.lastFrame : undefined;
  // One column either side: a mark is wider than a column when zoomed out.
  const col0 = Math.floor(d.visible.from / cur.step) - 1;
  const col1 = Math.ceil(d.visible.to / cur.step) + 1;
  const key = `${cur.id}/${d.dataVersion}/${cur.frames.length}/${cur.step}/${col0}/${col1}/${threshold}/${live?.ts ?? ''}`;
  const hit = cache.get(dev);
  if (hit?.key === key) return hit.marks;
  const frames = live ? [...cur.frames, live] : cur.frames;
  const marks: IncidentMarks = {
    stuck: stuckSpans(frames, dev, threshold),
    faults: faultColumns(cur.frames, dev, cur.step, col0, col1),
  };
  cache.set(dev, { key, marks });
  return marks;
}

/** Forget a disk's cached marks (its row went away). */
export function forgetIncidents(dev: string): void {
  cache.delete(dev);
}

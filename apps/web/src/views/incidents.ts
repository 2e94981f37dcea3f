/**
 * What a disk's incident views show, from the stores: stuck I/O now (the newest live frame's
 * in-flight I/Os over the threshold: the row head's loud badge and its list) and the marks on
 * its heat map (stuck spans and columns with failed I/Os or requeues, from the data window's
 * frames, plus the newest live frame while live so a hang shows up to the second it was last
 * seen). The marks are cached for the data version, view and threshold on screen (one entry
 * per disk, all dropped when any of them changes: a memo of the stores, not of what was drawn,
 * so it needs no unregistering); the model does the work (model/stuck.ts, model/faults.ts), over
 * the frames that can give a mark (model/incidentFrames.ts, kept for the window as it moves on).
 * What a heat map marked is in the scheduler's registry (useDiskDrawing.ts records it).
 */
import type { Frame } from '@blkheat/shared-types';
import { faultColumns } from '../model/faults.js';
import { IncidentFrames } from '../model/incidentFrames.js';
import { oldestAgeNs, stuckNow, stuckSpans, type StuckState } from '../model/stuck.js';
import type { IncidentMarks } from '../render/incidents.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';

/** Stuck I/O of `dev` in the newest live frame (undefined: none, or not live). */
export function stuckOf(lastFrame: Frame | undefined, mode: 'live' | 'snapshot', dev: string, thresholdS: number): StuckState | undefined {
  if (mode !== 'live' || !lastFrame) return undefined;
  return stuckNow(
    lastFrame.disks.find((d) => d.dev === dev),
    thresholdS,
  );
}

let cache: { key: string; marks: Map<string, IncidentMarks> } | undefined;
/** The frames of the window on screen that can give a mark (one window at a time). */
let index: { id: number; frames: IncidentFrames } | undefined;

/** The index of `frames`, the window `id`'s, brought up to them. */
function indexOf(id: number, frames: readonly Frame[]): IncidentFrames {
  if (index?.id !== id || !index.frames.update(frames)) {
    index = { id, frames: new IncidentFrames() };
    index.frames.update(frames);
  }
  return index.frames;
}

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
  if (cache?.key !== key) cache = { key, marks: new Map() };
  const hit = cache.marks.get(dev);
  if (hit) return hit;
  const frames = indexOf(cur.id, cur.frames);
  const stuckFrames = frames.stuckFrames(dev, threshold);
  const liveDisk = live?.disks.find((x) => x.dev === dev);
  if (live && liveDisk && oldestAgeNs(liveDisk) / 1e9 > threshold) stuckFrames.push(live);
  const marks: IncidentMarks = {
    stuck: stuckSpans(stuckFrames, dev, threshold),
    faults: faultColumns(frames.faultFrames(dev), dev, cur.step, col0, col1),
  };
  cache.marks.set(dev, marks);
  return marks;
}

/**
 * Failed I/Os, requeues and causes of submit wait per heat map column: for one disk, per column
 * of `step` seconds, the failed I/Os by block status (`cls[].e`, protocol 2, over every class: a
 * failed passthrough command failed too), the requests sent back to the queue
 * (`DiskFrame.requeues`), and (protocol 4) the completed I/Os whose bio found the queue frozen or
 * was turned away for want of a tag (`causes`), wbt's windows that held writes back (`wbt`) and
 * the queue settings that changed (`queue_changed`); (protocol 5) the seconds in which every tag
 * was in use while bios waited (`tags_full`). Frames of any step add up (merging is exact
 * for all of them), so a coarse column holds the sum of its seconds.
 */
import { type DiskFrame, type Frame, joinQueueSettings, type QueueSetting } from '@blkheat/shared-types';
import { formatCount } from './format.js';

export interface FaultColumn {
  /** Absolute column (floor(ts / step)). */
  readonly col: number;
  /** Failed I/Os, Σ byStatus. */
  readonly failed: number;
  /** Failed I/Os by block status name ("IOERR", "TIMEOUT", …). */
  readonly byStatus: Readonly<Record<string, number>>;
  readonly requeues: number;
  /** Completed I/Os whose bio waited for a frozen queue (protocol 4). */
  readonly frozen: number;
  /** Completed I/Os first turned away for want of a tag (protocol 4). */
  readonly refused: number;
  /** wbt's windows that held writes back (protocol 4). */
  readonly wbt: number;
  /** Seconds in which every tag was in use while bios waited (protocol 5). */
  readonly tagsFull: number;
  /** Queue settings that changed, in QUEUE_SETTINGS order (protocol 4). */
  readonly queueChanged: readonly QueueSetting[];
}

interface Acc {
  failed: number;
  byStatus: Record<string, number>;
  requeues: number;
  frozen: number;
  refused: number;
  wbt: number;
  tagsFull: number;
  queueChanged: readonly QueueSetting[];
}

const NO_FAULTS: Omit<Acc, 'byStatus'> = { failed: 0, requeues: 0, frozen: 0, refused: 0, wbt: 0, tagsFull: 0, queueChanged: [] };

function addDisk(a: Acc, d: DiskFrame): void {
  a.requeues += d.requeues ?? 0;
  a.frozen += d.causes?.frozen ?? 0;
  a.refused += d.causes?.refused ?? 0;
  a.wbt += d.wbt ?? 0;
  a.tagsFull += d.tags_full ?? 0;
  if (d.queue_changed) a.queueChanged = joinQueueSettings(a.queueChanged, d.queue_changed);
  for (const c of d.cls) {
    if (!c.e) continue;
    for (const [status, n] of Object.entries(c.e)) {
      a.failed += n;
      a.byStatus[status] = (a.byStatus[status] ?? 0) + n;
    }
  }
}

/** Whether a disk frame adds anything to its fault column (addDisk's fields: a new one goes in both). */
export function hasFault(d: DiskFrame): boolean {
  if ((d.requeues ?? 0) > 0 || (d.wbt ?? 0) > 0 || (d.tags_full ?? 0) > 0) return true;
  if ((d.causes?.frozen ?? 0) > 0 || (d.causes?.refused ?? 0) > 0) return true;
  if (d.queue_changed && d.queue_changed.length > 0) return true;
  // Any status named, even at 0: faultColumns lists it in its column's byStatus.
  for (const c of d.cls) if (c.e && Object.keys(c.e).length > 0) return true;
  return false;
}

/** The columns in [col0, col1) of `dev` that had failed I/Os, requeues or a cause of submit wait, in column order. */
export function faultColumns(frames: readonly Frame[], dev: string, step: number, col0: number, col1: number): FaultColumn[] {
  const accs = new Map<number, Acc>();
  for (const f of frames) {
    const col = Math.floor(f.ts / step);
    if (col < col0 || col >= col1) continue;
    const d = f.disks.find((x) => x.dev === dev);
    if (!d) continue;
    let a = accs.get(col);
    if (!a) accs.set(col, (a = { ...NO_FAULTS, byStatus: {} }));
    addDisk(a, d);
  }
  const out: FaultColumn[] = [];
  for (const [col, a] of accs)
    if (a.failed > 0 || a.requeues > 0 || a.frozen > 0 || a.refused > 0 || a.wbt > 0 || a.tagsFull > 0 || a.queueChanged.length > 0)
      out.push({ col, ...a });
  return out.sort((x, y) => x.col - y.col);
}

/** Failed I/Os, requeues and causes of submit wait of one column (zeros when it had none). */
export function faultsAt(frames: readonly Frame[], dev: string, step: number, col: number): FaultColumn {
  return faultColumns(frames, dev, step, col, col + 1)[0] ?? { col, ...NO_FAULTS, byStatus: {} };
}

/** "IOERR 2, TIMEOUT 1": statuses by count, then name. */
export function statusText(byStatus: Readonly<Record<string, number>>): string {
  return Object.entries(byStatus)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    .map(([s, n]) => `${s} ${formatCount(n)}`)
    .join(', ');
}

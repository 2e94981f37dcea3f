/**
 * Which frames of a window can put an incident mark on a disk's heat map: those where the disk
 * had a fault (failed I/Os, requeues, a cause of submit wait: model/faults.ts) and those where
 * something of it had been in flight or waiting for a while (model/stuck.ts), with how long.
 *
 * The marks are worked out again at every live second, for every disk, over the whole window
 * (stuckSpans, faultColumns): an hour on screen is 3,600 frames a disk, a few ms a disk each
 * second on a loaded machine, for marks that are almost always made of no frame at all. The
 * index is kept for a live window as it moves on (only the new seconds are looked at, those the
 * window dropped are let go: droppedFromFront), so the marks are made from the few frames that
 * can give one. Every other frame adds nothing to either (a fault column needs a non-zero count,
 * a stuck span an age over the threshold), so the marks are the same as over the whole window.
 */
import type { Frame } from '@blkheat/shared-types';
import { droppedFromFront } from './diskFrames.js';
import { hasFault } from './faults.js';
import { oldestAgeNs } from './stuck.js';

/** A frame in which a disk had I/O in flight or waiting, and the oldest of it. */
interface Aged {
  readonly frame: Frame;
  readonly ageNs: number;
}

interface DiskIndex {
  /** Frames in which the disk had a fault, in window order. */
  readonly faults: Frame[];
  /** Frames in which the disk had I/O in flight or waiting, in window order. */
  readonly aged: Aged[];
}

export class IncidentFrames {
  /** The frames looked at so far, in order (what the window's frames began with, less those dropped since). */
  private readonly fed: Frame[] = [];
  private readonly disks = new Map<string, DiskIndex>();

  /**
   * Brings the index up to `frames`: the same window grown at its end and dropped at its front
   * since. False (nothing changed) when it is not: another window, or frames replaced in the
   * middle; the caller makes a new index.
   */
  update(frames: readonly Frame[]): boolean {
    const dropped = droppedFromFront(this.fed, frames);
    if (dropped === undefined) return false;
    if (dropped > 0) {
      const gone = new Set(this.fed.splice(0, dropped));
      for (const d of this.disks.values()) {
        dropFront(d.faults, (f) => gone.has(f));
        dropFront(d.aged, (a) => gone.has(a.frame));
      }
    }
    for (let i = this.fed.length; i < frames.length; i++) {
      const f = frames[i] as Frame;
      this.fed.push(f);
      for (const d of f.disks) {
        const fault = hasFault(d);
        const age = oldestAgeNs(d);
        if (!fault && age <= 0) continue;
        let index = this.disks.get(d.dev);
        if (!index) this.disks.set(d.dev, (index = { faults: [], aged: [] }));
        if (fault) index.faults.push(f);
        if (age > 0) index.aged.push({ frame: f, ageNs: age });
      }
    }
    return true;
  }

  /** The frames in which `dev` had a fault, in window order. */
  faultFrames(dev: string): readonly Frame[] {
    return this.disks.get(dev)?.faults ?? [];
  }

  /** The frames in which something of `dev` was older than `thresholdS` (stuckSpans' test), in window order. */
  stuckFrames(dev: string, thresholdS: number): Frame[] {
    const out: Frame[] = [];
    for (const a of this.disks.get(dev)?.aged ?? []) if (a.ageNs / 1e9 > thresholdS) out.push(a.frame);
    return out;
  }
}

/** Removes the leading items `gone` says were dropped (a window drops its oldest frames, so they lead). */
function dropFront<T>(list: T[], gone: (x: T) => boolean): void {
  let k = 0;
  while (k < list.length && gone(list[k] as T)) k++;
  if (k > 0) list.splice(0, k);
}

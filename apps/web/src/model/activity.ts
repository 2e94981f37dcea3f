/**
 * What a source's frames say of it, gathered as they come: which disks had I/O, whether any
 * frame carries submit-wait timing, and which phases its cgroup histograms carry. The data source
 * keeps one for the data on screen (pipeline/source.ts); an imported file's is gathered part by
 * part while the file arrives from its worker (model/snapshotParts.ts), so that showing a big
 * snapshot does not walk its frames again in the task that shows it (30-50 ms of the 50 MB file
 * of snapshot-import.test.ts on a loaded 2-CPU machine).
 */
import { compareDev, type Frame, type LatencyKind, LATENCY_KINDS } from '@blkheat/shared-types';
import { cgroupPhasesOf } from './cgroups.js';
import { frameHasSubmitTiming } from './phase.js';

export class SourceActivity {
  /** Disks with I/O. */
  private readonly active = new Set<string>();
  /** Whether a frame carried submit-wait timing. */
  private timing = false;
  /** The phases besides device latency a frame's cgroup histograms carried, in LATENCY_KINDS order. */
  private phases: readonly LatencyKind[] = [];

  get submitTiming(): boolean {
    return this.timing;
  }

  /** The same array until a frame adds a phase (a store is set only on a change). */
  get cgroupPhases(): readonly LatencyKind[] {
    return this.phases;
  }

  /** Notes `frames`; returns the disks that had I/O for the first time, in the order seen. */
  note(frames: readonly Frame[]): string[] {
    const fresh: string[] = [];
    for (const f of frames) {
      this.notePhases(f);
      for (const d of f.disks) {
        // I/O in flight is I/O: a disk whose only I/O hangs (it completes nothing) must be shown,
        // and so is one whose bios wait for a request (a frozen queue has nothing in flight).
        if (d.cls.length === 0 && !(d.inflight && (d.inflight.n > 0 || (d.inflight.waiting ?? 0) > 0))) continue;
        if (this.active.has(d.dev)) continue;
        this.active.add(d.dev);
        fresh.push(d.dev);
      }
    }
    return fresh;
  }

  /** Notes the phases of a frame. */
  private notePhases(f: Frame): void {
    if (!this.timing && frameHasSubmitTiming(f)) this.timing = true;
    if (this.phases.length < LATENCY_KINDS.length - 1) this.phases = joinPhases(this.phases, cgroupPhasesOf(f));
  }

  /** Disks with I/O, in device order. */
  devs(): string[] {
    return [...this.active].sort(compareDev);
  }

  has(dev: string): boolean {
    return this.active.has(dev);
  }
}

/** The phases of `a` and `b`, in LATENCY_KINDS order; `a` itself when `b` adds none. */
function joinPhases(a: readonly LatencyKind[], b: readonly LatencyKind[]): readonly LatencyKind[] {
  if (b.every((k) => a.includes(k))) return a;
  return LATENCY_KINDS.filter((k) => a.includes(k) || b.includes(k));
}

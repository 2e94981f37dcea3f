/**
 * When and against what the untimed I/Os are measured, and where they wait for their frame.
 * The arithmetic is the meter's (untimed.ts); this decides which running count of ours it is
 * given: the kernel's per-disk table (disk_counts), read well under a millisecond after
 * diskstats just after each second closes, or, should that table overflow, the harvest's
 * counts, read at the harvest (milliseconds later, 120 ms after the second closed: on a busy
 * disk the estimate is then low and the rest found a second late).
 *
 * What a measurement finds is dated by when it ran (the second that had just closed), not by
 * when its frame is emitted: a harvest that runs late (an event loop held up for seconds) emits
 * several seconds at once, and each keeps the untimed I/Os found for it.
 */
import { OP_GROUPS, type DiskInfo, type OpGroup } from '@blkheat/shared-types';
import type { DiskScope } from '../host/disk-scope.js';
import { errorText } from '../errors.js';
import type { KernelControls } from './kernel-controls.js';
import { zeroGroups, type GroupCounts, type UntimedMeter } from './untimed.js';

export interface UntimedTrackerDeps {
  readonly meter: UntimedMeter;
  readonly controls: Pick<KernelControls, 'readDiskCounts' | 'readCounters'>;
  readonly scope: Pick<DiskScope, 'shownDev' | 'measuredDisks'>;
  /** The disks known now (the measured ones are chosen among them). */
  readonly disks: () => readonly DiskInfo[];
  readonly warn: (message: string) => void;
  /** Disks the kernel's per-disk table holds (KernelAbi.diskCountSlots). */
  readonly diskCountSlots: number;
}

export class UntimedTracker {
  /** Untimed I/Os found but not yet put in a frame: by the second they are dated to, then by shown disk. */
  private pending = new Map<number, Map<number, Partial<GroupCounts>>>();
  /** False once the kernel's per-disk table overflowed: the harvest measures from then on. */
  private tableTrusted = true;

  constructor(private readonly deps: UntimedTrackerDeps) {}

  /** True when the harvest must measure (measureAtHarvest), the per-disk table being untrusted. */
  get atHarvest(): boolean {
    return !this.tableTrusted;
  }

  /** Measures now against the kernel's per-disk table: call just after `second` closes. */
  measureNow(second: number): void {
    if (!this.tableTrusted) return;
    const { meter, controls, scope } = this.deps;
    try {
      const kernelCounts = meter.snapshot();
      const perDev = controls.readDiskCounts();
      // Read after the table, so a disk the table had no room for is known before its counts are
      // used (an I/O still on its way between the two can at worst look untimed this once).
      const full = controls.readCounters()?.diskCountsFull ?? 0;
      if (full > 0) {
        this.tableTrusted = false;
        this.deps.warn(
          `${full} I/O(s) found no entry in the kernel's per-disk table (more than ${this.deps.diskCountSlots} disks?): untimed I/Os are now measured at the harvest, and may be dated a second late`,
        );
        return;
      }
      const ours = new Map<number, GroupCounts>();
      for (const [dev, counts] of perDev) {
        const shown = scope.shownDev(dev);
        if (shown === undefined) continue;
        const sum = ours.get(shown) ?? zeroGroups();
        for (const g of OP_GROUPS) sum[g] += counts[g];
        ours.set(shown, sum);
      }
      this.add(second, meter.measure(kernelCounts, ours, scope.measuredDisks(this.deps.disks())));
    } catch (err) {
      this.deps.warn(`measuring untimed I/Os failed (found next second instead): ${errorText(err)}`);
    }
  }

  /**
   * The fallback: measures against the harvest's counts (`open`: the seconds still open) and a
   * diskstats snapshot taken before that harvest read the map; dated to `second`, the newest
   * second that harvest emits.
   */
  measureAtHarvest(snapshot: ReadonlyMap<number, GroupCounts>, open: ReadonlyMap<number, GroupCounts>, second: number): void {
    const { meter, scope } = this.deps;
    try {
      this.add(second, meter.measure(snapshot, meter.harvestedPlus(open), scope.measuredDisks(this.deps.disks())));
    } catch (err) {
      this.deps.warn(`measuring untimed I/Os failed (found next second instead): ${errorText(err)}`);
    }
  }

  /**
   * The untimed I/Os, per shown disk, dated to `second` or to one before it that was emitted
   * already (found after its frame left: they go with the next frame, never lost).
   */
  found(second: number): ReadonlyMap<number, Partial<GroupCounts>> {
    const out = new Map<number, Partial<GroupCounts>>();
    for (const [dated, byDisk] of this.pending) if (dated <= second) addInto(out, byDisk);
    return out;
  }

  /** The frame of `second` carrying found(second) was emitted. */
  emitted(second: number): void {
    for (const dated of [...this.pending.keys()]) if (dated <= second) this.pending.delete(dated);
  }

  private add(second: number, found: ReadonlyMap<number, Partial<GroupCounts>>): void {
    if (found.size === 0) return;
    let dated = this.pending.get(second);
    if (!dated) this.pending.set(second, (dated = new Map()));
    addInto(dated, found);
  }
}

function addInto(into: Map<number, Partial<GroupCounts>>, from: ReadonlyMap<number, Partial<GroupCounts>>): void {
  for (const [dev, groups] of from) {
    const sum = into.get(dev) ?? {};
    for (const [g, n] of Object.entries(groups) as [OpGroup, number][]) sum[g] = (sum[g] ?? 0) + n;
    into.set(dev, sum);
  }
}

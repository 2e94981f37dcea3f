/**
 * The per-second harvest of the kernel's histogram map (hists): every entry of a closed second
 * is read, summed over CPUs, counted in the untimed books and deleted; the entries of the
 * seconds still open are only counted. A key whose delete fails is remembered and skipped when
 * read again: never counted twice.
 */
import type { BpfMap } from '@blkheat/bpf-loader';
import type { CgroupNamer } from './cgroups.js';
import type { ClassNamer } from './classes.js';
import type { DiskScope } from './disk-scope.js';
import { errorText } from './errors.js';
import type { SlotEntry } from './frame-builder.js';
import { addPerCpuHist, decodeHistKey, emptyHistValue, perCpuCount, type HistValue } from './layout.js';
import { zeroGroups, type GroupCounts, type UntimedMeter } from './untimed.js';

export interface HarvestDeps {
  readonly hists: BpfMap;
  /** Possible CPUs: the per-CPU values' count. */
  readonly cpus: number;
  readonly nrBuckets: number;
  readonly namer: ClassNamer;
  readonly cgroups: CgroupNamer;
  readonly scope: DiskScope;
  /** Every closed entry read is counted here, emitted or not. */
  readonly untimed: UntimedMeter;
  readonly warn: (message: string) => void;
}

export interface Harvest {
  /** The closed seconds' entries, by second. */
  readonly bySlot: Map<number, SlotEntry[]>;
  /** Per shown disk and op group, the I/Os of the seconds still open. */
  readonly open: Map<number, GroupCounts>;
  /** Every I/O in the entries read (closed and open, any disk or class), for the check against the kernel's own count. */
  readonly closedCount: number;
  readonly openCount: number;
}

export class HistogramHarvester {
  /** Closed-second keys read and emitted whose delete failed (hex): skipped, never counted twice. */
  private readonly harvestedKeys = new Set<string>();

  constructor(private readonly deps: HarvestDeps) {}

  /**
   * Reads and deletes every histogram entry of a closed second (slot < current), and reads
   * (without deleting) the counts of the seconds still open, per shown disk and op group.
   * Entries of seconds already emitted (slot < nextSlot: only after a clock step) are appended
   * to `late`, to be counted in the next second emitted.
   */
  harvest(current: number, nextSlot: number, late: SlotEntry[]): Harvest {
    const { hists, cpus, namer, scope, untimed } = this.deps;
    const stride = hists.valueBufferSize / cpus;
    const bySlot = new Map<number, SlotEntry[]>();
    const open = new Map<number, GroupCounts>();
    const closedKeys: Buffer[] = [];
    let closedCount = 0;
    let openCount = 0;
    // get_next_key + lookup walk the hash under RCU without taking bucket locks (a batch lookup
    // would lock buckets and size its buffer for the whole map: tens of MB per second).
    for (const keyBuf of hists.keys()) {
      if (this.harvestedKeys.size > 0 && this.harvestedKeys.has(keyBuf.toString('hex'))) {
        try {
          hists.delete(keyBuf);
          this.harvestedKeys.delete(keyBuf.toString('hex'));
        } catch {
          // Still there: still skipped.
        }
        continue;
      }
      const valueBuf = hists.lookup(keyBuf);
      if (!valueBuf) continue;
      const key = decodeHistKey(keyBuf);
      const group = namer.group(key.cls);
      const shown = scope.shownDev(key.dev);
      if (key.slot >= current) {
        const n = perCpuCount(valueBuf, stride, cpus);
        openCount += n;
        if (group && shown !== undefined && n > 0) {
          let counts = open.get(shown);
          if (!counts) open.set(shown, (counts = zeroGroups()));
          counts[group] += n;
        }
        continue;
      }
      const value: HistValue = emptyHistValue(this.deps.nrBuckets);
      addPerCpuHist(value, valueBuf, 0, stride, cpus);
      closedCount += value.count;
      if (group && shown !== undefined && value.count > 0) untimed.addCounted(shown, group, value.count);
      const entry: SlotEntry = { dev: key.dev, cls: key.cls, size: key.size, cgroup: this.deps.cgroups.name(key.cgroup), value };
      if (key.slot < nextSlot) late.push(entry);
      else {
        const list = bySlot.get(key.slot);
        if (list) list.push(entry);
        else bySlot.set(key.slot, [entry]);
      }
      closedKeys.push(keyBuf);
    }
    // Closed seconds are never written again, so deleting after reading loses nothing. A key
    // that cannot be deleted is remembered and skipped when read again: never counted twice.
    for (const keyBuf of closedKeys) {
      try {
        hists.delete(keyBuf);
      } catch (err) {
        this.harvestedKeys.add(keyBuf.toString('hex'));
        this.deps.warn(`deleting a harvested histogram entry failed (it will not be counted again): ${errorText(err)}`);
      }
    }
    return { bySlot, open, closedCount, openCount };
  }
}

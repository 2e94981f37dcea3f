/**
 * The per-second harvest of the kernel's histogram table (see blkheat_maps.bpf.h): every entry
 * of a closed second is read, counted in the untimed books and freed; the entries of the seconds
 * still open are only counted.
 *
 * The table is three arrays indexed alike, one partition per CPU: hist_claims (0 = free,
 * BH_CLAIM_BUSY while a program writes the key, else the key's slot, published last),
 * hist_keys and hists. Programs write a second's entries only while it is current, so a closed
 * entry is read, its value zeroed and only then its claim freed: nothing is lost or counted
 * twice. An entry that cannot be freed is remembered and skipped when read again.
 */
import type { BpfMap, BpfObject } from '@blkheat/bpf-loader';
import type { CgroupNamer } from '../host/cgroups.js';
import type { ClassNamer } from './classes.js';
import type { DiskScope } from '../host/disk-scope.js';
import { errorText } from '../errors.js';
import type { SlotEntry } from './frame-builder.js';
import type { CounterName, KernelAbi } from '../abi/kernel-abi.js';
import { addPerCpuHist, decodeHistKey, emptyHistValue, perCpuCount, u32, type HistValue } from '../abi/layout.js';
import { zeroGroups, type GroupCounts, type UntimedMeter } from './untimed.js';

/** The histogram table's maps, in the object and in HistTable's order; the loader sizes each to possible CPUs x one partition. */
export const HIST_TABLE_MAPS = ['hists', 'hist_keys', 'hist_claims'] as const;

export interface HistTable {
  readonly values: BpfMap;
  readonly keys: BpfMap;
  readonly claims: BpfMap;
}

/** The loaded object's histogram table, by the names above. */
export function histTableOf(object: BpfObject): HistTable {
  const [values, keys, claims] = HIST_TABLE_MAPS;
  return { values: object.map(values), keys: object.map(keys), claims: object.map(claims) };
}

export interface HarvestDeps {
  readonly table: HistTable;
  /** The object's records and sizes (its histogram key and value, its claim values). */
  readonly abi: KernelAbi;
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
  /** Entries read and emitted whose freeing failed: skipped, never counted twice, freed again at each harvest. */
  private readonly unfreed = new Set<number>();
  private readonly zeroValue: Buffer;
  /** I/Os read in closed seconds since start. */
  private harvested = 0;
  /** The shortfall found by audit(): I/Os the programs counted that no harvest read. */
  harvestLost = 0;
  private histLost = 0;
  private readonly freeClaim: Buffer;

  constructor(private readonly deps: HarvestDeps) {
    this.zeroValue = Buffer.alloc(deps.table.values.valueBufferSize);
    this.freeClaim = Buffer.alloc(deps.table.claims.valueSize);
  }

  /**
   * Reads and frees every histogram entry of a closed second (slot < current), and reads
   * (without freeing) the counts of the seconds still open, per shown disk and op group.
   * Entries of seconds already emitted (slot < nextSlot: only after a clock step) are appended
   * to `late`, to be counted in the next second emitted. One key may have an entry per CPU (and
   * rarely two on one CPU): the frame adds them up.
   */
  harvest(current: number, nextSlot: number, late: SlotEntry[]): Harvest {
    const { table, namer, scope, untimed, abi } = this.deps;
    const { bh_hist: hist, bh_hist_key: histKey } = abi.records;
    const valueSize = table.values.valueBufferSize;
    const bySlot = new Map<number, SlotEntry[]>();
    const open = new Map<number, GroupCounts>();
    const closed: number[] = [];
    let closedCount = 0;
    let openCount = 0;
    const claims = this.readClaims();
    for (let idx = 0; idx < claims.length; idx++) {
      const claim = claims[idx] as bigint;
      if (claim === 0n || claim === abi.claimBusy) continue;
      if (this.unfreed.has(idx)) {
        if (this.free(idx)) this.unfreed.delete(idx);
        continue;
      }
      const index = u32(idx);
      const keyBuf = table.keys.lookup(index);
      const valueBuf = table.values.lookup(index);
      if (!keyBuf || !valueBuf) continue;
      const key = decodeHistKey(histKey, keyBuf);
      const group = namer.group(key.cls);
      const shown = scope.shownDev(key.dev);
      if (key.slot >= current) {
        const n = perCpuCount(hist, valueBuf, valueSize, 1);
        openCount += n;
        if (group && shown !== undefined && n > 0) {
          let counts = open.get(shown);
          if (!counts) open.set(shown, (counts = zeroGroups()));
          counts[group] += n;
        }
        continue;
      }
      const value: HistValue = emptyHistValue(abi);
      addPerCpuHist(hist, value, valueBuf, 0, valueSize, 1);
      closedCount += value.count;
      if (group && shown !== undefined && value.count > 0) untimed.addCounted(shown, group, value.count);
      const entry: SlotEntry = { dev: key.dev, cls: key.cls, size: key.size, cgroup: this.deps.cgroups.name(key.cgroup), value };
      if (key.slot < nextSlot) late.push(entry);
      else {
        const list = bySlot.get(key.slot);
        if (list) list.push(entry);
        else bySlot.set(key.slot, [entry]);
      }
      closed.push(idx);
    }
    // Closed seconds are never written again, so freeing after reading loses nothing.
    for (const idx of closed) if (!this.free(idx)) this.unfreed.add(idx);
    this.harvested += closedCount;
    return { bySlot, open, closedCount, openCount };
  }

  /**
   * Checks a harvest against the programs' own counters, read just before it. Every I/O they
   * counted is in a closed second read by now or in a second still open: a shortfall means
   * entries were lost between the kernel and the agent. An I/O that found no room in its CPU's
   * partition was never counted there; the untimed books show it, with no latency. Each is said
   * loudly, once per new loss.
   */
  audit(counters: Pick<Record<CounterName, number>, 'counted' | 'histLost'> | undefined, openCount: number): void {
    if (!counters) return;
    const lost = counters.counted - this.harvested - openCount;
    if (lost > this.harvestLost) {
      this.deps.warn(
        `${lost - this.harvestLost} I/O(s) counted by the kernel programs never reached a harvested second (${lost} since start)`,
      );
      this.harvestLost = lost;
    }
    if (counters.histLost > this.histLost) {
      this.deps.warn(
        `${counters.histLost - this.histLost} I/O(s) found no room in the kernel's histogram table (${counters.histLost} since start): they are shown as untimed, with no latency. Too many disks x classes x sizes x cgroups per second, or the agent was stopped too long`,
      );
      this.histLost = counters.histLost;
    }
  }

  /** Every entry's claim, by index: one batch read where the kernel has it. */
  private readClaims(): BigUint64Array {
    const { claims } = this.deps.table;
    const out = new BigUint64Array(claims.maxEntries);
    if (claims.supportsBatch()) {
      const batch = claims.lookupBatch();
      for (let i = 0; i < batch.count; i++) out[batch.keys.readUInt32LE(i * 4)] = batch.values.readBigUInt64LE(i * claims.valueSize);
      return out;
    }
    for (let idx = 0; idx < out.length; idx++) out[idx] = claims.lookup(u32(idx))?.readBigUInt64LE(0) ?? 0n;
    return out;
  }

  /** Zeroes an entry's value, then frees its claim (in that order: a program may claim it at once). */
  private free(idx: number): boolean {
    const index = u32(idx);
    try {
      this.deps.table.values.update(index, this.zeroValue);
      this.deps.table.claims.update(index, this.freeClaim);
      return true;
    } catch (err) {
      this.deps.warn(`freeing a harvested histogram entry failed (it will not be counted again): ${errorText(err)}`);
      return false;
    }
  }
}

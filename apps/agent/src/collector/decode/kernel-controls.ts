/**
 * The agent's side of the kernel programs' knobs and counters: the settings entry (the clock
 * offset and the sampling threshold, written once a second), the per-second sample budget
 * counters (reset ahead of their second), the kernel's event counters (self-metrics), and each
 * disk's running count (what untimed I/Os are measured against).
 */
import type { BpfMap, BpfObject } from '@blkheat/bpf-loader';
import type { OpGroup } from '@blkheat/shared-types';
import type { CounterName, KernelAbi } from '../abi/kernel-abi.js';
import { decodeCounters, decodeDiskCounts, encodeBudget, encodeSettings, u32 } from '../abi/layout.js';
import type { SampleBudget } from './sampling.js';

export class KernelControls {
  private readonly settingsMap: BpfMap;
  private readonly budgetMap: BpfMap;
  private readonly countersMap: BpfMap;
  private readonly diskCountsMap: BpfMap;

  /** @param budget the sample budget, undefined when no samples are taken */
  constructor(
    object: BpfObject,
    private readonly abi: KernelAbi,
    private readonly cpus: number,
    private readonly budget: SampleBudget | undefined,
  ) {
    this.settingsMap = object.map('settings');
    this.budgetMap = object.map('budget');
    this.countersMap = object.map('counters');
    this.diskCountsMap = object.map('disk_counts');
  }

  /** The settings of the coming second: the clock offset, and the sampling threshold for `expectedIos` I/Os. */
  writeSettings(wallOffsetNs: bigint, expectedIos: number): void {
    const settings = encodeSettings(this.abi.records.bh_settings, {
      wallOffsetNs,
      fairThreshold: this.budget?.fairThreshold(expectedIos) ?? 0,
      fairBudget: this.budget?.fairBudget ?? 0,
      outlierBudget: this.budget?.outlierBudget ?? 0,
    });
    this.settingsMap.update(u32(0), settings);
  }

  /** Prepares the budget counters of a coming second (its array entry last served budgetSlots s ago). */
  resetBudget(slot: number): void {
    this.budgetMap.update(u32(slot % this.abi.budgetSlots), encodeBudget(this.abi.records.bh_budget, slot));
  }

  /** The kernel's event counters summed over CPUs; undefined when they cannot be read (object closed). */
  readCounters(): Record<CounterName, number> | undefined {
    try {
      const value = this.countersMap.lookup(u32(0));
      return value
        ? decodeCounters(this.abi.records.bh_counters, value, this.countersMap.valueBufferSize / this.cpus, this.cpus)
        : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Every disk's (or partition's) I/Os counted into a histogram since load, by dev_t and op group,
   * summed over CPUs: one map read, so it can be taken right after /proc/diskstats.
   */
  readDiskCounts(): Map<number, Record<OpGroup, number>> {
    const value = this.diskCountsMap.lookup(u32(0));
    if (!value) throw new Error('disk_counts has no entry 0');
    return decodeDiskCounts(this.abi, value, this.diskCountsMap.valueBufferSize / this.cpus, this.cpus);
  }
}

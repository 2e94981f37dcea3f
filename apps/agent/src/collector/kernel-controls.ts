/**
 * The agent's side of the kernel programs' knobs and counters: the settings entry (the clock
 * offset and the sampling threshold, written once a second), the per-second sample budget
 * counters (reset ahead of their second), the kernel's event counters (self-metrics), and each
 * disk's running count (what untimed I/Os are measured against).
 */
import type { BpfMap, BpfObject } from '@blkheat/bpf-loader';
import type { OpGroup } from '@blkheat/shared-types';
import {
  BUDGET_SLOTS,
  COUNTERS_SIZE,
  decodeCounters,
  decodeDiskCounts,
  encodeBudget,
  encodeSettings,
  u32,
  type CounterName,
} from './layout.js';
import type { SampleBudget } from './sampling.js';

export class KernelControls {
  private readonly settingsMap: BpfMap;
  private readonly budgetMap: BpfMap;
  private readonly countersMap: BpfMap;
  private readonly diskCountsMap: BpfMap;

  /** @param budget the sample budget, undefined when no samples are taken */
  constructor(
    object: BpfObject,
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
    const settings = encodeSettings({
      wallOffsetNs,
      fairThreshold: this.budget?.fairThreshold(expectedIos) ?? 0,
      fairBudget: this.budget?.fairBudget ?? 0,
      outlierBudget: this.budget?.outlierBudget ?? 0,
    });
    this.settingsMap.update(u32(0), settings);
  }

  /** Prepares the budget counters of a coming second (its array entry last served BUDGET_SLOTS s ago). */
  resetBudget(slot: number): void {
    this.budgetMap.update(u32(slot % BUDGET_SLOTS), encodeBudget(slot));
  }

  /** The kernel's event counters summed over CPUs; undefined when they cannot be read (object closed). */
  readCounters(): Record<CounterName, number> | undefined {
    try {
      const value = this.countersMap.lookup(u32(0));
      return value ? decodeCounters(value, this.countersMap.valueBufferSize / this.cpus, this.cpus) : undefined;
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
    return decodeDiskCounts(value, this.diskCountsMap.valueBufferSize / this.cpus, this.cpus);
  }
}

/** Counters of a kernel that counted nothing (what stats() reports when they cannot be read). */
export function zeroCounters(): Record<CounterName, number> {
  return decodeCounters(Buffer.alloc(COUNTERS_SIZE), COUNTERS_SIZE, 1);
}

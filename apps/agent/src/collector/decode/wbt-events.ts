/**
 * wbt's mark per disk (the kernel's wbt_events map: counts since load of wbt's latency windows,
 * bpf/include/blkheat_wbt.bpf.h), turned into the windows since the previous read in which wbt
 * held buffered writes below its default depth: a frame's `wbt`.
 */
import type { BpfMap, BpfObject } from '@blkheat/bpf-loader';
import type { KernelAbi } from '../abi/kernel-abi.js';
import { decodeWbtEvents, u32 } from '../abi/layout.js';

export const WBT_EVENTS_MAP = 'wbt_events';

export class WbtEventReader {
  private readonly map: BpfMap;
  /** Limited windows last read, by dev_t. */
  private readonly seen = new Map<number, number>();

  constructor(
    object: BpfObject,
    private readonly abi: KernelAbi,
  ) {
    this.map = object.map(WBT_EVENTS_MAP);
  }

  /** Windows in which wbt held writes back since the previous call, by disk dev_t (whole disks); disks with none are left out. */
  read(): Map<number, number> {
    const out = new Map<number, number>();
    for (let i = 0; i < this.map.maxEntries; i++) {
      const value = this.map.lookup(u32(i));
      if (!value) continue;
      const { dev, limited } = decodeWbtEvents(this.abi.records.bh_wbt_events, value);
      if (dev === 0) continue;
      const since = limited - (this.seen.get(dev) ?? 0);
      this.seen.set(dev, limited);
      if (since > 0) out.set(dev, since);
    }
    return out;
  }
}

/**
 * I/Os in flight, once a second: the kernel program bh_inflight walks blkheat's per-request
 * slots, counts every request the kernel says is with the driver (MQ_RQ_IN_FLIGHT) per disk with
 * the oldest start (exact however many there are), and lists the first inflightMax it meets.
 * Here they become, per shown disk, the count, the oldest age and the oldest few listed I/Os.
 * An I/O stuck for 30 s is thus visible while it is stuck, not only when (if) it completes.
 * The scan also counts the bios still waiting for a request (a frozen queue, a full tag set, QoS
 * throttling): per disk, how many and the oldest submission, whether the queue is frozen, and the
 * tasks asleep for one of its tags (DiskFrame.tags_full).
 */
import { INFLIGHT_LISTED, type InflightIo, type InflightState } from '@blkheat/shared-types';
import type { BpfMap, BpfObject } from '@blkheat/bpf-loader';
import type { KernelAbi } from '../abi/kernel-abi.js';
import { decodeInflight, decodeInflightDisk, decodeInflightSummary, u32, type RawInflight } from '../abi/layout.js';

export const INFLIGHT_PROGRAM = 'bh_inflight';

export interface InflightScan {
  /** Per shown disk. */
  readonly byDisk: Map<number, InflightState>;
  /** In flight in all, listed or not (the kernel lists at most KernelAbi.inflightMax). */
  readonly found: number;
  /** Per shown disk with bios waiting: the tasks asleep for a tag of its queue (the tags mark). */
  readonly tagSleepers: Map<number, number>;
}

/** One shown disk's requests with the driver and bios waiting for a request. */
interface DiskTotal {
  n: number;
  oldest: bigint;
  waiting: number;
  oldestSubmit: bigint;
  frozen: boolean;
  tagSleepers: number;
}

export class InflightScanner {
  private readonly summary: BpfMap;
  private readonly list: BpfMap;
  private readonly disks: BpfMap;

  /** The object's maps are checked against its records by the loader (checkLayout). */
  constructor(
    private readonly object: BpfObject,
    private readonly abi: KernelAbi,
  ) {
    this.summary = object.map('inflight_summary');
    this.list = object.map('inflight_list');
    this.disks = object.map('inflight_disks');
  }

  /**
   * Runs the scan and groups what it found.
   * @param shownDev the shown disk of a kernel dev_t (whole disk, or itself with partitions), or undefined to skip it
   * @param className the class name of a class code
   */
  scan(shownDev: (dev: number) => number | undefined, className: (cls: number) => string): InflightScan {
    // The per-disk counts are the kernel program's to fill, from empty.
    for (const key of this.disks.keys()) this.disks.delete(key);
    this.object.program(INFLIGHT_PROGRAM).run();
    const head = this.summary.lookup(u32(0));
    if (!head) return { byDisk: new Map(), found: 0, tagSleepers: new Map() };
    const { records } = this.abi;
    const summary = decodeInflightSummary(records.bh_inflight_summary, head);
    const age = (t: bigint): number => (summary.nowNs > t ? Number(summary.nowNs - t) : 0);
    // Every I/O in flight, per shown disk (partitions rolled up when they are).
    const totals = new Map<number, DiskTotal>();
    for (const key of this.disks.keys()) {
      const value = this.disks.lookup(key);
      if (!value) continue;
      const d = decodeInflightDisk(records.bh_inflight_disk, key, value);
      const dev = shownDev(d.dev);
      if (dev === undefined || (d.count === 0 && d.waiting === 0)) continue;
      let t = totals.get(dev);
      if (!t) totals.set(dev, (t = { n: 0, oldest: 0n, waiting: 0, oldestSubmit: 0n, frozen: false, tagSleepers: 0 }));
      t.n += d.count;
      if (d.count > 0 && (t.oldest === 0n || d.oldestStartNs < t.oldest)) t.oldest = d.oldestStartNs;
      t.waiting += d.waiting;
      if (d.waiting > 0 && (t.oldestSubmit === 0n || d.oldestSubmitNs < t.oldestSubmit)) t.oldestSubmit = d.oldestSubmitNs;
      t.frozen ||= d.frozen;
      // A disk's partitions share its queue: each of them read the same sleepers.
      t.tagSleepers = Math.max(t.tagSleepers, d.tagSleepers);
    }
    const perDisk = new Map<number, RawInflight[]>();
    for (let i = 0; i < Math.min(summary.listed, this.abi.inflightMax); i++) {
      const buf = this.list.lookup(u32(i));
      if (!buf) continue;
      const io = decodeInflight(records.bh_inflight_io, buf);
      const dev = shownDev(io.dev);
      if (dev === undefined) continue;
      const list = perDisk.get(dev);
      if (list) list.push(io);
      else perDisk.set(dev, [io]);
    }
    const byDisk = new Map<number, InflightState>();
    const tagSleepers = new Map<number, number>();
    for (const [dev, total] of totals) {
      if (total.tagSleepers > 0) tagSleepers.set(dev, total.tagSleepers);
      const ios = perDisk.get(dev) ?? [];
      ios.sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
      const listed: InflightIo[] = ios.slice(0, INFLIGHT_LISTED).map((io) => ({
        c: className(io.cls),
        pid: io.pid,
        comm: io.comm,
        sector: io.sector,
        bytes: io.bytes,
        age_ns: age(io.startNs),
        dev_age_ns: io.issueNs === 0n ? null : age(io.issueNs),
      }));
      byDisk.set(dev, {
        n: total.n,
        oldest_ns: total.n > 0 ? age(total.oldest) : 0,
        ios: listed,
        ...(total.waiting > 0 ? { waiting: total.waiting, oldest_wait_ns: age(total.oldestSubmit) } : {}),
        ...(total.frozen ? { frozen: true as const } : {}),
      });
    }
    return { byDisk, found: summary.found, tagSleepers };
  }
}

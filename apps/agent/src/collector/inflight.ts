/**
 * I/Os in flight, once a second: the kernel program bh_inflight walks blkheat's per-request
 * slots and lists every request the kernel says is with the driver (MQ_RQ_IN_FLIGHT). Here the
 * list becomes, per shown disk, the count, the oldest age and the oldest few I/Os. An I/O stuck
 * for 30 s is thus visible while it is stuck, not only when (if) it completes.
 */
import { INFLIGHT_LISTED, type InflightIo, type InflightState } from '@blkheat/shared-types';
import type { BpfMap, BpfObject } from '@blkheat/bpf-loader';
import { decodeInflight, decodeInflightSummary, INFLIGHT_IO_SIZE, INFLIGHT_MAX, u32, type RawInflight } from './layout.js';

export const INFLIGHT_PROGRAM = 'bh_inflight';

export interface InflightScan {
  /** Per shown disk. */
  readonly byDisk: Map<number, InflightState>;
  /** In flight in all, listed or not (the kernel lists at most INFLIGHT_MAX). */
  readonly found: number;
}

export class InflightScanner {
  private readonly summary: BpfMap;
  private readonly list: BpfMap;

  constructor(private readonly object: BpfObject) {
    this.summary = object.map('inflight_summary');
    this.list = object.map('inflight_list');
    if (this.list.valueSize !== INFLIGHT_IO_SIZE || this.list.maxEntries !== INFLIGHT_MAX) {
      throw new Error(
        `kernel object layout mismatch in map inflight_list (value ${this.list.valueSize}/${INFLIGHT_IO_SIZE} bytes, ${this.list.maxEntries}/${INFLIGHT_MAX} entries): rebuild bpf/ and the agent together`,
      );
    }
  }

  /**
   * Runs the scan and groups what it found.
   * @param shownDev the shown disk of a kernel dev_t (whole disk, or itself with partitions), or undefined to skip it
   * @param className the class name of a class code
   */
  scan(shownDev: (dev: number) => number | undefined, className: (cls: number) => string): InflightScan {
    this.object.program(INFLIGHT_PROGRAM).run();
    const head = this.summary.lookup(u32(0));
    if (!head) return { byDisk: new Map(), found: 0 };
    const summary = decodeInflightSummary(head);
    const perDisk = new Map<number, RawInflight[]>();
    for (let i = 0; i < Math.min(summary.listed, INFLIGHT_MAX); i++) {
      const buf = this.list.lookup(u32(i));
      if (!buf) continue;
      const io = decodeInflight(buf);
      const dev = shownDev(io.dev);
      if (dev === undefined) continue;
      const list = perDisk.get(dev);
      if (list) list.push(io);
      else perDisk.set(dev, [io]);
    }
    const byDisk = new Map<number, InflightState>();
    for (const [dev, ios] of perDisk) {
      ios.sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
      const age = (t: bigint): number => (summary.nowNs > t ? Number(summary.nowNs - t) : 0);
      const listed: InflightIo[] = ios.slice(0, INFLIGHT_LISTED).map((io) => ({
        c: className(io.cls),
        pid: io.pid,
        comm: io.comm,
        sector: io.sector,
        bytes: io.bytes,
        age_ns: age(io.startNs),
        dev_age_ns: io.issueNs === 0n ? null : age(io.issueNs),
      }));
      byDisk.set(dev, { n: ios.length, oldest_ns: listed[0]?.age_ns ?? 0, ios: listed });
    }
    return { byDisk, found: summary.found };
  }
}

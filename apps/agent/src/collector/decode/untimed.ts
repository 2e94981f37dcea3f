/**
 * Untimed I/Os: what /proc/diskstats counted that no blkheat probe saw. The kernel accounts a
 * few completions for which no BPF program on the block tracepoints runs (on these machines:
 * those completed in softirq on top of one thread of the sandbox's init; see
 * docs/accounting.md); blkheat does not guess them, it measures them against the kernel's own
 * counters, per disk and op group.
 *
 * Each I/O reaches our count (block_rq_complete, at the top of blk_update_request) before the
 * kernel's (blk_account_io_done / blk_account_io_flush, later on the same path). So if
 * diskstats is read first (D at t1) and our counts after (C, every value read after t1),
 *
 *     D - base - C  <=  kernel(t1) - ours(t1)  <=  unseen by t1,
 *
 * an estimate that can only be low, never high; it is exact whenever the disk is quiet between
 * the two reads. The running maximum of it, per disk and group, is the untimed count: it only
 * grows, never counts an I/O twice, and never puts one on another disk.
 *
 * C is the kernel programs' own running count per disk (map disk_counts): one map read, well
 * under a millisecond after diskstats, taken just after each second closes, so what it finds is
 * dated to the second that just closed. C is not taken from the harvest because the harvest's
 * counts (closed seconds plus the open one, read over milliseconds, 120 ms after the second
 * closed) make the estimate low, and find the rest a second late, whenever the disk is busy
 * then; they are only the fallback (harvestedPlus), should the kernel's per-disk table overflow.
 */
import { readFileSync } from 'node:fs';
import { OP_GROUPS, type OpGroup } from '@blkheat/shared-types';
import { parseDevString } from '../abi/layout.js';

/** Completed I/Os per op group, as /proc/diskstats counts them. */
export type GroupCounts = Record<OpGroup, number>;

export function zeroGroups(): GroupCounts {
  return { read: 0, write: 0, discard: 0, flush: 0 };
}

/** /proc/diskstats by dev_t: reads, writes, discards (4.18+) and flushes (5.5+) completed. */
export function readDiskstats(path = '/proc/diskstats'): Map<number, GroupCounts> {
  const out = new Map<number, GroupCounts>();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 14) continue;
    const dev = parseDevString(`${f[0]}:${f[1]}`);
    if (dev === undefined) continue;
    const num = (i: number): number => (f[i] === undefined ? 0 : Number(f[i]));
    out.set(dev, { read: num(3), write: num(7), discard: num(14), flush: num(18) });
  }
  return out;
}

interface DiskBooks {
  /** diskstats at our start (0 for a disk that appeared later), moved on when the disk was reset. */
  base: GroupCounts;
  /** The raw diskstats lines last read: the device's own and, in partitions mode, its partitions'. */
  lastRaw: Map<number, GroupCounts> | undefined;
  /** Our counts of closed (harvested) seconds, since start. */
  counted: GroupCounts;
  /** Untimed I/Os found so far. */
  untimed: GroupCounts;
}

/**
 * The books of one collector: what is measured per "shown" disk, i.e. the whole disk (partitions
 * rolled up, as diskstats' own whole-disk line does) or, with partitions, each device itself.
 */
export class UntimedMeter {
  private readonly books = new Map<number, DiskBooks>();
  private readonly atStart: Map<number, GroupCounts>;

  /**
   * @param stats reads /proc/diskstats (a parameter for tests)
   * @param partsOf in partitions mode, the partitions of a whole disk (their I/O is in the whole
   *   disk's diskstats line but counted on the partitions), else undefined
   */
  constructor(
    private readonly stats: () => Map<number, GroupCounts> = readDiskstats,
    private readonly partsOf?: (dev: number) => readonly number[],
  ) {
    // Read before the probes are attached: an I/O that completes between the two is counted by
    // the kernel and seen by no probe, which is exactly an untimed I/O.
    this.atStart = this.stats();
  }

  /** Adds the counts of a closed second (per shown disk and group). */
  addCounted(dev: number, group: OpGroup, n: number): void {
    const b = this.booksOf(dev, undefined);
    b.counted[group] += n;
  }

  /** Reads diskstats now; call before reading the kernel's counts for `measure`. */
  snapshot(): Map<number, GroupCounts> {
    return this.stats();
  }

  /**
   * Our running counts per shown disk as the harvests know them: the closed seconds harvested so
   * far plus `open`, the counts of the seconds still open read by the latest harvest. The
   * fallback for `measure` when the kernel's per-disk counts cannot be trusted.
   */
  harvestedPlus(open: ReadonlyMap<number, GroupCounts>): Map<number, GroupCounts> {
    const out = new Map<number, GroupCounts>();
    for (const dev of new Set([...this.books.keys(), ...open.keys()])) {
      const sum = zeroGroups();
      const counted = this.books.get(dev)?.counted;
      const live = open.get(dev);
      for (const g of OP_GROUPS) sum[g] = (counted?.[g] ?? 0) + (live?.[g] ?? 0);
      out.set(dev, sum);
    }
    return out;
  }

  /**
   * New untimed I/Os per shown disk, from a diskstats snapshot and our running counts per shown
   * disk (`ours`: every I/O counted since load), read after it. Only disks in `disks` are
   * measured.
   */
  measure(
    snapshot: ReadonlyMap<number, GroupCounts>,
    ours: ReadonlyMap<number, GroupCounts>,
    disks: Iterable<number>,
  ): Map<number, Partial<GroupCounts>> {
    const found = new Map<number, Partial<GroupCounts>>();
    for (const dev of disks) {
      const kernel = this.kernelCounts(snapshot, dev);
      if (!kernel) continue;
      const b = this.booksOf(dev, snapshot);
      const seen = ours.get(dev);
      // Only a raw line going back (or partitions coming and going) means the device was made
      // again. A whole disk's own count (its line minus its partitions') may dip for a moment
      // when an I/O completes between the reads of the two lines: that is no reset, only a low
      // estimate, which the running maximum ignores.
      const remade = this.remade(b, snapshot, dev);
      for (const g of OP_GROUPS) {
        const counted = seen?.[g] ?? 0;
        if (remade) b.base[g] = kernel[g] - counted - b.untimed[g];
        const estimate = kernel[g] - b.base[g] - counted;
        if (estimate > b.untimed[g]) {
          const delta = estimate - b.untimed[g];
          b.untimed[g] = estimate;
          let out = found.get(dev);
          if (!out) found.set(dev, (out = {}));
          out[g] = delta;
        }
      }
    }
    return found;
  }

  /** Untimed I/Os found since start, per group (for self-metrics). */
  total(dev: number): GroupCounts | undefined {
    return this.books.get(dev)?.untimed;
  }

  private kernelCounts(snapshot: ReadonlyMap<number, GroupCounts>, dev: number): GroupCounts | undefined {
    const own = snapshot.get(dev);
    if (!own) return undefined;
    const parts = this.partsOf?.(dev) ?? [];
    if (parts.length === 0) return own;
    const rest = { ...own };
    for (const p of parts) {
      const s = snapshot.get(p);
      if (s) for (const g of OP_GROUPS) rest[g] -= s[g];
    }
    return rest;
  }

  private booksOf(dev: number, snapshot: ReadonlyMap<number, GroupCounts> | undefined): DiskBooks {
    let b = this.books.get(dev);
    if (!b) {
      // A disk known at start begins at its counters then; one made since began at zero.
      const start = this.atStart.has(dev) ? (this.kernelCounts(this.atStart, dev) ?? zeroGroups()) : zeroGroups();
      const seen = snapshot ?? (this.atStart.has(dev) ? this.atStart : undefined);
      b = { base: { ...start }, lastRaw: seen && this.rawLines(seen, dev), counted: zeroGroups(), untimed: zeroGroups() };
      this.books.set(dev, b);
    }
    return b;
  }

  /** The raw lines a shown disk's count is made of: its own, and its partitions' in partitions mode. */
  private rawLines(snapshot: ReadonlyMap<number, GroupCounts>, dev: number): Map<number, GroupCounts> {
    const out = new Map<number, GroupCounts>();
    for (const d of [dev, ...(this.partsOf?.(dev) ?? [])]) {
      const s = snapshot.get(d);
      if (s) out.set(d, { ...s });
    }
    return out;
  }

  /** True when the device (or one of its partitions) was made again since the last read; moves the books' raw lines on. */
  private remade(b: DiskBooks, snapshot: ReadonlyMap<number, GroupCounts>, dev: number): boolean {
    const now = this.rawLines(snapshot, dev);
    const last = b.lastRaw;
    b.lastRaw = now;
    if (!last) return false; // first sight of a disk made since start: its books began at zero
    let remade = now.size !== last.size;
    for (const [d, s] of now) {
      const before = last.get(d);
      if (!before || OP_GROUPS.some((g) => s[g] < before[g])) remade = true;
    }
    return remade;
  }
}

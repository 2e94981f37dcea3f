/**
 * Conservation checks against /proc/diskstats: quiet second boundaries (no I/O in flight or
 * completing around them), and frames summed per disk and diskstats op group, so that frame sums
 * between two boundaries compare exactly with the diskstats delta.
 */
import { classOp, OP_GROUPS, type Frame, type OpGroup } from '@blkheat/shared-types';
import { completedRequests, readDiskstats, type DiskStats } from './diskstats.js';
import { sleepUntilSecond } from './clock.js';

export interface QuietBoundary {
  /** Unix second starting at the boundary. */
  readonly second: number;
  /** /proc/diskstats read just after it. */
  readonly stats: Map<string, DiskStats>;
}

/**
 * A wall-clock second boundary with no I/O completing on the named disks within `marginMs`
 * of it on either side, and /proc/diskstats as of that boundary. Comparing frame sums between
 * two such boundaries with diskstats deltas is then exact, whatever the disks do in between.
 */
export async function quietBoundary(names: readonly string[], marginMs = 4, attempts = 30): Promise<QuietBoundary> {
  for (let i = 0; i < attempts; i++) {
    const second = Math.floor(Date.now() / 1000) + 1;
    await sleepUntilSecond(second, -marginMs);
    const before = readDiskstats();
    await sleepUntilSecond(second, marginMs);
    const after = readDiskstats();
    if (Date.now() > second * 1000 + 3 * marginMs) continue; // woke up too late to trust the window
    const quiet = names.every((n) => {
      const a = before.get(n);
      const b = after.get(n);
      return a !== undefined && b !== undefined && completedRequests(a) === completedRequests(b) && b.inFlight === 0;
    });
    if (quiet) return { second, stats: after };
  }
  throw new Error(`no quiet second boundary on ${names.join(', ')} in ${attempts} s`);
}

/**
 * Per disk and /proc/diskstats op group, over frames with from <= ts < to: the I/Os counted in
 * classes diskstats counts (not `pt`), and the untimed ones. By class name, which is enough for
 * the ops tests make (Read, Write, Flush, Discard); the agent itself groups by op value.
 */
export function groupCountsByDisk(
  frames: readonly Frame[],
  from: number,
  to: number,
): Map<string, { counted: Record<OpGroup, number>; untimed: Record<OpGroup, number> }> {
  const out = new Map<string, { counted: Record<OpGroup, number>; untimed: Record<OpGroup, number> }>();
  const zero = (): Record<OpGroup, number> => ({ read: 0, write: 0, discard: 0, flush: 0 });
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    for (const d of f.disks) {
      let acc = out.get(d.dev);
      if (!acc) out.set(d.dev, (acc = { counted: zero(), untimed: zero() }));
      for (const c of d.cls) {
        if (c.pt) continue;
        const op = classOp(c.c);
        const g: OpGroup = op === 'Read' ? 'read' : op === 'Flush' ? 'flush' : op === 'Discard' ? 'discard' : 'write';
        acc.counted[g] += c.n;
      }
      for (const g of OP_GROUPS) acc.untimed[g] += d.untimed?.[g] ?? 0;
    }
  }
  return out;
}

/**
 * The I/O pressure of the cgroups block I/O was charged to lately (Frame.cg_psi): each one's
 * cgroup2 `io.pressure`, read as the host's is (host/pressure.ts: a reader per file, the stall
 * between two reads scaled to one second, nothing for a first read or a late tick).
 *
 * Which file a cgroup's path names: with the io controller on cgroup2, `io.pressure` in the
 * cgroup's own directory. With it on cgroup v1 (blkio), PSI is not in that hierarchy at all; the
 * cgroup2 directory of the same path is read instead, where there is a cgroup2 mount with one
 * (systemd's hybrid layout creates each unit's cgroup in both trees, with the same tasks). A path
 * with no such directory gives nothing, said in the log once per path. Special names (no cgroup,
 * the fold of the rest, ids of removed cgroups) have no directory and are not read.
 *
 * A cgroup is read while it was charged I/O in the last KEEP_READS reads (a cgroup whose I/O is
 * throttled may complete none in a second: its pressure is then what matters), at most
 * CGROUP_PSI_LISTED of them, the most recently charged first.
 */
import { join } from 'node:path';
import { CGROUP_NONE, CGROUP_OTHER, CGROUP_PSI_LISTED, type CgroupPressure } from '@blkheat/shared-types';
import type { CgroupHierarchy } from './cgroups.js';
import { PressureReader } from './pressure.js';

/** Reads a cgroup stays read for after it was last charged I/O. */
export const KEEP_READS = 60;
/** Cgroups without a file remembered at most, and said in the log at most. */
const MAX_MISSING = 4096;
const SAY_MISSING = 10;

/** Where to read cgroups' io.pressure, or why not (for the log). */
export type PressureRoot = { readonly mountPoint: string; readonly root: string; readonly mirror: boolean } | { readonly none: string };

/**
 * The directory tree cgroups' io.pressure is read in, given the io controller's hierarchy and
 * this machine's cgroup2 mount (findCgroup2Mount).
 */
export function pressureRoot(io: CgroupHierarchy | undefined, cgroup2: CgroupHierarchy | undefined): PressureRoot {
  if (!io) return { none: 'no cgroup hierarchy holds the io controller' };
  if (io.version === 2) return { mountPoint: io.mountPoint, root: io.root, mirror: false };
  if (!cgroup2) return { none: 'the io controller is on cgroup v1 (blkio), which has no io.pressure, and cgroup2 is not mounted' };
  return { mountPoint: cgroup2.mountPoint, root: cgroup2.root, mirror: true };
}

/** The io.pressure file of cgroup `path` under `root`, or undefined for a name that is not a path (or outside the mount). */
export function pressureFile(root: { readonly mountPoint: string; readonly root: string }, path: string): string | undefined {
  if (path === CGROUP_NONE || path === CGROUP_OTHER || !path.startsWith('/') || path.split('/').includes('..')) return undefined;
  const base = root.root === '/' ? '' : root.root.replace(/\/$/, '');
  if (base !== '' && path !== base && !path.startsWith(`${base}/`)) return undefined;
  return join(root.mountPoint, path.slice(base.length), 'io.pressure');
}

export interface CgroupPressureOptions {
  /** Said once per cgroup whose file is not there, and once for a root that cannot be read. */
  readonly log?: (line: string) => void;
  /** Said once when a file cannot be read or parsed. */
  readonly warn?: (message: string) => void;
  /** CLOCK_MONOTONIC in ns (for the readers; default process.hrtime). */
  readonly now?: () => bigint;
}

export class CgroupPressureReader {
  /** Per cgroup path: its reader and the read it was last charged I/O at. */
  private readonly readers = new Map<string, { readonly reader: PressureReader; lastCharged: number }>();
  private reads = 0;
  private warned = false;
  /** Cgroups whose file is not there: not tried again. */
  private readonly missing = new Set<string>();
  private saidMissing = 0;

  constructor(
    private readonly root: PressureRoot,
    private readonly options: CgroupPressureOptions = {},
  ) {
    if ('none' in root) options.log?.(`no per-cgroup I/O pressure (${root.none}): frames carry no cg_psi`);
    else if (root.mirror)
      options.log?.(
        `per-cgroup I/O pressure from ${root.mountPoint} (cgroup2), the io controller being on cgroup v1: each cgroup's path read there`,
      );
  }

  /** The pressure since the previous read of each cgroup read now; `charged`: cgroups charged I/O since the previous read. */
  read(charged: Iterable<string>): CgroupPressure[] | undefined {
    const root = this.root;
    if ('none' in root) return undefined;
    this.reads++;
    for (const g of charged) {
      const known = this.readers.get(g);
      if (known) {
        known.lastCharged = this.reads;
        continue;
      }
      const file = pressureFile(root, g);
      if (file === undefined || this.missing.has(g)) continue;
      const reader = new PressureReader({
        path: file,
        ...(this.options.now ? { now: this.options.now } : {}),
        log: () => this.noFile(g, file),
        warn: (message) => this.warnOnce(message),
      });
      this.readers.set(g, { reader, lastCharged: this.reads });
    }
    // Forget cgroups not charged lately, then keep the most recently charged.
    const kept = [...this.readers.entries()]
      .filter(([, r]) => this.reads - r.lastCharged < KEEP_READS)
      .sort(([, a], [, b]) => b.lastCharged - a.lastCharged)
      .slice(0, CGROUP_PSI_LISTED);
    if (kept.length !== this.readers.size) {
      this.readers.clear();
      for (const [g, r] of kept) this.readers.set(g, r);
    }
    const out: CgroupPressure[] = [];
    for (const [g, r] of this.readers) {
      const p = r.reader.read();
      if (r.reader.unavailable) this.readers.delete(g);
      if (p) out.push({ g, some_us: p.some_us, full_us: p.full_us });
    }
    return out;
  }

  private noFile(g: string, file: string): void {
    // Bounded: cgroups come and go (a path removed and made again is read again after a clear).
    if (this.missing.size >= MAX_MISSING) this.missing.clear();
    this.missing.add(g);
    if (this.saidMissing++ < SAY_MISSING)
      this.options.log?.(
        `no I/O pressure for cgroup ${g} (no ${file}): not in cg_psi${this.saidMissing === SAY_MISSING ? ' (further ones not said)' : ''}`,
      );
  }

  private warnOnce(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.options.warn?.(`per-cgroup I/O pressure: ${message}`);
  }
}

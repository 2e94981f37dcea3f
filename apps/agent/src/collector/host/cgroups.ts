/**
 * Names the cgroups block I/O is charged to. The kernel charges each bio to a blkcg: a cgroup of
 * whichever hierarchy holds the io controller (cgroup v1 "blkio", or cgroup2 "io"). The BPF
 * programs report that cgroup's kernfs id, which on 64-bit kernels is the inode number of the
 * cgroup's directory; names are paths inside that hierarchy ("/" for its root), as
 * /proc/<pid>/cgroup prints them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CGROUP_NONE } from '@blkheat/shared-types';

/** Where the io controller's hierarchy is mounted, and which version it is. */
export interface CgroupHierarchy {
  readonly mountPoint: string;
  /** The mount's root inside the hierarchy ("/" unless a sub-tree is mounted, as in containers). */
  readonly root: string;
  readonly version: 1 | 2;
}

/** Directories walked per scan at most: a bound on the time one unknown id can cost. */
const MAX_DIRS = 20_000;
/** An unknown id triggers a rescan at most this often. */
const RESCAN_MIN_MS = 2_000;
/** Names kept at most (cgroups come and go; ids are never reused). */
const MAX_NAMES = 100_000;

/**
 * Finds the io controller's hierarchy in a mountinfo text: a cgroup v1 mount with the blkio
 * controller wins (the controller is then bound there), else the cgroup2 mount.
 */
export function findIoHierarchy(mountinfo: string): CgroupHierarchy | undefined {
  let v2: CgroupHierarchy | undefined;
  for (const line of mountinfo.split('\n')) {
    // id parent maj:min root mount-point options [optional fields...] - fstype source super-options
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    const fields = pre.split(' ');
    const [fstype, , superOptions] = post.split(' ');
    const root = unescapeMountField(fields[3] ?? '/');
    const mountPoint = unescapeMountField(fields[4] ?? '');
    if (!mountPoint) continue;
    if (fstype === 'cgroup' && (superOptions ?? '').split(',').includes('blkio')) return { mountPoint, root, version: 1 };
    if (fstype === 'cgroup2' && !v2) v2 = { mountPoint, root, version: 2 };
  }
  return v2;
}

/** This process's mountinfo, or '' without procfs (then every cgroup is shown by its id, and no cgroup's pressure is read). */
export function readMountinfo(): string {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return '';
  }
}

/** The first cgroup2 mount in a mountinfo text (undefined: none), whichever controllers it holds. */
export function findCgroup2Mount(mountinfo: string): CgroupHierarchy | undefined {
  return findIoHierarchy(
    mountinfo
      .split('\n')
      .filter((line) => line.split(' - ')[1]?.startsWith('cgroup2 '))
      .join('\n'),
  );
}

/** mountinfo escapes space, tab, newline and backslash as \\ooo. */
function unescapeMountField(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

export class CgroupNamer {
  private readonly names = new Map<bigint, string>();
  private lastScanMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly hierarchy: CgroupHierarchy | undefined,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** The namer for this machine's io hierarchy (from /proc/self/mountinfo). */
  static forThisMachine(): CgroupNamer {
    return new CgroupNamer(findIoHierarchy(readMountinfo()));
  }

  get source(): CgroupHierarchy | undefined {
    return this.hierarchy;
  }

  /** The path of cgroup `id` (0n: CGROUP_NONE); "cgroup#ID" when it cannot be found. */
  name(id: bigint): string {
    if (id === 0n) return CGROUP_NONE;
    const known = this.names.get(id);
    if (known !== undefined) return known;
    if (this.nowMs() - this.lastScanMs >= RESCAN_MIN_MS) {
      this.scan();
      const found = this.names.get(id);
      if (found !== undefined) return found;
    }
    return `cgroup#${id}`;
  }

  /** Walks the hierarchy, breadth first, noting each directory's inode number as its id. */
  private scan(): void {
    this.lastScanMs = this.nowMs();
    if (!this.hierarchy) return;
    if (this.names.size > MAX_NAMES) this.names.clear();
    const { mountPoint, root } = this.hierarchy;
    const queue: string[] = [''];
    for (let i = 0; i < queue.length && i < MAX_DIRS; i++) {
      const rel = queue[i] as string;
      const dir = join(mountPoint, rel);
      try {
        const ino = statSync(dir, { bigint: true }).ino;
        this.names.set(ino, joinCgroupPath(root, rel));
        for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) queue.push(`${rel}/${entry.name}`);
      } catch {
        // Removed while we walked: it will be named by id.
      }
    }
  }
}

function joinCgroupPath(root: string, rel: string): string {
  const base = root === '/' ? '' : root.replace(/\/$/, '');
  return `${base}${rel}` || '/';
}

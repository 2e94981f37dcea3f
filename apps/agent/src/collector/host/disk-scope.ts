/**
 * Which disks the collector traces and shows (--disk, --partitions): the disk an I/O is shown
 * on, the kernel's disk filter, and the disks whose untimed I/Os are measured.
 */
import type { BpfObject } from '@blkheat/bpf-loader';
import type { DiskInfo } from '@blkheat/shared-types';
import { DeviceRegistry } from './devices.js';
import { CollectorError } from '../errors.js';
import { parseDevString, u32 } from '../abi/layout.js';

export class DiskScope {
  private constructor(
    readonly devices: DeviceRegistry,
    /** Partitions are shown as their own disks instead of rolled up into their disk. */
    readonly partitions: boolean,
    /** The shown disks traced (dev_t after roll-up); undefined = every disk. */
    readonly only: ReadonlySet<number> | undefined,
  ) {}

  /** The scope of `--disk NAME...` (none = every disk); a name that does not exist is a CollectorError. */
  static of(devices: DeviceRegistry, names: readonly string[], partitions: boolean): DiskScope {
    if (names.length === 0) return new DiskScope(devices, partitions, undefined);
    const devs = new Set<number>();
    for (const name of names) {
      const dev = devices.lookup(name);
      if (dev === undefined) {
        throw new CollectorError(`disk '${name}' does not exist (disks here: ${devices.listWholeDisks().join(', ') || 'none'})`);
      }
      const id = devices.resolve(dev);
      if (!partitions) devs.add(id.wholeDev);
      // With partitions a whole disk names itself and its partitions, each shown on its own.
      else for (const d of id.isPartition ? [dev] : devices.devsOfDisk(dev)) devs.add(d);
    }
    return new DiskScope(devices, partitions, devs);
  }

  /** Whether shown disk `dev` is traced. */
  includes(dev: number): boolean {
    return !this.only || this.only.has(dev);
  }

  /** The disk an I/O of kernel dev_t `dev` is shown on (whole disk, or itself with --partitions); undefined if filtered out. */
  shownDev(dev: number): number | undefined {
    const shown = this.partitions ? dev : this.devices.resolve(dev).wholeDev;
    return this.includes(shown) ? shown : undefined;
  }

  /** Disks whose untimed I/Os are measured: request-based ones (bio-based disks are timed per bio, see docs/accounting.md). */
  *measuredDisks(known: readonly DiskInfo[]): Iterable<number> {
    for (const d of known) {
      if (d.kind !== 'request' || !d.present) continue;
      const dev = parseDevString(d.dev);
      if (dev === undefined) continue;
      const devs = this.partitions ? this.devices.devsOfDisk(dev) : [dev];
      for (const x of devs) if (this.includes(x)) yield x;
    }
  }

  /** Tells the kernel which dev_t to trace under --disk: the disks and their partitions (those made since start too). */
  syncKernelFilter(object: BpfObject): void {
    if (!this.only) return;
    const filter = object.map('disk_filter');
    for (const dev of this.only) {
      const devs = this.partitions ? [dev] : this.devices.devsOfDisk(dev);
      for (const d of devs) filter.update(u32(d), Buffer.from([1]));
    }
  }
}

/**
 * Throws the CollectorError DiskScope.of would for a name of `names` that names no disk here:
 * `serve --disk` checks its disks before it makes or takes a data directory for them.
 */
export function checkDiskNames(names: readonly string[], sysfs?: string): void {
  DiskScope.of(new DeviceRegistry(sysfs), names, false);
}

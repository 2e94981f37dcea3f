/**
 * collector/host/ discovers the machine the collector runs on: its block devices (sysfs), the
 * disks in scope (--disk, --partitions), its cgroups, the running kernel's facts (BTF) and the
 * wall clock against the kernel's monotonic one. It decodes no kernel record: it imports nothing
 * from decode/.
 *
 * This file: block devices by kernel dev_t, resolved from sysfs: names (loop devices attached
 * after start included), partitions and their whole disk, request- vs bio-based, size and model.
 * Devices that go away keep their last identity, marked not present.
 */
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { DiskInfo } from '@blkheat/shared-types';
import { devString, parseDevString } from '../abi/layout.js';

export interface DeviceIdentity extends DiskInfo {
  /** dev_t of the whole disk (itself for a whole disk). */
  readonly wholeDev: number;
  readonly isPartition: boolean;
}

export class DeviceRegistry {
  private readonly known = new Map<number, DeviceIdentity>();

  constructor(private readonly sysfs = '/sys') {}

  /** Identity of a dev_t, resolving it from sysfs the first time (or again if it was unknown or gone). */
  resolve(dev: number): DeviceIdentity {
    const cached = this.known.get(dev);
    if (cached && cached.present && cached.name !== cached.dev) return cached;
    const fresh = this.read(dev) ?? (cached ? { ...cached, present: false } : unresolved(dev));
    this.known.set(dev, fresh);
    return fresh;
  }

  /**
   * Re-reads every known device and every whole disk in /sys/block; returns true when the
   * set or any identity changed (a disk appeared, went away, was resized or renamed).
   */
  rescan(): boolean {
    let changed = false;
    const seen = new Set<number>();
    for (const name of this.listWholeDisks()) {
      const dev = this.devOfName(name);
      if (dev === undefined) continue;
      seen.add(dev);
      changed = this.refresh(dev) || changed;
    }
    for (const dev of [...this.known.keys()]) {
      if (!seen.has(dev)) changed = this.refresh(dev) || changed;
    }
    return changed;
  }

  /** Disks worth showing: whole disks that are present with a size, plus any device seen with I/O. */
  list(withIo: ReadonlySet<number>): DiskInfo[] {
    const out: DiskInfo[] = [];
    for (const id of this.known.values()) {
      if (
        withIo.has(id.wholeDev) ||
        withIo.has(parseDevString(id.dev) ?? -1) ||
        (id.present && !id.isPartition && (id.sizeBytes ?? 0) > 0)
      ) {
        out.push(publicInfo(id));
      }
    }
    return out.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  }

  /** dev_t of a disk given by kernel name ("loop3", "vda1") or "MAJ:MIN"; undefined if it does not exist. */
  lookup(nameOrDev: string): number | undefined {
    const asDev = parseDevString(nameOrDev);
    if (asDev !== undefined) return existsSync(join(this.sysfs, 'dev/block', nameOrDev)) ? asDev : undefined;
    if (!/^[A-Za-z0-9._:-]+$/.test(nameOrDev)) return undefined;
    return this.devOfName(nameOrDev);
  }

  /** dev_t of a disk and of its partitions, from sysfs (just `dev` when it is a partition or unknown). */
  devsOfDisk(dev: number): number[] {
    const out = [dev];
    const dir = join(this.sysfs, 'dev/block', devString(dev));
    let target: string;
    try {
      target = resolve(dirname(dir), readlinkSync(dir));
    } catch {
      return out;
    }
    let entries: string[] = [];
    try {
      entries = readdirSync(target);
    } catch {
      return out;
    }
    for (const entry of entries) {
      if (!existsSync(join(target, entry, 'partition'))) continue;
      const part = parseDevString(readText(join(target, entry, 'dev')) ?? '');
      if (part !== undefined) out.push(part);
    }
    return out;
  }

  /** Names of whole disks present now (for error messages and listings). */
  listWholeDisks(): string[] {
    try {
      return readdirSync(join(this.sysfs, 'block')).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    } catch {
      return [];
    }
  }

  private refresh(dev: number): boolean {
    const before = this.known.get(dev);
    const after = this.read(dev) ?? (before ? { ...before, present: false } : undefined);
    if (!after) return false;
    this.known.set(dev, after);
    return !before || JSON.stringify(before) !== JSON.stringify(after);
  }

  private devOfName(name: string): number | undefined {
    for (const dir of [join(this.sysfs, 'class/block', name), join(this.sysfs, 'block', name)]) {
      const text = readText(join(dir, 'dev'));
      if (text) return parseDevString(text);
    }
    return undefined;
  }

  private read(dev: number): DeviceIdentity | undefined {
    const devStr = devString(dev);
    const link = join(this.sysfs, 'dev/block', devStr);
    let target: string;
    try {
      target = resolve(dirname(link), readlinkSync(link));
    } catch {
      return undefined;
    }
    const name = basename(target);
    const isPartition = existsSync(join(target, 'partition'));
    const wholeDir = isPartition ? dirname(target) : target;
    const wholeDev = isPartition ? (parseDevString(readText(join(wholeDir, 'dev')) ?? '') ?? dev) : dev;
    const kind: DiskInfo['kind'] = existsSync(join(wholeDir, 'mq')) ? 'request' : 'bio';
    const sectors = Number(readText(join(target, 'size')) ?? '0');
    const backing = readText(join(wholeDir, 'loop/backing_file'));
    const model = backing ? `loop: ${backing}` : readText(join(wholeDir, 'device/model'));
    return {
      dev: devStr,
      name,
      kind,
      // A detached loop device or an unsized zram keeps its node but holds nothing.
      present: Number.isFinite(sectors) && sectors > 0,
      ...(Number.isFinite(sectors) ? { sizeBytes: sectors * 512 } : {}),
      ...(model ? { model: model.slice(0, 128) } : {}),
      wholeDev,
      isPartition,
    };
  }
}

function unresolved(dev: number): DeviceIdentity {
  return { dev: devString(dev), name: devString(dev), kind: 'request', present: false, wholeDev: dev, isPartition: false };
}

function publicInfo(id: DeviceIdentity): DiskInfo {
  const { wholeDev: _w, isPartition: _p, ...info } = id;
  return info;
}

function readText(path: string): string | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim();
    return text.length > 0 ? text : undefined;
  } catch {
    return undefined;
  }
}

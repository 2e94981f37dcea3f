/**
 * The queue settings whose change freezes a request-based disk's queue (QUEUE_SETTINGS:
 * queue/scheduler and queue/nr_requests, the files a udev rule writes), looked at once a tick in
 * sysfs. A setting whose value differs from the previous look changed in between: the frame's
 * `queue_changed`, beside the frozen mark (causes.frozen) of the I/Os that waited for it.
 *
 * No tracepoint marks these writes (and function hooks are not to be had: docs/accounting.md),
 * so what is seen is a changed value: a setting switched and switched back between two looks, or
 * rewritten with the value it had, is not seen (its freeze still is, by the I/Os it held).
 *
 * The files are read asynchronously (libuv's pool): a sysfs read that blocks behind the queue's
 * locks must not stop the collector, so a change is given with the tick after the look that
 * found it, and a disk whose look has not come back is not looked at again meanwhile.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { QUEUE_SETTINGS, type DiskInfo, type QueueSetting } from '@blkheat/shared-types';
import { parseDevString } from '../abi/layout.js';

/** A setting's value as its file shows it: the scheduler in use is the one in brackets ("[mq-deadline] none"). */
export function queueSettingValue(setting: QueueSetting, text: string): string {
  const trimmed = text.trim();
  if (setting === 'scheduler') return /\[([^\]]+)\]/.exec(trimmed)?.[1] ?? trimmed;
  return trimmed;
}

type Values = Partial<Record<QueueSetting, string>>;

export class QueueSettingsWatcher {
  /** Values at the previous look, by disk dev_t. */
  private readonly last = new Map<number, Values>();
  /** The looks that have not come back, by disk dev_t. */
  private readonly pending = new Map<number, Promise<void>>();
  /** Changes found since the previous take(), by dev_t. */
  private found = new Map<number, Set<QueueSetting>>();

  constructor(private readonly sysfs = '/sys') {}

  /**
   * The settings found changed since the previous call, by dev_t, and the next look at the
   * request-based disks given started (a disk's first look changes nothing; a file that cannot
   * be read is left out of the comparison).
   */
  take(disks: readonly DiskInfo[]): Map<number, QueueSetting[]> {
    const out = new Map<number, QueueSetting[]>();
    for (const [dev, settings] of this.found)
      out.set(
        dev,
        QUEUE_SETTINGS.filter((s) => settings.has(s)),
      );
    this.found = new Map();
    for (const disk of disks) {
      const dev = parseDevString(disk.dev);
      if (disk.kind !== 'request' || !disk.present || dev === undefined || this.pending.has(dev)) continue;
      this.pending.set(
        dev,
        this.lookAt(dev, disk.name).finally(() => this.pending.delete(dev)),
      );
    }
    return out;
  }

  /** Resolves once every look started has come back (tests). */
  async settled(): Promise<void> {
    await Promise.all(this.pending.values());
  }

  private async lookAt(dev: number, name: string): Promise<void> {
    const now: Values = {};
    await Promise.all(
      QUEUE_SETTINGS.map(async (setting) => {
        try {
          now[setting] = queueSettingValue(setting, await readFile(join(this.sysfs, 'block', name, 'queue', setting), 'utf8'));
        } catch {
          // A partition, a disk gone since the listing, or a setting this kernel lacks.
        }
      }),
    );
    const before = this.last.get(dev);
    this.last.set(dev, now);
    if (!before) return;
    for (const s of QUEUE_SETTINGS) {
      if (now[s] === undefined || before[s] === undefined || now[s] === before[s]) continue;
      let settings = this.found.get(dev);
      if (!settings) this.found.set(dev, (settings = new Set()));
      settings.add(s);
    }
  }
}

/**
 * What goes with the newest second besides its I/Os, read once per tick that emits a second: the
 * host's I/O pressure (host/pressure.ts), that of the cgroups charged I/O lately
 * (host/cgroup-pressure.ts), wbt's windows that held writes back (wbt-events.ts, from
 * the kernel) and the queue settings found changed (host/queue-settings.ts, from sysfs). Each is
 * measured now, so it belongs to the newest second (the rule of the in-flight state). A wbt read
 * that fails turns its mark off until restart, said once; the collector goes on.
 */
import type { BpfObject } from '@blkheat/bpf-loader';
import type { CgroupPressure, DiskInfo, IoPressure, QueueSetting } from '@blkheat/shared-types';
import type { KernelAbi } from '../abi/kernel-abi.js';
import { errorText } from '../errors.js';
import { CgroupPressureReader, pressureRoot } from '../host/cgroup-pressure.js';
import { type CgroupHierarchy, findCgroup2Mount, readMountinfo } from '../host/cgroups.js';
import { PressureReader } from '../host/pressure.js';
import { QueueSettingsWatcher } from '../host/queue-settings.js';
import { WbtEventReader } from './wbt-events.js';

export interface SecondMarks {
  /** The host's I/O pressure since the previous read (undefined: not known). */
  readonly psi: IoPressure | undefined;
  /** The pressure of cgroups charged I/O lately, since the previous read (undefined: none known). */
  readonly cgPsi: CgroupPressure[] | undefined;
  /** wbt's windows that held writes back, by disk dev_t (undefined: not known). */
  readonly wbt: Map<number, number> | undefined;
  /** Queue settings found changed, by disk dev_t. */
  readonly queueChanged: Map<number, QueueSetting[]>;
}

export class SecondMarkReader {
  private wbt: WbtEventReader | undefined;
  private readonly pressure: PressureReader;
  private readonly cgroupPressure: CgroupPressureReader;
  private readonly queueSettings = new QueueSettingsWatcher();

  /**
   * @param wbtEvents the object fills its wbt_events map (wbt_timer is attached)
   * @param cgroups the hierarchy I/O is charged in (host/cgroups.ts)
   */
  constructor(
    object: BpfObject,
    abi: KernelAbi,
    wbtEvents: boolean,
    cgroups: CgroupHierarchy | undefined,
    private readonly say: { readonly log: (line: string) => void; readonly warn: (message: string) => void },
  ) {
    if (wbtEvents) this.wbt = new WbtEventReader(object, abi);
    this.pressure = new PressureReader(say);
    this.cgroupPressure = new CgroupPressureReader(pressureRoot(cgroups, findCgroup2Mount(readMountinfo())), say);
  }

  /**
   * The marks since the previous read; `disks`: the disks shown now (their queue settings are
   * looked at); `harvested`: the histogram entries of the seconds emitted now (the cgroups they
   * were charged to are read).
   */
  read(disks: readonly DiskInfo[], harvested: ReadonlyMap<number, readonly { readonly cgroup: string }[]>): SecondMarks {
    const charged = new Set<string>();
    for (const entries of harvested.values()) for (const e of entries) charged.add(e.cgroup);
    return {
      psi: this.pressure.read(),
      cgPsi: this.cgroupPressure.read(charged),
      wbt: this.readWbt(),
      queueChanged: this.queueSettings.take(disks),
    };
  }

  private readWbt(): Map<number, number> | undefined {
    if (!this.wbt) return undefined;
    try {
      return this.wbt.read();
    } catch (err) {
      this.wbt = undefined;
      this.say.warn(`reading wbt's windows failed; its mark is off until restart: ${errorText(err)}`);
      return undefined;
    }
  }
}

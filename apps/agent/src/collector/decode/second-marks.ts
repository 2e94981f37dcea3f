/**
 * What goes with the newest second besides its I/Os, read once per tick that emits a second: the
 * host's I/O pressure (host/pressure.ts), wbt's windows that held writes back (wbt-events.ts, from
 * the kernel) and the queue settings found changed (host/queue-settings.ts, from sysfs). Each is
 * measured now, so it belongs to the newest second (the rule of the in-flight state). A wbt read
 * that fails turns its mark off until restart, said once; the collector goes on.
 */
import type { BpfObject } from '@blkheat/bpf-loader';
import type { DiskInfo, IoPressure, QueueSetting } from '@blkheat/shared-types';
import type { KernelAbi } from '../abi/kernel-abi.js';
import { errorText } from '../errors.js';
import { PressureReader } from '../host/pressure.js';
import { QueueSettingsWatcher } from '../host/queue-settings.js';
import { WbtEventReader } from './wbt-events.js';

export interface SecondMarks {
  /** The host's I/O pressure since the previous read (undefined: not known). */
  readonly psi: IoPressure | undefined;
  /** wbt's windows that held writes back, by disk dev_t (undefined: not known). */
  readonly wbt: Map<number, number> | undefined;
  /** Queue settings found changed, by disk dev_t. */
  readonly queueChanged: Map<number, QueueSetting[]>;
}

export class SecondMarkReader {
  private wbt: WbtEventReader | undefined;
  private readonly pressure: PressureReader;
  private readonly queueSettings = new QueueSettingsWatcher();

  /** @param wbtEvents the object fills its wbt_events map (wbt_timer is attached) */
  constructor(
    object: BpfObject,
    abi: KernelAbi,
    wbtEvents: boolean,
    private readonly say: { readonly log: (line: string) => void; readonly warn: (message: string) => void },
  ) {
    if (wbtEvents) this.wbt = new WbtEventReader(object, abi);
    this.pressure = new PressureReader(say);
  }

  /** The marks since the previous read; `disks`: the disks shown now (their queue settings are looked at). */
  read(disks: readonly DiskInfo[]): SecondMarks {
    return { psi: this.pressure.read(), wbt: this.readWbt(), queueChanged: this.queueSettings.take(disks) };
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

/**
 * The sampled I/O records on their way out: drained from the kernel's ring buffer often enough
 * that it never fills at the default budget (and before each harvest), decoded into IoSamples
 * on the wall clock, kept in the SampleLedger (sampling.ts), and released with their second's
 * frame.
 */
import type { RingBuffer } from '@blkheat/bpf-loader';
import type { IoSample } from '@blkheat/shared-types';
import type { CgroupNamer } from '../host/cgroups.js';
import type { ClassNamer } from './classes.js';
import { wallMicros, type WallClock } from '../host/clock.js';
import type { DiskScope } from '../host/disk-scope.js';
import { errorText } from '../errors.js';
import type { KernelAbi } from '../abi/kernel-abi.js';
import { decodeSample, devString } from '../abi/layout.js';
import type { SampleLedger } from './sampling.js';

/** Samples are drained this often so the ring buffer never fills at the default budget. */
const DRAIN_INTERVAL_MS = 200;

export interface SampleDrainDeps {
  readonly ring: RingBuffer;
  /** The object's sample record and its flag values. */
  readonly abi: Pick<KernelAbi, 'records' | 'sampleFlags'>;
  readonly ledger: SampleLedger;
  readonly scope: DiskScope;
  readonly namer: ClassNamer;
  readonly cgroups: CgroupNamer;
  readonly clock: WallClock;
  /** Request-based I/O is timed from its bio's submission (Loaded.submitPhase). */
  readonly submitPhase: boolean;
  readonly warn: (message: string) => void;
}

export class SampleDrain {
  private readonly timer: NodeJS.Timeout;

  /** Starts draining every DRAIN_INTERVAL_MS. */
  constructor(private readonly deps: SampleDrainDeps) {
    this.timer = setInterval(() => this.drain(), DRAIN_INTERVAL_MS);
    this.timer.unref();
  }

  /** Records lost in the ring buffer on the agent's side (the kernel counts its own: ringLost). */
  get dropped(): number {
    return this.deps.ring.dropped;
  }

  /** Moves every record in the ring buffer into the ledger. */
  drain(): void {
    const { ledger, scope, namer, cgroups, clock } = this.deps;
    const sampleRecord = this.deps.abi.records.bh_sample;
    const { sampleFlags } = this.deps.abi;
    let records: Buffer[];
    try {
      records = this.deps.ring.consume();
    } catch (err) {
      this.deps.warn(`draining samples failed: ${errorText(err)}`);
      return;
    }
    for (const rec of records) {
      if (rec.length < sampleRecord.size) continue;
      const raw = decodeSample(sampleRecord, rec);
      const slot = raw.slot;
      const id = scope.devices.resolve(raw.dev);
      const diskDev = scope.partitions ? raw.dev : id.wholeDev;
      if (!scope.includes(diskDev)) continue;
      ledger.offer(slot, diskDev, () => {
        // The kernel's slot is the truth; keep the displayed time inside it even if the clock
        // offset moved by a fraction of a millisecond since the kernel used it.
        const tsUs = Math.min(Math.max(wallMicros(raw.tsNs, clock.offsetNs), slot * 1e6), slot * 1e6 + 999_999);
        return {
          ts_us: tsUs,
          dev: devString(diskDev),
          c: namer.name(raw.cls),
          sector: raw.sector,
          bytes: raw.bytes,
          q_ns: raw.flags & sampleFlags.queueKnown ? raw.queueNs : null,
          d_ns: raw.deviceNs,
          // A request-based disk's I/O has a submit wait, known or not; a bio-based disk's none.
          ...(raw.flags & sampleFlags.submitKnown
            ? { w_ns: raw.submitNs }
            : id.kind === 'request' && this.deps.submitPhase
              ? { w_ns: null }
              : {}),
          pid: raw.pid,
          comm: raw.comm,
          cgroup: Number(raw.cgroupId),
          cg: cgroups.name(raw.cgroupId),
          outlier: (raw.flags & sampleFlags.outlier) !== 0,
        };
      });
    }
  }

  /** Records refused over the budget in second `slot`, by shown disk dev_t. */
  refusedIn(slot: number): ReadonlyMap<number, number> | undefined {
    return this.deps.ledger.refusedIn(slot);
  }

  /** The kept records of every second up to `slot`, oldest second first (see SampleLedger.release). */
  release(slot: number): IoSample[][] {
    return this.deps.ledger.release(slot);
  }

  /** Stops the timer; drain() still works until close(). */
  stopTimer(): void {
    clearInterval(this.timer);
  }

  close(): void {
    this.deps.ring.close();
  }
}

/**
 * What the rest of the agent sees of the collector: frames of closed seconds, sampled I/O
 * records, disk changes and self-metrics. The collector knows nothing about HTTP or history.
 */
import type { BucketSchema, DiskInfo, Frame, IoSample } from '@blkheat/shared-types';
import type { CounterName } from './abi/kernel-abi.js';

/** Sampled per-I/O records kept per second unless told otherwise (CollectorOptions.samples). */
export const DEFAULT_SAMPLE_BUDGET = 2000;
/** The most a --samples-budget may ask for, per second. */
export const MAX_SAMPLE_BUDGET = 1_000_000;

export interface CollectorStats {
  /** Completed I/Os counted since start. */
  readonly ios: number;
  /** Sum of BPF run time of every blkheat program since start (needs BPF stats enabled), ns. */
  readonly bpfRunTimeNs: number;
  /** bpfRunTimeNs / ios, or null before any I/O or without BPF stats. */
  readonly bpfNsPerIo: number | null;
  /** I/Os with no sample record since start (sampling, budget, ring buffer full). */
  readonly samplesDropped: number;
  /** Sample records lost for lack of ring-buffer space since start. */
  readonly samplesLost: number;
  /** Program invocations the kernel skipped because the program was already running on that CPU. */
  readonly recursionMisses: number;
  /** Which hook flavour is attached: "tp_btf" or "raw_tp". */
  readonly hooks: 'tp_btf' | 'raw_tp';
  /** Kernel-side event counters since start (requeues, partial completions, ...). */
  readonly kernel: Readonly<Record<CounterName, number>>;
  /** Seconds from the end of the newest emitted second to the moment it was emitted. */
  readonly lastFrameLagS: number | null;
  /**
   * I/Os the kernel programs counted into the histogram map that the harvest never read: the
   * kernel's own running count (counters.counted, read before each harvest) less every count
   * harvested. 0 unless something loses histogram entries between the programs and the agent.
   */
  readonly harvestLost: number;
  /**
   * I/Os found for seconds already emitted (a program wrote a second after its harvest: a
   * stalled CPU, or a clock step), counted in the next second emitted instead. Normally 0.
   */
  readonly lateIos: number;
}

export interface CollectorListener {
  /** One frame per closed second (step 1), in order, no gaps: idle seconds come as frames with no disks. */
  frame?(frame: Frame): void;
  /** Sample records, in batches as they are drained. */
  samples?(samples: readonly IoSample[]): void;
  /** The set of known disks changed (appeared, went away, renamed). */
  disks?(disks: readonly DiskInfo[]): void;
  /** A non-fatal problem worth telling the user (e.g. a disk vanished mid-second). */
  warning?(message: string): void;
}

export interface Collector {
  /** The bucket schema of every histogram this collector emits. */
  readonly schema: BucketSchema;
  /** Known disks, present or gone. */
  disks(): readonly DiskInfo[];
  stats(): CollectorStats;
  /** Adds a listener; returns a function that removes it. */
  listen(listener: CollectorListener): () => void;
  /** Detaches every probe and frees the kernel objects; the frame of the current second is emitted first. */
  close(): Promise<void>;
}

export interface CollectorOptions {
  /** Only these disks (kernel names like "vda", or "MAJ:MIN"); empty or absent = every disk. */
  readonly disks?: readonly string[];
  /** Sampled per-I/O records: in-kernel budget per second (default DEFAULT_SAMPLE_BUDGET); false = none. */
  readonly samples?: { readonly budgetPerSecond: number } | false;
  /** Hook flavour: "auto" (tp_btf, falling back to raw_tp), or force one. */
  readonly hooks?: 'auto' | 'tp_btf' | 'raw_tp';
  /** Hold BPF run-time stats enabled for self-metrics (BPF ns per I/O). Default true. */
  readonly bpfStats?: boolean;
  /** Report partitions as their own disks instead of rolling them up into the whole disk. */
  readonly partitions?: boolean;
  /**
   * Timestamps: "own" (default) reads the kernel's rq->start_time_ns / io_start_time_ns and uses
   * blkheat's own issue stamp (block_rq_issue) where the kernel's two come from one cached plug
   * clock or the queue keeps no issue stamp; "kernel" uses the kernel's stamps only
   * (diagnostics, and how the tests compare the two). See docs/accounting.md.
   */
  readonly issueTimestamps?: 'kernel' | 'own';
  /**
   * Time request-based I/O from its bio's submission: submit wait (waiting for a request: a frozen
   * queue, QoS, a full tag set) and total. Default true; false (--no-submit-wait) leaves out the
   * hooks it takes (block_bio_queue, block_getrq, block_split, the bio merges) and their cost.
   */
  readonly submitPhase?: boolean;
  /**
   * Tests only: every request of this disk (kernel dev_t) shares one per-request slot, so its
   * requests take each other's slot, as a hash collision would (see docs/accounting.md, In flight).
   */
  readonly sharedSlotDev?: number;
  /**
   * Tests only: entries of the kernel's histogram table in all, instead of one partition of
   * BH_HIST_PER_CPU per possible CPU: too few shows what an I/O that finds no room becomes.
   */
  readonly histTableEntries?: number;
  /** Kernel BTF file to use instead of /sys/kernel/btf/vmlinux (kernels without built-in BTF). */
  readonly btf?: string;
  /**
   * Latency bucket schema: BUCKET_SCHEMA (scale 2, 4 buckets per octave; the default) or
   * FINE_BUCKET_SCHEMA (scale 3, 8 per octave: twice the rows, and about twice the kernel
   * histogram memory). Loads the kernel object built for it.
   */
  readonly schema?: BucketSchema;
  /** libbpf / collector diagnostics. */
  readonly onLog?: (line: string) => void;
}

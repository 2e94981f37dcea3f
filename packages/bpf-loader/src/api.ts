/**
 * The public surface of @blkheat/bpf-loader: a generic libbpf binding shaped like cilium/ebpf.
 * It knows nothing about block I/O. Every handle has an explicit close(); finalizers exist
 * only as a safety net. Every failure is a BpfError (errno, errno name, libbpf's message and
 * the captured libbpf log).
 *
 * Lifecycle: openObject() -> inspect programs()/maps()/globals() -> setGlobal()/setAutoload()/
 * setMaxEntries() -> load() -> attach() / map() / program() -> close().
 */

export type LogLevel = 'quiet' | 'warn' | 'info' | 'debug';

export interface OpenOptions {
  /** How much of libbpf's log to keep on errors and print: 'quiet' (default) keeps warnings for errors only. */
  readonly logLevel?: LogLevel;
  /** Called with each libbpf log line at or above logLevel (default: nothing is printed). */
  readonly onLog?: (level: Exclude<LogLevel, 'quiet'>, line: string) => void;
  /** Name of the object inside libbpf (defaults to the file name). */
  readonly objectName?: string;
  /** Kernel BTF for CO-RE relocations instead of /sys/kernel/btf/vmlinux (e.g. a BTFHub file). */
  readonly btfCustomPath?: string;
}

export interface ProgramSpec {
  readonly name: string;
  /** ELF section, e.g. "tp_btf/block_rq_complete" or "raw_tp/block_rq_complete". */
  readonly section: string;
  /** libbpf's program type name, e.g. "tracing", "raw_tracepoint". */
  readonly type: string;
  readonly autoload: boolean;
}

export interface MapSpec {
  readonly name: string;
  /** libbpf's map type name, e.g. "hash", "percpu_hash", "array", "ringbuf". */
  readonly type: string;
  readonly keySize: number;
  readonly valueSize: number;
  readonly maxEntries: number;
}

/** A global variable in .rodata/.data/.bss (or .rodata.* / .data.* sections). */
export interface GlobalSpec {
  readonly name: string;
  readonly section: string;
  readonly offset: number;
  readonly size: number;
  /** True for const volatile knobs in .rodata (settable only before load). */
  readonly readOnly: boolean;
}

export interface ProgramStats {
  /** Times the program ran (counted only while BPF stats are enabled). */
  readonly runCount: number;
  /** Total nanoseconds spent running it (only while BPF stats are enabled). */
  readonly runTimeNs: number;
  /** Invocations skipped because the program was already running on that CPU. */
  readonly recursionMisses: number;
}

export interface Link {
  readonly program: string;
  /** Detaches the program. Idempotent. */
  close(): void;
}

export interface Program {
  readonly name: string;
  readonly section: string;
  readonly fd: number;
  /** bpf_prog_get_info_by_fd: run count/time and recursion misses. */
  stats(): ProgramStats;
  /**
   * Runs the program once through BPF_PROG_TEST_RUN, with `context` (at most 64 KiB) as its
   * context: how user space triggers a program of its own, e.g. a "syscall" program.
   */
  run(context?: Buffer): ProgramRunResult;
}

export interface ProgramRunResult {
  /** The program's return value. */
  readonly retval: number;
  /** Run time reported by the kernel, ns. */
  readonly durationNs: number;
}

export type UpdateFlag = 'any' | 'noexist' | 'exist';

export interface BatchResult {
  /** Number of entries returned. */
  readonly count: number;
  /** count * keySize bytes, entry i at i * keySize. */
  readonly keys: Buffer;
  /** count * valueBufferSize bytes, entry i at i * valueBufferSize. */
  readonly values: Buffer;
}

export interface BpfMap {
  readonly name: string;
  readonly type: string;
  readonly fd: number;
  readonly keySize: number;
  /** Size of one value as declared. */
  readonly valueSize: number;
  /** Size of the value buffer for lookups: valueSize, or roundUp(valueSize, 8) * possible CPUs for per-CPU maps. */
  readonly valueBufferSize: number;
  readonly maxEntries: number;
  /** Value for key, or undefined when absent. key.length must equal keySize. */
  lookup(key: Buffer): Buffer | undefined;
  /** value.length must equal valueBufferSize. */
  update(key: Buffer, value: Buffer, flag?: UpdateFlag): void;
  /** True if the key existed. */
  delete(key: Buffer): boolean;
  /** Every key, via BPF_MAP_GET_NEXT_KEY (a snapshot; concurrent updates may add or remove keys). */
  keys(): Buffer[];
  /** Whole-map BPF_MAP_LOOKUP_BATCH. Throws BpfError (EINVAL/ENOTSUPP) where the map type lacks it. */
  lookupBatch(): BatchResult;
  /** Whole-map BPF_MAP_LOOKUP_AND_DELETE_BATCH (hash maps); throws where unsupported. */
  lookupAndDeleteBatch(): BatchResult;
  /** Whether batch operations work on this map (probed once, cached). */
  supportsBatch(): boolean;
}

export interface RingBufferOptions {
  /** Most records held for JS before new ones are dropped (default 65536). */
  readonly maxQueued?: number;
  /**
   * Called on the event loop whenever the kernel signals new data (uv_poll on the ring buffer's
   * epoll fd). Records submitted with BPF_RB_NO_WAKEUP do not signal: drain those with consume().
   */
  readonly onRecords?: (records: Buffer[]) => void;
}

export interface RingBuffer {
  /** Drains everything available now (without blocking) and returns it, oldest first. */
  consume(): Buffer[];
  /** Records lost because the queue held maxQueued records. */
  readonly dropped: number;
  /** Stops polling and frees the ring buffer; pending records are discarded. Idempotent. */
  close(): void;
}

export interface BpfObject {
  readonly path: string;
  readonly loaded: boolean;
  programs(): ProgramSpec[];
  maps(): MapSpec[];
  globals(): GlobalSpec[];
  /** Writes a global's initial value (before load for .rodata). value.length must equal its size. */
  setGlobal(name: string, value: Buffer): void;
  /**
   * Reads a global's bytes: its initial value before load, the kernel's current value after.
   * (Added by the loader: lets user space read .bss/.data counters such as drop counts.)
   */
  getGlobal(name: string): Buffer;
  setAutoload(program: string, autoload: boolean): void;
  setMaxEntries(map: string, maxEntries: number): void;
  /** Verifies and loads every autoload program and creates the maps. Runs off the event loop. */
  load(): Promise<void>;
  /** Attaches a loaded program by its section (tp_btf, raw_tp, tracepoint, ...). */
  attach(program: string): Link;
  program(name: string): Program;
  map(name: string): BpfMap;
  /** Opens a ring buffer over a BPF_MAP_TYPE_RINGBUF map of this object. */
  openRingBuffer(map: string, options?: RingBufferOptions): RingBuffer;
  /** Closes links, ring buffers and the object (programs and maps). Idempotent. */
  close(): void;
}

/** A struct as BTF describes it: sizes and offsets in bytes (-1: a member of no fixed size). */
export interface StructLayout {
  readonly size: number;
  readonly members: readonly { readonly name: string; readonly offset: number; readonly size: number }[];
}

/** Kernel BTF (/sys/kernel/btf/vmlinux) queries, for choosing programs and knobs at load time. */
export interface KernelBtf {
  /** Enumerators of a named enum, or undefined when the enum does not exist. */
  enumValues(enumName: string): Map<string, number> | undefined;
  /** Value of an enumerator searched across all enums (named or anonymous). */
  enumeratorValue(enumerator: string): number | undefined;
  /** Whether struct `struct` has a member `field`. */
  hasField(struct: string, field: string): boolean;
  /**
   * Parameter type names of a function-pointer typedef (e.g. "btf_trace_block_rq_issue" ->
   * ["void *", "struct request *"]), or undefined when the typedef does not exist.
   */
  funcProtoParams(typedefName: string): string[] | undefined;
  /**
   * Size and members (byte offsets and sizes) of a named struct, or undefined when there is
   * none: how a BPF object's own records are laid out (load the object file's BTF with
   * loadKernelBtf(path)).
   */
  structLayout(struct: string): StructLayout | undefined;
  close(): void;
}

/** Holds BPF run-time statistics enabled (BPF_ENABLE_STATS) until closed. Needs CAP_SYS_ADMIN. */
export interface StatsHandle {
  close(): void;
}

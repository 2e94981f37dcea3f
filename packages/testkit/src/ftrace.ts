/**
 * ftrace's own block_rq_complete event (the tracefs ring buffer: no BPF, no perf) as a witness:
 * how many completions of one disk the tracepoint showed, and on top of which task each ran. On
 * these machines the completions no BPF program sees are the ones run in softirq on top of a
 * thread of pid 1, the sandbox's own init, where the kernel runs no BPF program of ours
 * (docs/accounting.md); this counts them, so that bench/untimed and the conservation tests can
 * set that count beside blkheat's untimed I/Os. The ring buffer records each event's thread
 * group (options/record-tgid): a thread that has exited by the time the buffer is read is still
 * placed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { procStatus } from './proc.js';
import type { CleanupContext } from './loop.js';

const TRACEFS = '/sys/kernel/tracing';
const EVENT = `${TRACEFS}/events/block/block_rq_complete`;
const RECORD_TGID = `${TRACEFS}/options/record-tgid`;
/** Per CPU; 4 s of fio on a loop device writes about 16 MiB of these events on each. */
const BUFFER_KB = 65536;

export interface FtraceCount {
  /** block_rq_complete events of the disk in the ring buffer. */
  readonly completions: number;
  /** Of those, how many ran on top of a thread of pid 1. */
  readonly onInit: number;
  /** Those on pid 1's threads by size: bytes of the completion (its sectors x 512) -> count. */
  readonly onInitBytes: ReadonlyMap<number, number>;
  /**
   * Those on pid 1's threads by the event's rwbs, op letter first ("R", "WS", "FF", "N" for a
   * passthrough command such as REQ_OP_DRV_IN) -> count.
   */
  readonly onInitRwbs: ReadonlyMap<string, number>;
  /** Those on pid 1's threads that completed with an error (the event's "[error]" is not 0). */
  readonly onInitFailed: number;
  /** Events the ring buffer overwrote (the counts are then short). */
  readonly overrun: number;
}

export interface FtraceWitness {
  /** Sets the event's filter to the disk, empties the ring buffer and starts recording the disk's completions. */
  start(): void;
  /** Stops recording and counts what the ring buffer holds. */
  stop(): FtraceCount;
  /**
   * Idempotent. The last witness open puts tracefs back as it was: event off, filter and buffer
   * size restored, unmounted if we mounted it.
   */
  close(): void;
}

/**
 * Mounts tracefs at /sys/kernel/tracing unless it is there already; the returned function puts
 * it back (unmounts only what this mounted). bpftrace and this witness both need it.
 */
export function ensureTracefs(): () => void {
  if (existsSync(`${EVENT}/enable`)) return () => undefined;
  execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACEFS]);
  return () => execFileSync('umount', [TRACEFS]);
}

/**
 * The tracefs settings a witness changes are the machine's, shared by every witness open in this
 * process: the first open saves and sets them, the last close puts them back, in whatever order
 * the witnesses are closed (t.after() hooks run in the order they were added).
 */
let session: { users: number; bufferKb: string; recordTgid: string; putTracefsBack: () => void } | undefined;
/** The witness between its start() and stop(): the event and its filter are one per machine. */
let recording: object | undefined;

function openSession(): void {
  if (session) {
    session.users++;
    return;
  }
  const putTracefsBack = ensureTracefs();
  let recordTgid: string | undefined;
  try {
    const bufferKb = readFileSync(`${TRACEFS}/buffer_size_kb`, 'utf8').trim().split(/\s/)[0] ?? '1408';
    recordTgid = readFileSync(RECORD_TGID, 'utf8').trim();
    writeFileSync(`${TRACEFS}/buffer_size_kb`, String(BUFFER_KB));
    writeFileSync(RECORD_TGID, '1');
    session = { users: 1, bufferKb, recordTgid, putTracefsBack };
  } catch (error) {
    if (recordTgid !== undefined) writeFileSync(RECORD_TGID, recordTgid);
    putTracefsBack(); // a witness that could not be set up leaves nothing mounted
    throw error;
  }
}

function closeSession(): void {
  if (!session || --session.users > 0) return;
  const { bufferKb, recordTgid, putTracefsBack } = session;
  session = undefined;
  writeFileSync(`${EVENT}/enable`, '0');
  writeFileSync(`${EVENT}/filter`, '0');
  writeFileSync(`${TRACEFS}/trace`, '');
  writeFileSync(`${TRACEFS}/buffer_size_kb`, bufferKb);
  writeFileSync(RECORD_TGID, recordTgid);
  putTracefsBack();
}

/**
 * A witness of one disk (kernel dev_t, major << 20 | minor). Several may be open at once (one
 * per disk, say), but only one records at a time: start() sets the event's filter to its disk,
 * and throws while another witness is between its start() and stop().
 */
export function openFtraceWitness(kernelDev: number): FtraceWitness {
  openSession();
  const self = {};
  let closed = false;
  const tgidOf = new Map<number, number | undefined>();
  return {
    start() {
      if (closed) throw new Error('ftrace witness: start() after close()');
      if (recording !== undefined && recording !== self)
        throw new Error(
          "ftrace witness: another witness is recording (tracefs' block_rq_complete event and its filter are one per machine)",
        );
      writeFileSync(`${EVENT}/enable`, '0');
      writeFileSync(`${EVENT}/filter`, `dev == ${kernelDev}`);
      writeFileSync(`${TRACEFS}/trace`, '');
      recording = self;
      writeFileSync(`${EVENT}/enable`, '1');
    },
    stop() {
      if (recording !== self) throw new Error('ftrace witness: stop() without start()');
      writeFileSync(`${EVENT}/enable`, '0');
      recording = undefined;
      let completions = 0;
      let onInit = 0;
      let onInitFailed = 0;
      const onInitBytes = new Map<number, number>();
      const onInitRwbs = new Map<string, number>();
      for (const line of readFileSync(`${TRACEFS}/trace`, 'utf8').split('\n')) {
        // "  <comm>-<pid>  (<tgid>) [cpu] flags  timestamp: block_rq_complete: 7,0 R () <sector> +
        // <sectors> none,0,0 [<error>]" (the event's print fmt); comm may hold '-'; the tgid
        // reads "-------" when the kernel did not know it.
        const m = /^\s*(.*)-(\d+)\s+\(\s*([\d-]+)\)\s+\[\d+\].*block_rq_complete: \d+,\d+ (\S+) .*?\+ (\d+) .*\[(-?\d+)\]\s*$/.exec(line);
        if (!m) continue;
        completions++;
        const recorded = Number(m[3]);
        if ((Number.isInteger(recorded) ? recorded : tgid(Number(m[2]))) !== 1) continue;
        onInit++;
        const rwbs = m[4] as string;
        onInitRwbs.set(rwbs, (onInitRwbs.get(rwbs) ?? 0) + 1);
        const bytes = Number(m[5]) * 512;
        onInitBytes.set(bytes, (onInitBytes.get(bytes) ?? 0) + 1);
        if (Number(m[6]) !== 0) onInitFailed++;
      }
      return { completions, onInit, onInitBytes, onInitRwbs, onInitFailed, overrun: overrun() };
    },
    close() {
      if (closed) return;
      closed = true;
      if (recording === self) {
        writeFileSync(`${EVENT}/enable`, '0');
        recording = undefined;
      }
      closeSession();
    },
  };

  /** The thread group (process) of a task, cached; undefined once the task is gone. */
  function tgid(pid: number): number | undefined {
    if (!tgidOf.has(pid)) {
      let found: number | undefined;
      try {
        const text = procStatus(pid)('Tgid');
        found = text === '' ? undefined : Number(text);
      } catch {
        found = undefined; // exited since
      }
      tgidOf.set(pid, found);
    }
    return tgidOf.get(pid);
  }
}

/** "R 3, N 1", or "none". */
function describeRwbs(byRwbs: ReadonlyMap<string, number>): string {
  return byRwbs.size === 0 ? 'none' : [...byRwbs].map(([rwbs, n]) => `${rwbs} ${n}`).join(', ');
}

function overrun(): number {
  let sum = 0;
  for (let cpu = 0; existsSync(`${TRACEFS}/per_cpu/cpu${cpu}`); cpu++) {
    const m = /^overrun:\s*(\d+)/m.exec(readFileSync(`${TRACEFS}/per_cpu/cpu${cpu}/stats`, 'utf8'));
    sum += m ? Number(m[1]) : 0;
  }
  return sum;
}

export interface CompletionWitness {
  start(): void;
  stop(): WitnessCount;
}

/** What a completion witness saw between start() and stop(). */
export interface WitnessCount {
  readonly completions: number;
  /** Completions that ran on top of pid 1's threads. */
  readonly onInit: number;
  /**
   * Completions no BPF program may see on this kernel: onInit where the kernel runs no BPF
   * program of ours on top of pid 1's threads (the agent's KernelFacts.hidesInitContext), else 0.
   */
  readonly hiddenFromBpf: number;
  /** hiddenFromBpf by size: bytes of the completion -> count. */
  readonly hiddenBytes: ReadonlyMap<number, number>;
  /** The bytes of all of hiddenFromBpf. */
  readonly hiddenBytesTotal: number;
  /** hiddenFromBpf by the event's rwbs ("R", "WS", "N" for passthrough, ...) -> count. */
  readonly hiddenRwbs: ReadonlyMap<string, number>;
  /** Of hiddenFromBpf, those that completed with an error. */
  readonly hiddenFailed: number;
  readonly text: string;
}

/**
 * ftrace's own witness (no BPF) of one disk's completions between start() and stop(), closed
 * after the test. hidesInitContext: whether this kernel runs BPF programs on top of pid 1's
 * threads at all (the agent reads it from BTF). stop() counts the completions the tracepoint showed and those that ran on top
 * of pid 1's threads, which a kernel that hides init's context from BPF never shows to a program
 * (docs/accounting.md), and describes both for assertion messages.
 */
export function completionWitness(
  t: CleanupContext,
  disk: { readonly name: string; readonly dev: string },
  hidesInitContext: boolean,
): CompletionWitness {
  const m = /^(\d+):(\d+)$/.exec(disk.dev);
  if (!m) throw new Error(`${disk.name}: not a major:minor device: ${disk.dev}`);
  const ftrace = openFtraceWitness((Number(m[1]) << 20) | Number(m[2]));
  t.after(() => ftrace.close());
  return {
    start: () => ftrace.start(),
    stop() {
      const seen = ftrace.stop();
      const overran = seen.overrun > 0 ? ` (its ring buffer overran by ${seen.overrun})` : '';
      const hiddenFromBpf = hidesInitContext ? seen.onInit : 0;
      const hiddenBytes: ReadonlyMap<number, number> = hidesInitContext ? seen.onInitBytes : new Map();
      const hiddenRwbs: ReadonlyMap<string, number> = hidesInitContext ? seen.onInitRwbs : new Map();
      const rule = hidesInitContext
        ? ", where this kernel runs no BPF program (bpf_prog_aux.init_owned): those are untimed by the kernel's rule"
        : '';
      return {
        completions: seen.completions,
        onInit: seen.onInit,
        hiddenFromBpf,
        hiddenBytes,
        hiddenBytesTotal: [...hiddenBytes].reduce((n, [size, count]) => n + size * count, 0),
        hiddenRwbs,
        hiddenFailed: hidesInitContext ? seen.onInitFailed : 0,
        text: `ftrace saw ${seen.completions} completions of ${disk.name}, ${seen.onInit} of them run on top of pid 1's threads (${describeRwbs(seen.onInitRwbs)}; ${seen.onInitFailed} failed)${rule}${overran}`,
      };
    },
  };
}

/** One request's device time as ftrace saw it: block_rq_issue to block_rq_complete. */
export interface DeviceTime {
  /** When it completed (unix seconds). */
  readonly endS: number;
  readonly ns: number;
}

export interface DeviceTimesRecorder {
  /** Stops recording: every request of the disk issued and completed meanwhile, in completion order. */
  stop(): { readonly times: readonly DeviceTime[]; readonly overrun: number };
}

/**
 * ftrace's own timing (no BPF) of one disk's requests, from its block_rq_issue to its
 * block_rq_complete, in a tracefs instance of its own (instances/: its own ring buffer, events,
 * filters and clock), so it records beside a completion witness of another disk. Requests pair by
 * sector and size (a disk's requests in flight never share both). The instance's clock is
 * CLOCK_MONOTONIC (trace_clock mono), Node's hrtime's: completion times are placed on the wall
 * clock by the offset between the two read at start. Removed on the test's way out.
 */
export function recordDeviceTimes(t: CleanupContext, disk: { readonly name: string; readonly dev: string }): DeviceTimesRecorder {
  const m = /^(\d+):(\d+)$/.exec(disk.dev);
  if (!m) throw new Error(`${disk.name}: not a major:minor device: ${disk.dev}`);
  const kernelDev = (Number(m[1]) << 20) | Number(m[2]);
  openSession();
  const dir = `${TRACEFS}/instances/blkheat-devtimes-${process.pid}`;
  const events = ['block_rq_issue', 'block_rq_complete'].map((e) => `${dir}/events/block/${e}`);
  let open = true;
  const close = (): void => {
    if (!open) return;
    open = false;
    for (const e of events) if (existsSync(`${e}/enable`)) writeFileSync(`${e}/enable`, '0');
    if (existsSync(dir)) rmdirSync(dir);
    closeSession();
  };
  t.after(close);
  mkdirSync(dir);
  writeFileSync(`${dir}/trace_clock`, 'mono');
  writeFileSync(`${dir}/buffer_size_kb`, String(BUFFER_KB));
  for (const e of events) {
    writeFileSync(`${e}/filter`, `dev == ${kernelDev}`);
    writeFileSync(`${e}/enable`, '1');
  }
  const wallMinusMonoNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();
  return {
    stop() {
      for (const e of events) writeFileSync(`${e}/enable`, '0');
      const issued = new Map<string, bigint>();
      const times: DeviceTime[] = [];
      for (const line of readFileSync(`${dir}/trace`, 'utf8').split('\n')) {
        // "... [cpu] flags <s>.<us>: block_rq_issue: 7,0 R 4096 () <sector> + <sectors> [<comm>]" and
        // "... block_rq_complete: 7,0 R () <sector> + <sectors> none,0,0 [<error>]" (the events' print fmts).
        const e = /\s(\d+)\.(\d{6}): block_rq_(issue|complete): \d+,\d+ \S+ .*?\(.*?\) (\d+) \+ (\d+) /.exec(line);
        if (!e) continue;
        const ns = BigInt(e[1] as string) * 1_000_000_000n + BigInt(e[2] as string) * 1000n;
        const key = `${e[4]}+${e[5]}`;
        if (e[3] === 'issue') {
          issued.set(key, ns);
          continue;
        }
        const at = issued.get(key);
        if (at === undefined) continue;
        issued.delete(key);
        times.push({ endS: Number(ns + wallMinusMonoNs) / 1e9, ns: Number(ns - at) });
      }
      let overrun = 0;
      for (let cpu = 0; existsSync(`${dir}/per_cpu/cpu${cpu}`); cpu++) {
        const o = /^overrun:\s*(\d+)/m.exec(readFileSync(`${dir}/per_cpu/cpu${cpu}/stats`, 'utf8'));
        overrun += o ? Number(o[1]) : 0;
      }
      close();
      return { times, overrun };
    },
  };
}

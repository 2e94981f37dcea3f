/**
 * Who used the CPUs over a window, from /proc: the machine as a whole (/proc/stat) and the
 * busiest processes (/proc/<pid>/stat, threads included). The live figures depend on what else
 * ran: other browsers or tests on the machine show up here by name.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface CpuMark {
  readonly at: number;
  /** Busy and total jiffies of the machine. */
  readonly busy: number;
  readonly total: number;
  /** Per pid: comm, parent and user + system jiffies. */
  readonly procs: Map<number, { comm: string; ppid: number; jiffies: number }>;
}

export interface CpuUse {
  /** Share of all CPUs busy (0..1). */
  readonly machineBusy: number;
  /** The busiest processes: CPUs used (1 = one CPU all the time); `ours`: this bench or a process it started. */
  readonly top: readonly { readonly pid: number; readonly comm: string; readonly cpus: number; readonly ours: boolean }[];
  /** CPUs used by processes that are neither this bench nor started by it (kernel threads included). */
  readonly others: number;
}

const HZ = 100;

export function markCpu(): CpuMark {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const busy = total - (f[3] ?? 0) - (f[4] ?? 0);
  const procs = new Map<number, { comm: string; ppid: number; jiffies: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), { comm, ppid: Number(fields[1]), jiffies: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return { at: performance.now(), busy, total, procs };
}

/** True for this process and its descendants (the agent, fio, chromium and its helpers). */
function isOurs(procs: CpuMark['procs'], pid: number): boolean {
  for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; hops++) {
    if (p === process.pid) return true;
    p = procs.get(p)?.ppid;
  }
  return false;
}

export function cpuBetween(a: CpuMark, b: CpuMark, topN = 6): CpuUse {
  const seconds = (b.at - a.at) / 1000;
  const used: { pid: number; comm: string; cpus: number; ours: boolean }[] = [];
  let others = 0;
  for (const [pid, p] of b.procs) {
    // A process started inside the window counts from zero.
    const before = a.procs.get(pid)?.jiffies ?? 0;
    const cpus = (p.jiffies - before) / HZ / seconds;
    const ours = isOurs(b.procs, pid);
    if (!ours) others += cpus;
    if (cpus > 0.01) used.push({ pid, comm: p.comm, cpus, ours });
  }
  used.sort((x, y) => y.cpus - x.cpus);
  const total = b.total - a.total;
  return { machineBusy: total > 0 ? (b.busy - a.busy) / total : 0, top: used.slice(0, topN), others };
}

/** CPUs one process used over the window (0 when it was not seen at its end). */
export function cpusOf(a: CpuMark, b: CpuMark, pid: number | undefined): number {
  const after = pid === undefined ? undefined : b.procs.get(pid);
  if (pid === undefined || !after) return 0;
  return (after.jiffies - (a.procs.get(pid)?.jiffies ?? 0)) / HZ / ((b.at - a.at) / 1000);
}

export function describeCpu(u: CpuUse): string {
  const top = u.top.map((p) => `${p.comm}${p.ours ? '' : ' (other)'} ${p.cpus.toFixed(2)}`).join(', ');
  return `${Math.round(u.machineBusy * 100)}% of all CPUs busy; ${u.others.toFixed(2)} CPUs used by processes not this bench's (kernel threads count there); busiest: ${top}`;
}

/**
 * A thread's scheduling, from /proc/<pid>/task/<tid>/schedstat: ns on a CPU, ns runnable but
 * waiting in a run queue, and timeslices. On a loaded machine a long task's wall time is mostly
 * the second: the page's main thread ready to run and no CPU free for it. And from its status,
 * how its timeslices ended: the thread blocking (voluntary: waiting for a message, a lock, another
 * thread) or taken off a CPU it still wanted (involuntary: preempted). Each wake from a block
 * queues again, so a task that blocks often pays the run queue's wait each time.
 */
export interface SchedMark {
  readonly onCpuNs: number;
  readonly waitNs: number;
  readonly slices: number;
  readonly voluntary: number;
  readonly involuntary: number;
}

function readSched(pid: number): SchedMark | undefined {
  try {
    const [onCpuNs, waitNs, slices] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    const switches = (name: string): number => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    const voluntary = switches('voluntary_ctxt_switches');
    const involuntary = switches('nonvoluntary_ctxt_switches');
    if (onCpuNs === undefined || waitNs === undefined || slices === undefined || !Number.isFinite(voluntary + involuntary))
      return undefined;
    return { onCpuNs, waitNs, slices, voluntary, involuntary };
  } catch {
    return undefined;
  }
}

/** The main thread (tid = pid) of each chromium renderer process this bench started, by pid, at `at` (performance.now()). */
export interface RendererThreadsMark {
  readonly at: number;
  readonly threads: ReadonlyMap<number, SchedMark>;
}

/** Marks the renderers among `cpu`'s processes (a mark just taken: its pids are this moment's). */
export function markRendererThreads(cpu: CpuMark = markCpu()): RendererThreadsMark {
  const threads = new Map<number, SchedMark>();
  for (const pid of cpu.procs.keys()) {
    if (!isOurs(cpu.procs, pid)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    // Chromium rewrites its command line (one string, spaces between): look for the flag within it.
    if (!/(^|[\s\0])--type=renderer([\s\0]|$)/.test(cmdline)) continue;
    const s = readSched(pid);
    if (s) threads.set(pid, s);
  }
  return { at: performance.now(), threads };
}

/** The page's main thread over a window of `windowMs`: the renderer main thread that ran most between two marks. */
export interface PageThreadUse {
  readonly pid: number;
  readonly windowMs: number;
  readonly onCpuMs: number;
  readonly waitMs: number;
  readonly slices: number;
  readonly voluntary: number;
  readonly involuntary: number;
}

export function pageThreadBetween(a: RendererThreadsMark, b: RendererThreadsMark): PageThreadUse | undefined {
  let best: PageThreadUse | undefined;
  for (const [pid, end] of b.threads) {
    const start = a.threads.get(pid) ?? { onCpuNs: 0, waitNs: 0, slices: 0, voluntary: 0, involuntary: 0 };
    const use = {
      pid,
      windowMs: b.at - a.at,
      onCpuMs: (end.onCpuNs - start.onCpuNs) / 1e6,
      waitMs: (end.waitNs - start.waitNs) / 1e6,
      slices: end.slices - start.slices,
      voluntary: end.voluntary - start.voluntary,
      involuntary: end.involuntary - start.involuntary,
    };
    if (!best || use.onCpuMs > best.onCpuMs) best = use;
  }
  return best;
}

export function describePageThread(u: PageThreadUse | undefined): string {
  if (!u) return "the page's main thread: not found (no chromium renderer of this bench's)";
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  return (
    `the page's main thread (renderer ${u.pid}) over ${s(u.windowMs)}: ${s(u.onCpuMs)} on a CPU, ` +
    `${s(u.waitMs)} ready to run but waiting for one (run queue), in ${u.slices.toLocaleString('en-US')} timeslices ` +
    `(${u.voluntary.toLocaleString('en-US')} ended blocking, ${u.involuntary.toLocaleString('en-US')} preempted)`
  );
}

/**
 * bench/kernel's tools: what each one attaches, how it is started and stopped, where its BPF run
 * time is read, and what it is held to (the bpftrace one-liner timing the same span, the clock
 * floor of the same hooks). bench/kernel.ts runs them interleaved and prints the figures.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openObject } from '@blkheat/bpf-loader';
import { createCollector, type CollectorOptions } from '@blkheat/agent/collector';
import { sleep } from '@blkheat/testkit';
import { bpftoolProgs, type ProgInfo } from './bpftool.js';

const FLOOR_OBJECT = fileURLToPath(new URL('../bpf/build/dispatch_floor.bpf.o', import.meta.url));

/** biolatency's D2C: from the request's issue to its completion. */
const BPFTRACE_D2C =
  'tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; } ' +
  'tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ { ' +
  '@usecs = hist((nsecs - @start[args->dev, args->sector]) / 1000); delete(@start[args->dev, args->sector]); }';

/** biolatency.bt's Q2C: from the bio's submission to its request's completion (blkheat's total). */
const BPFTRACE_Q2C =
  'tracepoint:block:block_bio_queue { @start[args->dev, args->sector] = nsecs; } ' +
  'tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ { ' +
  '@usecs = hist((nsecs - @start[args->dev, args->sector]) / 1000); delete(@start[args->dev, args->sector]); }';

export type ToolName = 'none' | 'blkheat' | 'blkheat-nosubmit' | 'bpftrace' | 'bpftrace-q2c' | 'floor' | 'clock' | 'floor-rq' | 'clock-rq';

/** A tool attached for one run. */
export interface Tracer {
  /** Run time of its programs so far, ns (grows only while BPF run-time statistics are on). */
  bpfRunTimeNs(): number;
  /** blkheat: the run time of each of its programs (name -> ns). */
  programRunTimes?(): Map<string, number>;
  stop(): Promise<void>;
}

export interface ToolSpec {
  readonly name: ToolName;
  /** What it attaches, for the results. */
  readonly what: string;
  /** Attaches it (`stats`: the run measures BPF time); null for the untraced run. */
  readonly start: ((stats: boolean) => Promise<Tracer>) | null;
  /** A timer's span, from which hook to which. */
  readonly span?: string;
  /** The bpftrace one-liner timing the same span: BPF ns held to the workload's budget ratio. */
  readonly peer?: ToolName;
  /** The clock floor of the same hooks: BPF ns held to FLOOR_RATIO_BUDGET x, IOPS kept to KEPT_POINTS_BUDGET. */
  readonly floor?: ToolName;
}

/** In the order of a round (before rotation). */
export const TOOLS: readonly ToolSpec[] = [
  { name: 'none', what: 'untraced', start: null },
  {
    name: 'blkheat',
    what: 'everything on: submit phase, samples, in-flight scan, untimed books',
    start: (stats) => startBlkheat({ bpfStats: stats }),
    span: "bio queue -> complete (blkheat's total)",
    peer: 'bpftrace-q2c',
    floor: 'clock',
  },
  {
    name: 'blkheat-nosubmit',
    what: 'submit phase off: issue, complete, requeue',
    start: (stats) => startBlkheat({ submitPhase: false, bpfStats: stats }),
    span: 'issue -> complete',
    peer: 'bpftrace',
    floor: 'clock-rq',
  },
  { name: 'bpftrace', what: 'one-liner, issue -> complete (D2C)', start: () => startBpftrace(BPFTRACE_D2C, /^block_rq_(issue|comple)/) },
  {
    name: 'bpftrace-q2c',
    what: "one-liner, bio queue -> complete (biolatency.bt's Q2C)",
    start: () => startBpftrace(BPFTRACE_Q2C, /^block_(bio_queu|rq_comple)/),
  },
  { name: 'floor', what: 'empty programs on every hook blkheat attaches', start: () => startFloor(['floor_', 'floorsub_']) },
  { name: 'clock', what: 'floor + a clock read at bio queue, getrq, issue, complete', start: () => startFloor(['clock_', 'clocksub_']) },
  { name: 'floor-rq', what: 'empty programs on issue, complete, requeue', start: () => startFloor(['floor_']) },
  { name: 'clock-rq', what: 'floor-rq + a clock read at issue, complete', start: () => startFloor(['clock_']) },
];

/** The budgets of issue 28: BPF ns per I/O against the clock floor of the same hooks, and IOPS kept against it. */
export const FLOOR_RATIO_BUDGET = 1.5;
export const KEPT_POINTS_BUDGET = 3;

async function startBlkheat(options: CollectorOptions): Promise<Tracer> {
  const collector = await createCollector(options);
  await sleep(500);
  return {
    bpfRunTimeNs: () => collector.stats().bpfRunTimeNs,
    programRunTimes: blkheatRunTimes,
    stop: () => collector.close(),
  };
}

/** Run time of each blkheat program (name -> ns), from the kernel's prog list. */
function blkheatRunTimes(): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of bpftoolProgs()) if (p.name?.startsWith('bh_')) out.set(p.name, (out.get(p.name) ?? 0) + (p.run_time_ns ?? 0));
  return out;
}

/**
 * Starts a bpftrace one-liner; `programs` picks its two tracepoint programs out of the kernel's
 * prog list by name (the kernel keeps 15 characters of it): checked once attached, so a name
 * that does not match fails the run instead of reading 0 ns.
 */
async function startBpftrace(script: string, programs: RegExp): Promise<Tracer> {
  const child = spawn('bpftrace', ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const closed = new Promise((r) => child.once('close', r));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bpftrace did not attach in 30 s: ${out}`)), 30_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (out.includes('Attaching')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => reject(new Error(`bpftrace exited (${code}): ${out}`)));
  });
  await sleep(1000); // "Attaching" is printed before the probes are live
  const ours = (p: ProgInfo): boolean => p.type === 'tracepoint' && programs.test(p.name ?? '');
  const stop = async (): Promise<void> => {
    // SIGINT makes bpftrace print its maps and exit; one was seen lost (bpftrace 0.17 kept
    // running), so it is repeated, and after 10 s the process is killed.
    for (let i = 0; i < 10 && child.exitCode === null && child.signalCode === null; i++) {
      child.kill('SIGINT');
      if (await Promise.race([closed.then(() => true), sleep(1000).then(() => false)])) return;
    }
    child.kill('SIGKILL');
    await closed;
  };
  // At least its two: a program of the run before may linger a moment after its process ended
  // (it no longer runs, so the run-time deltas are unaffected).
  const found = bpftoolProgs().filter(ours);
  if (found.length < 2) {
    await stop();
    const all = bpftoolProgs().filter((p) => p.type === 'tracepoint');
    throw new Error(
      `bpftrace: ${found.length} programs match ${programs}, not 2 or more (tracepoint programs: ${all.map((p) => p.name).join(', ')})`,
    );
  }
  return { bpfRunTimeNs: () => runTimeNs(ours), stop };
}

/** Total run time of the programs in the kernel's prog list that `matches` picks. */
function runTimeNs(matches: (p: ProgInfo) => boolean): number {
  let total = 0;
  for (const p of bpftoolProgs()) if (matches(p)) total += p.run_time_ns ?? 0;
  return total;
}

/** Loads and attaches the programs of dispatch_floor.bpf.o whose names start with one of `prefixes`. */
async function startFloor(prefixes: readonly string[]): Promise<Tracer> {
  const object = openObject(FLOOR_OBJECT);
  try {
    const names = object
      .programs()
      .map((p) => p.name)
      .filter((name) => prefixes.some((prefix) => name.startsWith(prefix)));
    for (const p of object.programs()) object.setAutoload(p.name, names.includes(p.name));
    await object.load();
    for (const name of names) object.attach(name);
    return {
      bpfRunTimeNs: () => names.reduce((sum, name) => sum + object.program(name).stats().runTimeNs, 0),
      stop: () => Promise.resolve(object.close()),
    };
  } catch (err) {
    object.close();
    throw err;
  }
}

/**
 * bench/kernel: what tracing every block I/O costs, blkheat against bpftrace tracepoint biolatency
 * one-liners, on the same fio workloads on a loop device over /dev/shm:
 *   randread  4k random reads, io_uring, QD32
 *   mix       O_DSYNC writes, writes with fsync after each, and 64k discards
 * in interleaved runs, in rotating order, of the tools in kernel-tools.ts (TOOLS):
 *   none              untraced: the base of "IOPS kept"
 *   blkheat           everything on (submit phase, samples, in-flight scan, untimed books)
 *   blkheat-nosubmit  the submit phase off: block_rq_issue, block_rq_complete, block_rq_requeue
 *   bpftrace          issue -> complete (biolatency's D2C), the peer of blkheat-nosubmit
 *   bpftrace-q2c      block_bio_queue -> block_rq_complete (biolatency.bt's Q2C), the peer of
 *                     blkheat's total: both time an I/O from its bio's submission
 *   floor, clock      empty programs (bpf/test/dispatch_floor.bpf.c) on every hook blkheat
 *                     attaches, and the same with a clock read where a timer of those hooks reads
 *                     one: the least any exact timer of blkheat's hooks pays
 *   floor-rq, clock-rq  the same on the request hooks only (blkheat-nosubmit's)
 * The budgets are issue 28's (section 6, Cost), each printed with a verdict ("within" or "OVER",
 * never an exit code):
 *   blkheat / bpftrace-q2c and blkheat-nosubmit / bpftrace: randread <= 0.45, mix <= 0.55
 *   blkheat / clock and blkheat-nosubmit / clock-rq: <= 1.5
 *   IOPS kept: blkheat's within 3 points of clock's, blkheat-nosubmit's within 3 of clock-rq's
 * The header names the machine facts those costs hang on (clocksource, and the mitigations that
 * tax every kernel call and return).
 *
 * Prints per run and as medians: BPF ns per I/O (run time of the tool's programs / I/Os completed
 * on all disks, from /proc/diskstats; blkheat's also per program), IOPS, and IOPS kept relative
 * to the untraced run of the same round; the ratios also per round (the host's noise moves them
 * between rounds, and a verdict should be read against that spread). Run-time statistics cost two
 * clock reads per program run, so throughput is measured in runs with them off and BPF time in
 * separate runs with them on.
 *
 *   node --import tsx bench/kernel.ts [--pairs 5] [--seconds 8] [--workload randread|mix|both] [--tools a,b,...]
 */
import { readFileSync } from 'node:fs';
import { completedRequests, createLoopDevice, ensureTracefs, readDiskstats, runCommand, runFio, sleep } from '@blkheat/testkit';
import { benchArgs, usageError } from './cli.js';
import { FLOOR_RATIO_BUDGET, KEPT_POINTS_BUDGET, TOOLS, type ToolName, type ToolSpec } from './kernel-tools.js';

type Workload = 'randread' | 'mix';
/** Issue 28: blkheat's BPF ns per I/O against the bpftrace one-liner timing the same span. */
const PEER_BUDGET: Record<Workload, number> = { randread: 0.45, mix: 0.55 };
/** Ratios printed without a budget: [tool, against, why]. */
const MORE_RATIOS: readonly [ToolName, ToolName, string][] = [
  ['blkheat', 'bpftrace', 'BPF ns per I/O; total against D2C, as earlier runs reported'],
];

interface Run {
  readonly workload: Workload;
  readonly tool: ToolName;
  readonly round: number;
  /** Run with BPF run-time statistics on (for BPF ns per I/O) or off (for throughput). */
  readonly stats: boolean;
  readonly iops: number;
  readonly ios: number;
  readonly bpfNs: number | null;
  /** blkheat with stats on: BPF ns per I/O of each of its programs. */
  readonly perProgram?: ReadonlyMap<string, number>;
}

const USAGE = `Usage: node --import tsx bench/kernel.ts [options]   (as root)

What tracing every block I/O costs: blkheat against bpftrace biolatency one-liners and the cost
floors of the same hooks, in interleaved fio runs on a loop device over /dev/shm. Prints BPF ns
per I/O, IOPS kept, and issue 28's budgets with a verdict each (within / OVER):
  blkheat / bpftrace-q2c, blkheat-nosubmit / bpftrace   randread <= ${PEER_BUDGET.randread}, mix <= ${PEER_BUDGET.mix}
  blkheat / clock, blkheat-nosubmit / clock-rq          <= ${FLOOR_RATIO_BUDGET}
  IOPS kept against the same clock floors               within ${KEPT_POINTS_BUDGET} points

Options:
  --workload W   randread, mix or both (default both)
  --pairs N      interleaved rounds per workload (default 5)
  --seconds S    seconds per fio run, at least 2 (default 8)
  --tools LIST   comma-separated subset of: ${TOOLS.filter((t) => t.start)
    .map((t) => t.name)
    .join(', ')}
                 (default all; the untraced run always runs; a budget is printed when both its tools ran)
  -h, --help     show this help`;

const values = benchArgs('bench/kernel', USAGE, {
  pairs: { type: 'string', default: '5' },
  seconds: { type: 'string', default: '8' },
  workload: { type: 'string', default: 'both' },
  tools: { type: 'string', default: 'all' },
});
const pairs = Number(values.pairs);
const seconds = Number(values.seconds);
if (!Number.isInteger(pairs) || pairs < 1 || !Number.isInteger(seconds) || seconds < 2)
  usageError('bench/kernel', USAGE, `--pairs must be >= 1 and --seconds >= 2, not '${values.pairs}' and '${values.seconds}'`);
if (!['randread', 'mix', 'both'].includes(values.workload))
  usageError('bench/kernel', USAGE, `--workload must be randread, mix or both, not '${values.workload}'`);
const workloads: Workload[] = values.workload === 'both' ? ['randread', 'mix'] : [values.workload as Workload];
const wanted = values.tools === 'all' ? null : new Set(values.tools.split(',').map((t) => t.trim()));
const unknown = [...(wanted ?? [])].filter((name) => !TOOLS.some((t) => t.name === name));
if (unknown.length > 0) usageError('bench/kernel', USAGE, `unknown --tools ${unknown.join(', ')}`);
const tools = TOOLS.filter((t) => t.start === null || wanted === null || wanted.has(t.name));
const ran = (name: ToolName): boolean => tools.some((t) => t.name === name);
if (process.getuid?.() !== 0) {
  console.error('bench/kernel: run as root (it loads BPF programs and creates a loop device)');
  process.exit(1);
}

// bpftrace resolves tracepoints through tracefs.
const putTracefsBack = ensureTracefs();

console.log(`bench/kernel: ${machineFacts()}`);
const loop = createLoopDevice({ sizeMiB: 1024 });
const runs: Run[] = [];
try {
  // Every tool with stats off (throughput), then every traced tool with stats on (BPF time).
  const round: [ToolSpec, boolean][] = [
    ...tools.map((t): [ToolSpec, boolean] => [t, false]),
    ...tools.filter((t) => t.start).map((t): [ToolSpec, boolean] => [t, true]),
  ];
  for (const workload of workloads) {
    console.log(
      `bench/kernel: ${workload === 'randread' ? 'fio randread 4k io_uring QD32' : 'fio O_DSYNC writes + fsync writes + 64k discards'} on ${loop.path} (tmpfs), ${seconds} s per run, ${pairs} rounds of ${tools.map((t) => t.name).join('/')} with stats off, the traced ones with stats on, in rotating order`,
    );
    for (let r = 0; r < pairs; r++) {
      for (const [tool, stats] of rotate(round, r)) {
        const run = await measure(workload, tool, r, stats);
        runs.push(run);
        console.log(
          `  round ${r + 1} ${tool.name.padEnd(16)} ${stats ? 'stats on ' : 'stats off'} ${fmt(run.iops / 1000, 1).padStart(7)} kIOPS` +
            (run.bpfNs === null ? '' : `  ${fmt(run.bpfNs, 1).padStart(6)} BPF ns/I/O`),
        );
      }
    }
  }
} finally {
  loop.close();
  await runCommand('sysctl', ['-qw', 'kernel.bpf_stats_enabled=0']).catch(() => undefined);
  try {
    putTracefsBack();
  } catch {
    // a failed unmount must not hide the run's own error or its figures (as before: best effort)
  }
}

for (const workload of workloads) {
  report(
    workload,
    runs.filter((r) => r.workload === workload),
  );
}

function report(workload: Workload, of: Run[]): void {
  /** Per round: BPF ns per I/O (stats on). */
  const nsByRound = (tool: ToolName): Map<number, number> =>
    new Map(of.flatMap((r) => (r.tool === tool && r.stats && r.bpfNs !== null ? [[r.round, r.bpfNs] as const] : [])));
  /** Per round: IOPS relative to the same round's untraced run (stats off). */
  const keptByRound = (tool: ToolName): Map<number, number> => {
    const base = new Map(of.filter((r) => r.tool === 'none').map((r) => [r.round, r.iops] as const));
    return new Map(
      of.flatMap((r) => {
        const b = base.get(r.round);
        return r.tool === tool && !r.stats && b ? [[r.round, r.iops / b] as const] : [];
      }),
    );
  };
  /** Per round, of the rounds both have: f(a, b). */
  const paired = (a: Map<number, number>, b: Map<number, number>, f: (x: number, y: number) => number): number[] =>
    [...a].flatMap(([round, x]) => {
      const y = b.get(round);
      return y === undefined ? [] : [f(x, y)];
    });
  const verdict = (ok: boolean, v: number): string => (Number.isFinite(v) ? (ok ? 'within' : 'OVER') : 'n/a');

  console.log('');
  console.log(`bench/kernel results, ${workload} (medians of ${pairs} rounds)`);
  console.log(`  untraced IOPS              ${fmt(median(of.filter((r) => r.tool === 'none').map((r) => r.iops)) / 1000, 1)} k`);
  console.log(`  ${'tool'.padEnd(22)} ${'BPF ns/I/O'.padStart(10)} ${'IOPS kept'.padStart(10)}`);
  for (const tool of tools.filter((t) => t.start)) {
    const ns = median([...nsByRound(tool.name).values()]);
    const kept = median([...keptByRound(tool.name).values()]);
    console.log(`  ${tool.name.padEnd(22)} ${fmt(ns, 1).padStart(10)} ${fmt(kept * 100, 1).padStart(8)} %   ${tool.what}`);
    const programs = new Map<string, number[]>();
    for (const r of of.filter((r) => r.tool === tool.name))
      for (const [name, perIo] of r.perProgram ?? []) programs.set(name, [...(programs.get(name) ?? []), perIo]);
    for (const [name, perIo] of [...programs].sort()) console.log(`    ${name.padEnd(22)} ${fmt(median(perIo), 1).padStart(8)}`);
  }

  const line = (name: string, value: string, budget: string, judged: string, rounds: string[], why: string): void =>
    console.log(`  ${name.padEnd(38)} ${value.padStart(6)}  ${budget.padEnd(16)}  ${judged.padEnd(7)}  ${rounds.join(' ')}   (${why})`);
  line('budgets (issue 28)', 'value', 'budget', 'verdict', ['per round'], 'what');
  const ratioLine = (tool: ToolName, against: ToolName, budget: number | null, why: string): void => {
    if (!ran(tool) || !ran(against)) return;
    const x = median([...nsByRound(tool).values()]) / median([...nsByRound(against).values()]);
    const rounds = paired(nsByRound(tool), nsByRound(against), (a, b) => a / b).map((v) => fmt(v, 3));
    line(
      `${tool} / ${against}`,
      fmt(x, 3),
      budget === null ? 'none' : `<= ${budget}`,
      budget === null ? '' : verdict(x <= budget, x),
      rounds,
      why,
    );
  };
  for (const tool of tools)
    if (tool.peer) ratioLine(tool.name, tool.peer, PEER_BUDGET[workload], `BPF ns per I/O; like for like: both time ${tool.span}`);
  for (const [tool, against, why] of MORE_RATIOS) ratioLine(tool, against, null, why);
  for (const tool of tools)
    if (tool.floor) ratioLine(tool.name, tool.floor, FLOOR_RATIO_BUDGET, 'BPF ns per I/O, against the clock floor of the same hooks');
  for (const tool of tools) {
    if (!tool.floor || !ran(tool.floor)) continue;
    const rounds = paired(keptByRound(tool.name), keptByRound(tool.floor), (a, b) => (a - b) * 100);
    const points = median(rounds);
    line(
      `${tool.name} - ${tool.floor} IOPS kept`,
      fmt(points, 1),
      `>= -${KEPT_POINTS_BUDGET} points`,
      verdict(points >= -KEPT_POINTS_BUDGET, points),
      rounds.map((v) => fmt(v, 1)),
      `IOPS kept minus the clock floor's, in points: within ${KEPT_POINTS_BUDGET} of the floor's`,
    );
  }
}

/** fio's arguments for a workload. */
function workloadJob(workload: Workload): Parameters<typeof runFio>[0] {
  if (workload === 'randread') {
    return { filename: loop.path, rw: 'randread', ioengine: 'io_uring', iodepth: 32, runtimeS: seconds, extra: ['--randrepeat=0'] };
  }
  const job = (name: string, rw: string, more: string[]): string[] => [
    `--name=${name}`,
    `--filename=${loop.path}`,
    `--rw=${rw}`,
    '--direct=1',
    '--ioengine=psync',
    `--runtime=${seconds}`,
    '--time_based',
    ...more,
  ];
  return {
    filename: loop.path,
    rw: 'randwrite',
    sync: true,
    runtimeS: seconds,
    extra: [...job('fsync', 'randwrite', ['--bs=4k', '--fsync=1']), ...job('discard', 'randtrim', ['--bs=64k'])],
  };
}

async function measure(workload: Workload, tool: ToolSpec, round: number, stats: boolean): Promise<Run> {
  await runCommand('sysctl', ['-qw', `kernel.bpf_stats_enabled=${stats ? 1 : 0}`]);
  const tracer = tool.start ? await tool.start(stats) : undefined;
  const before = tracer?.bpfRunTimeNs() ?? 0;
  const programsBefore = stats ? tracer?.programRunTimes?.() : undefined;
  const disksBefore = totalCompleted();
  let fio: Awaited<ReturnType<typeof runFio>>;
  let ios: number;
  let bpfNs: number | null = null;
  let perProgram: Map<string, number> | undefined;
  try {
    fio = await runFio(workloadJob(workload));
    ios = totalCompleted() - disksBefore;
    if (tracer && stats) bpfNs = (tracer.bpfRunTimeNs() - before) / ios;
    if (programsBefore) {
      perProgram = new Map();
      for (const [name, ns] of tracer?.programRunTimes?.() ?? []) {
        const spent = ns - (programsBefore.get(name) ?? 0);
        if (spent > 0) perProgram.set(name, spent / ios);
      }
    }
  } finally {
    await tracer?.stop();
  }
  await sleep(500);
  return { workload, tool: tool.name, round, stats, iops: fio.iops, ios, bpfNs, ...(perProgram ? { perProgram } : {}) };
}

function totalCompleted(): number {
  let n = 0;
  for (const s of readDiskstats().values())
    if (!/\d$/.test(s.name) || s.name.startsWith('loop') || s.name.startsWith('zram')) n += completedRequests(s);
  return n;
}

/**
 * What a program's cost hangs on, beyond its own code: the clocksource behind bpf_ktime_get_ns()
 * (reached through an indirect call), and the mitigations for Spectre v2 (retpolines make each
 * indirect call dearer) and SRSO (its "Safe RET" sends every kernel return through a thunk: each
 * helper call pays it). Two machines with different lines here give different figures.
 */
function machineFacts(): string {
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return 'unknown';
    }
  };
  const vulnerabilities = '/sys/devices/system/cpu/vulnerabilities';
  return [
    `clocksource ${read('/sys/devices/system/clocksource/clocksource0/current_clocksource')}`,
    `spectre_v2: ${read(`${vulnerabilities}/spectre_v2`)}`,
    `spec_rstack_overflow: ${read(`${vulnerabilities}/spec_rstack_overflow`)}`,
  ].join('; ');
}

function rotate<T>(items: T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function fmt(v: number, digits: number): string {
  return Number.isFinite(v) ? v.toFixed(digits) : 'n/a';
}

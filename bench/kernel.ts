/**
 * bench/kernel: what tracing every block I/O costs, blkheat against a bpftrace tracepoint
 * biolatency one-liner, on the same fio workloads on a loop device over /dev/shm:
 *   randread  4k random reads, io_uring, QD32 (budget: ratio <= 0.35, IOPS kept >= 97 %)
 *   mix       O_DSYNC writes, writes with fsync after each, and 64k discards (budget: ratio <= 0.5)
 * in interleaved runs: untraced, blkheat, bpftrace, and the floor (empty programs on the
 * tracepoints blkheat attaches: the cost of attaching at all), in rotating order. blkheat runs
 * with everything on (samples, in-flight scan, untimed books). A second floor runs too: the same
 * programs with one bpf_ktime_get_ns() each, the least any tool that times issue -> complete with
 * its own clock pays (in BPF ns and in IOPS kept). The header names the machine facts those costs
 * hang on (clocksource, and the mitigations that tax every kernel call and return).
 *
 * Prints per run and as medians: BPF ns per I/O (sum of run_time_ns of the tool's programs /
 * I/Os completed on all disks, from /proc/diskstats; blkheat's also per program, and the empty
 * programs' as the floor any program pays here), IOPS, and IOPS kept relative to the untraced run
 * of the same round; the ratio to bpftrace also per round (the host's noise moves it between
 * rounds, and a budget verdict should be read against that spread). Run-time statistics cost two clock reads per program run, so
 * throughput is measured in runs with them off and BPF time in separate runs with them on.
 *
 *   node --import tsx bench/kernel.ts [--pairs 5] [--seconds 8] [--workload randread|mix|both]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openObject, type BpfObject } from '@blkheat/bpf-loader';
import { createCollector, type Collector } from '@blkheat/agent/collector';
import { bpftoolProgs, type ProgInfo } from './bpftool.js';
import { completedRequests, createLoopDevice, ensureTracefs, readDiskstats, runCommand, runFio, sleep } from '@blkheat/testkit';

const FLOOR_OBJECT = fileURLToPath(new URL('../bpf/build/dispatch_floor.bpf.o', import.meta.url));

const BPFTRACE_BIOLATENCY =
  'tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; } ' +
  'tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ { ' +
  '@usecs = hist((nsecs - @start[args->dev, args->sector]) / 1000); delete(@start[args->dev, args->sector]); }';

type Tool = 'none' | 'blkheat' | 'bpftrace' | 'floor' | 'clock';
/** The programs of FLOOR_OBJECT each floor attaches, by name prefix. */
const FLOOR_PREFIX = { floor: 'floor_', clock: 'clock_' } as const;
type Workload = 'randread' | 'mix';
const BUDGET: Record<Workload, number> = { randread: 0.35, mix: 0.5 };

interface Run {
  readonly workload: Workload;
  readonly tool: Tool;
  /** Run with BPF run-time statistics on (for BPF ns per I/O) or off (for throughput). */
  readonly stats: boolean;
  readonly iops: number;
  readonly ios: number;
  readonly bpfNs: number | null;
  /** blkheat with stats on: BPF ns per I/O of each of its programs. */
  readonly perProgram?: ReadonlyMap<string, number>;
}

const USAGE = `Usage: node --import tsx bench/kernel.ts [options]   (as root)

What tracing every block I/O costs: blkheat against a bpftrace biolatency one-liner, in
interleaved fio runs on a loop device over /dev/shm. Prints BPF ns per I/O, IOPS kept, and
the budgets they are held to.

Options:
  --workload W   randread, mix or both (default both)
  --pairs N      interleaved rounds per workload (default 5)
  --seconds S    seconds per fio run, at least 2 (default 8)
  -h, --help     show this help`;

function parseOptions(): { pairs: string; seconds: string; workload: string; help: boolean } {
  try {
    return parseArgs({
      options: {
        pairs: { type: 'string', default: '5' },
        seconds: { type: 'string', default: '8' },
        workload: { type: 'string', default: 'both' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (err) {
    console.error(`bench/kernel: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    process.exit(2);
  }
}
const values = parseOptions();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const pairs = Number(values.pairs);
const seconds = Number(values.seconds);
if (!Number.isInteger(pairs) || pairs < 1 || !Number.isInteger(seconds) || seconds < 2) {
  console.error('bench/kernel: --pairs must be >= 1 and --seconds >= 2');
  process.exit(2);
}
if (!['randread', 'mix', 'both'].includes(values.workload)) {
  console.error(`bench/kernel: --workload must be randread, mix or both, not '${values.workload}'`);
  process.exit(2);
}
const workloads: Workload[] = values.workload === 'both' ? ['randread', 'mix'] : [values.workload as Workload];
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
  for (const workload of workloads) {
    console.log(
      `bench/kernel: ${workload === 'randread' ? 'fio randread 4k io_uring QD32' : 'fio O_DSYNC writes + fsync writes + 64k discards'} on ${loop.path} (tmpfs), ${seconds} s per run, ${pairs} rounds of none/blkheat/bpftrace/floor/clock with stats off, blkheat/bpftrace/floor/clock with stats on`,
    );
    for (let round = 0; round < pairs; round++) {
      const order: [Tool, boolean][] = rotate(
        [
          ['none', false],
          ['blkheat', false],
          ['bpftrace', false],
          ['floor', false],
          ['clock', false],
          ['blkheat', true],
          ['bpftrace', true],
          ['floor', true],
          ['clock', true],
        ],
        round,
      );
      for (const [tool, stats] of order) {
        const run = await measure(workload, tool, stats);
        runs.push(run);
        console.log(
          `  round ${round + 1} ${tool.padEnd(8)} ${stats ? 'stats on ' : 'stats off'} ${fmt(run.iops / 1000, 1).padStart(7)} kIOPS` +
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
  const of = runs.filter((r) => r.workload === workload);
  const medianOf = (tool: Tool, stats: boolean, pick: (r: Run) => number | null): number =>
    median(
      of
        .filter((r) => r.tool === tool && r.stats === stats)
        .map(pick)
        .filter((v): v is number => v !== null),
    );
  const keptOf = (tool: Tool): number => {
    const ratios: number[] = [];
    const base = of.filter((r) => r.tool === 'none');
    const traced = of.filter((r) => r.tool === tool && !r.stats);
    for (let round = 0; round < pairs; round++) {
      const b = base[round];
      const t = traced[round];
      if (b && t) ratios.push(t.iops / b.iops);
    }
    return median(ratios);
  };
  const blkheatNs = medianOf('blkheat', true, (r) => r.bpfNs);
  const bpftraceNs = medianOf('bpftrace', true, (r) => r.bpfNs);
  console.log('');
  console.log(`bench/kernel results, ${workload} (medians)`);
  console.log(`  untraced IOPS                 ${fmt(medianOf('none', false, (r) => r.iops) / 1000, 1)} k`);
  console.log(`  blkheat BPF ns per I/O        ${fmt(blkheatNs, 1)}`);
  const programs = new Map<string, number[]>();
  for (const r of of) for (const [name, ns] of r.perProgram ?? []) programs.set(name, [...(programs.get(name) ?? []), ns]);
  for (const [name, ns] of [...programs].sort()) console.log(`    ${name.padEnd(26)} ${fmt(median(ns), 1)}`);
  console.log(`  bpftrace BPF ns per I/O       ${fmt(bpftraceNs, 1)}`);
  console.log(
    `  empty programs BPF ns per I/O ${fmt(
      medianOf('floor', true, (r) => r.bpfNs),
      1,
    )}   (the floor: run-time statistics and an empty body, on blkheat's tracepoints)`,
  );
  const clockNs = medianOf('clock', true, (r) => r.bpfNs);
  console.log(
    `  one clock read per program    ${fmt(clockNs, 1)}   (the floor plus bpf_ktime_get_ns() in each: the least an issue -> complete timer pays; ${fmt(clockNs / bpftraceNs, 3)} of bpftrace)`,
  );
  console.log(`  ratio blkheat / bpftrace      ${fmt(blkheatNs / bpftraceNs, 3)}   (budget <= ${BUDGET[workload]})`);
  // Each round's own pair: how far the host's noise moves the ratio between rounds.
  const statsRuns = (tool: Tool): (number | null)[] => of.filter((r) => r.tool === tool && r.stats).map((r) => r.bpfNs);
  const bpftraceRuns = statsRuns('bpftrace');
  const roundRatios = statsRuns('blkheat').flatMap((ns, i) => {
    const bt = bpftraceRuns[i];
    return ns !== null && bt ? [ns / bt] : [];
  });
  console.log(`    per round                   ${roundRatios.map((x) => fmt(x, 3)).join(' ')}`);
  console.log(
    `  IOPS kept with blkheat        ${fmt(keptOf('blkheat') * 100, 1)} %` +
      (workload === 'randread' ? `   (budget >= 97 %, median of ${pairs} interleaved pairs)` : ''),
  );
  console.log(`  IOPS kept with bpftrace       ${fmt(keptOf('bpftrace') * 100, 1)} %`);
  console.log(
    `  IOPS kept with empty programs ${fmt(keptOf('floor') * 100, 1)} %   (the floor: attaching to blkheat's tracepoints at all)`,
  );
  console.log(
    `  IOPS kept with one clock read ${fmt(keptOf('clock') * 100, 1)} %   (per program: what any issue -> complete timer keeps at best)`,
  );
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

async function measure(workload: Workload, tool: Tool, stats: boolean): Promise<Run> {
  let collector: Collector | undefined;
  let bpftrace: ChildProcess | undefined;
  let floor: { object: BpfObject; prefix: string } | undefined;
  let before = 0;
  await runCommand('sysctl', ['-qw', `kernel.bpf_stats_enabled=${stats ? 1 : 0}`]);
  if (tool === 'blkheat') {
    collector = await createCollector({ bpfStats: stats });
    await sleep(500);
    before = collector.stats().bpfRunTimeNs;
  } else if (tool === 'bpftrace') {
    bpftrace = await startBpftrace();
    before = bpftraceRunTimeNs();
  } else if (tool === 'floor' || tool === 'clock') {
    floor = { object: openObject(FLOOR_OBJECT), prefix: FLOOR_PREFIX[tool] };
    await floor.object.load();
    for (const p of floor.object.programs()) if (p.name.startsWith(floor.prefix)) floor.object.attach(p.name);
    before = floorRunTimeNs(floor.prefix);
  }
  const programsBefore = collector && stats ? blkheatRunTimes() : undefined;
  const disksBefore = totalCompleted();
  const fio = await runFio(workloadJob(workload));
  const ios = totalCompleted() - disksBefore;
  let bpfNs: number | null = null;
  let perProgram: Map<string, number> | undefined;
  if (collector) {
    if (stats) bpfNs = (collector.stats().bpfRunTimeNs - before) / ios;
    if (programsBefore) {
      perProgram = new Map();
      for (const [name, ns] of blkheatRunTimes()) {
        const spent = ns - (programsBefore.get(name) ?? 0);
        if (spent > 0) perProgram.set(name, spent / ios);
      }
    }
    await collector.close();
  } else if (bpftrace) {
    if (stats) bpfNs = (bpftraceRunTimeNs() - before) / ios;
    bpftrace.kill('SIGINT');
    await new Promise((r) => bpftrace?.once('close', r));
  }
  if (floor) {
    if (stats) bpfNs = (floorRunTimeNs(floor.prefix) - before) / ios;
    floor.object.close();
  }
  await sleep(500);
  return { workload, tool, stats, iops: fio.iops, ios, bpfNs, ...(perProgram ? { perProgram } : {}) };
}

/** Run time of each blkheat program (name -> ns), from the kernel's prog list. */
function blkheatRunTimes(): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of bpftoolProgs()) if (p.name?.startsWith('bh_')) out.set(p.name, (out.get(p.name) ?? 0) + (p.run_time_ns ?? 0));
  return out;
}

function totalCompleted(): number {
  let n = 0;
  for (const s of readDiskstats().values())
    if (!/\d$/.test(s.name) || s.name.startsWith('loop') || s.name.startsWith('zram')) n += completedRequests(s);
  return n;
}

async function startBpftrace(): Promise<ChildProcess> {
  const child = spawn('bpftrace', ['-e', BPFTRACE_BIOLATENCY], { stdio: ['ignore', 'pipe', 'pipe'] });
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
  return child;
}

/** Total run time of the programs in the kernel's prog list that `matches` picks. */
function runTimeNs(matches: (p: ProgInfo) => boolean): number {
  let total = 0;
  for (const p of bpftoolProgs()) if (matches(p)) total += p.run_time_ns ?? 0;
  return total;
}

/** Run time of the floor programs (dispatch_floor.bpf.o) whose names start with `prefix`. */
function floorRunTimeNs(prefix: string): number {
  return runTimeNs((p) => p.name?.startsWith(prefix) === true);
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

/** Run time of the bpftrace one-liner's two tracepoint programs. */
function bpftraceRunTimeNs(): number {
  return runTimeNs((p) => p.type === 'tracepoint' && /^block_rq_(issue|comple)/.test(p.name ?? ''));
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

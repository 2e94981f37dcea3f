/**
 * bench/untimed: how often plain O_DIRECT I/O leaves untimed I/Os, i.e. completions that
 * /proc/diskstats accounts but no run of blkheat's block_rq_complete program counted (what makes
 * a count test that holds blkheat to diskstats fall short), with an independent witness of the
 * tracepoint itself.
 *
 * Loops the job of the conservation test "plain O_DIRECT I/O: counted exactly, none untimed"
 * (fio randrw, io_uring, QD16, 4 s on a loop device over /dev/shm) with a fresh collector per
 * iteration, between quiet second boundaries. Per iteration it prints fio's own I/O count, the
 * diskstats delta, what blkheat timed and reported untimed, and what `perf stat` counted on the
 * block_rq_complete tracepoint for that device over the same run (perf's own probe on the same
 * tracepoint: if it saw every completion, the tracepoint fired and only the BPF run was missing),
 * and what ftrace's own event saw (testkit's ftrace.ts): the same count, and how many of those
 * completions ran in softirq on top of a thread of pid 1, the ones no BPF program sees here
 * (docs/accounting.md).
 *
 * Iterations alternate between BPF run-time statistics off (as blkheat runs) and on
 * (kernel.bpf_stats_enabled=1, which also gives the program's own run count and recursion
 * misses); the closing line gives the lossy iterations of each arm, and the I/Os blkheat did not
 * time beside the completions ftrace saw run on top of pid 1's threads.
 *
 *   node --import tsx bench/untimed.ts [--iterations 40] [--load]
 *
 * --load adds a CPU hog and O_DIRECT writes to a file in /var/tmp on vda (lossy iterations are
 * rare without it). Kernel-exclusive: nothing else may load BPF programs meanwhile.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createCollector, parseDevString } from '@blkheat/agent/collector';
import type { Frame } from '@blkheat/shared-types';
import { createLoopDevice, diskstatsDelta, groupCountsByDisk, openFtraceWitness, quietBoundary, runFio, sleep } from '@blkheat/testkit';
import { bpftoolProgs } from './bpftool.js';
import { benchArgs, usageError } from './cli.js';

const HOG_FILE = '/var/tmp/blkheat-hog';
const USAGE = 'usage: node --import tsx bench/untimed.ts [--iterations N (default 40)] [--load]';

const values = benchArgs('bench/untimed', USAGE, {
  iterations: { type: 'string', default: '40' },
  load: { type: 'boolean', default: false },
});
const iterations = Number(values.iterations);
if (!Number.isInteger(iterations) || iterations < 1)
  usageError('bench/untimed', USAGE, `--iterations must be a whole number >= 1, not '${values.iterations}'`);
if (process.getuid?.() !== 0) {
  console.error('bench/untimed: run as root (it loads BPF programs and creates a loop device)');
  process.exit(1);
}

const load: ChildProcess[] = values.load
  ? [
      spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore', detached: true }),
      spawn('sh', ['-c', `while :; do dd if=/dev/zero of=${HOG_FILE} bs=64k count=2000 oflag=direct status=none; done`], {
        stdio: 'ignore',
        detached: true,
      }),
    ]
  : [];
const loop = createLoopDevice({ sizeMiB: 256 });
const lossy = { statsOff: 0, statsOn: 0 };
const totals = { notTimed: 0, onInit: 0 };
// The tracepoints' dev field is the kernel's dev_t, as the collector encodes it.
const loopDev = parseDevString(loop.dev);
if (loopDev === undefined) throw new Error(`not a major:minor device: ${loop.dev}`);
const ftrace = openFtraceWitness(loopDev);
const ran = { statsOff: 0, statsOn: 0 };
console.log(
  `bench/untimed: ${iterations} iterations of fio randrw io_uring QD16 4 s on ${loop.path}${values.load ? ', under load' : ''}, ` +
    'BPF run-time statistics off and on in turn',
);
try {
  for (let i = 0; i < iterations; i++) {
    const arm = i % 2 === 1 ? 'statsOn' : 'statsOff';
    execFileSync('sysctl', ['-qw', `kernel.bpf_stats_enabled=${arm === 'statsOn' ? 1 : 0}`]);
    const collector = await createCollector({});
    try {
      const frames: Frame[] = [];
      collector.listen({ frame: (f) => frames.push(f) });
      const start = await quietBoundary([loop.name]);
      const witness = await startTracepointWitness(loopDev);
      const runs0 = completeProgramRuns();
      const misses0 = collector.stats().recursionMisses;
      ftrace.start();
      const fio = await runFio({ filename: loop.path, rw: 'randrw', runtimeS: 4, ioengine: 'io_uring', iodepth: 16 });
      const end = await quietBoundary([loop.name]);
      const runs1 = completeProgramRuns();
      const misses = collector.stats().recursionMisses - misses0;
      const seenByPerf = await witness.stop();
      const seenByFtrace = ftrace.stop();
      const deadline = Date.now() + 10_000;
      while (!frames.some((f) => f.ts >= end.second)) {
        if (Date.now() > deadline) throw new Error(`no frame for second ${end.second} within 10 s`);
        await sleep(50);
      }
      const delta = diskstatsDelta(start.stats, end.stats).get(loop.name);
      if (!delta) throw new Error(`${loop.name} is missing from /proc/diskstats`);
      const diskstats = delta.reads + delta.writes;
      const groups = groupCountsByDisk(frames, start.second, end.second).get(delta.dev);
      const timed = groups ? groups.counted.read + groups.counted.write : 0;
      const untimed = groups ? groups.untimed.read + groups.untimed.write : 0;
      ran[arm]++;
      if (timed < diskstats) lossy[arm]++;
      totals.notTimed += diskstats - timed;
      totals.onInit += seenByFtrace.onInit;
      const programRuns = arm === 'statsOn' ? `  program runs (all disks) ${runs1 - runs0}` : '';
      console.log(
        `  ${String(i + 1).padStart(3)} stats ${arm === 'statsOn' ? 'on ' : 'off'}  fio ${fio.ios}  diskstats ${diskstats}  timed ${timed}  untimed ${untimed}${timed + untimed === diskstats ? '' : ` (${diskstats - timed - untimed} more missing from the frames read)`}` +
          `  perf saw ${seenByPerf}  ftrace saw ${seenByFtrace.completions}, ${seenByFtrace.onInit} on pid 1's threads` +
          (seenByFtrace.overrun > 0 ? ` (ring buffer overran by ${seenByFtrace.overrun}: short)` : '') +
          `${programRuns}  recursion misses ${misses}`,
      );
    } finally {
      await collector.close();
    }
  }
} finally {
  execFileSync('sysctl', ['-qw', 'kernel.bpf_stats_enabled=0']);
  ftrace.close();
  loop.close();
  // Each load runs in its own process group: the shell loop and the dd it started go together.
  for (const child of load) if (child.pid) process.kill(-child.pid, 'SIGKILL');
  if (values.load) rmSync(HOG_FILE, { force: true });
}
console.log(
  `bench/untimed: lossy iterations: ${lossy.statsOff} of ${ran.statsOff} with BPF statistics off, ` +
    `${lossy.statsOn} of ${ran.statsOn} with them on; ${totals.notTimed} I/Os diskstats counted and blkheat did not time, in all; ` +
    `${totals.onInit} completions run on top of pid 1's threads (ftrace)`,
);

/** Run count of blkheat's block_rq_complete program (only counted while statistics are on). */
function completeProgramRuns(): number {
  return bpftoolProgs().find((p) => p.name?.startsWith('bh_rq_complete'))?.run_cnt ?? 0;
}

/** perf's count of block_rq_complete on one disk (the kernel's dev_t) from now until stop(). */
async function startTracepointWitness(kernelDev: number): Promise<{ stop(): Promise<number> }> {
  const filter = `dev == ${kernelDev}`;
  const perf = spawn('perf', ['stat', '-x,', '-a', '-e', 'block:block_rq_complete', '--filter', filter], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let out = '';
  perf.stderr.on('data', (d: Buffer) => (out += d.toString()));
  let failed: Error | undefined;
  perf.once('error', (error) => (failed = error)); // e.g. perf is not installed
  const closed = new Promise<number | null>((resolve) => perf.once('close', resolve));
  await sleep(1500); // perf attaches asynchronously; the loop device is idle until fio starts
  if (failed) throw new Error(`bench/untimed: cannot run perf stat (${failed.message})`, { cause: failed });
  return {
    async stop() {
      perf.kill('SIGINT');
      await closed;
      const count = Number(out.trim().split(',')[0]);
      if (!Number.isInteger(count)) throw new Error(`perf stat gave no count: ${out.trim()}`);
      return count;
    },
  };
}

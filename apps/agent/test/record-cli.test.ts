// `blkheat record` as a user runs it: the built CLI in a child process, on the real kernel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { classOp } from '@blkheat/shared-types';
import { createLoopDevice, runDd, sleep } from '@blkheat/testkit';

const count = z.number().int().min(0);
const bucketTriple = z.tuple([z.number().min(0), z.number().positive().nullable(), z.number().int().positive()]);
const phases = {
  device: z.array(bucketTriple),
  queue: z.array(bucketTriple).optional(),
  submit: z.array(bucketTriple).optional(),
  total: z.array(bucketTriple).optional(),
  submit_unknown: count.optional(),
};
const recordLineSchema = z.strictObject({
  v: z.literal(5),
  ts: z.number().int(),
  interval_s: z.number().int().positive(),
  dropped: z.number().int().min(0),
  disks: z.array(
    z.strictObject({
      dev: z.string().regex(/^\d+:\d+$/),
      name: z.string(),
      dropped: z.number().int().min(0),
      missed: z.number().int().min(0),
      requeues: z.number().int().min(0),
      untimed: z.strictObject({ read: count.optional(), write: count.optional(), discard: count.optional(), flush: count.optional() }),
      inflight: z
        .strictObject({
          n: count,
          oldest_ns: count,
          ios: z.array(
            z.strictObject({
              c: z.string(),
              pid: count,
              comm: z.string(),
              sector: count.nullable(),
              bytes: count,
              age_ns: count,
              dev_age_ns: count.nullable(),
            }),
          ),
          waiting: count.optional(),
          oldest_wait_ns: count.optional(),
          frozen: z.literal(true).optional(),
        })
        .optional(),
      causes: z.strictObject({ frozen: count.optional(), refused: count.optional() }).optional(),
      wbt: count.optional(),
      tags_full: count.optional(),
      queue_changed: z.array(z.enum(['scheduler', 'nr_requests'])).optional(),
      // A cgroup's and a size's phases (added in 4) as a class's, each optional but `device`.
      cgroups: z.array(z.strictObject({ cgroup: z.string().min(1), count, ...phases })),
      classes: z.array(
        z.strictObject({
          class: z.string(),
          count: z.number().int().min(0),
          errors: z.record(z.string(), count).optional(),
          passthrough: z.literal(true).optional(),
          bytes: count,
          sizes: z.array(z.strictObject({ max_bytes: count, count, ...phases })).optional(),
          device: z.array(bucketTriple),
          queue: z.array(bucketTriple),
          submit: z.array(bucketTriple).optional(),
          total: z.array(bucketTriple).optional(),
          submit_unknown: count.optional(),
        }),
      ),
    }),
  ),
  psi: z.strictObject({ some_us: count, full_us: count }).optional(),
  cg_psi: z.array(z.strictObject({ g: z.string().min(1), some_us: count, full_us: count })).optional(),
  samples: z.array(z.record(z.string(), z.unknown())).optional(),
});

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], options: { uid?: number; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('record --help documents every flag and exits 0', async () => {
  const r = await cli(['record', '--help']);
  assert.equal(r.code, 0);
  for (const flag of ['--interval', '--count', '--disk', '--queued', '--json', '--samples', '--verbose', '--help', '--btf']) {
    assert.ok(r.stdout.includes(flag), `--help does not mention ${flag}`);
  }
});

test('bad flag values: one clear message each, exit 2', async () => {
  const cases: [string[], RegExp][] = [
    [['--interval', '0'], /--interval: 0 is outside 1\.\.3600/],
    [['--interval', 'abc'], /--interval: expected a whole number, got "abc"/],
    [['--count', '-1'], /--count: expected a whole number, got "-1"/],
    [['-c', '-1'], /--count: expected a whole number, got "-1"/],
    [['-c', '0'], /--count: must be at least 1, got 0/],
    [['--hooks', 'kprobe'], /--hooks must be auto, tp_btf or raw_tp/],
    [['--samples'], /--samples needs --json/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['--samples-budget', '99999999'], /--samples-budget: 99999999 is outside 0\.\./],
  ];
  for (const [args, message] of cases) {
    const r = await cli(['record', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}, stderr ${r.stderr}`);
    assert.match(r.stderr, message, `${args.join(' ')}`);
    assert.equal(r.stderr.trim().split('\n').length, 2, `one message plus the --help hint: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
});

test('a disk that does not exist: clear message, exit 1', async () => {
  const r = await cli(['record', '--disk', 'no-such-disk', '-c', '1']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /disk 'no-such-disk' does not exist \(disks here: .*vda/);
});

test('no BTF: clear message naming the missing file and the way out, exit 1', async () => {
  const r = await cli(['record', '--btf', '/nonexistent/vmlinux', '-c', '1']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot read the kernel's BTF \(\/nonexistent\/vmlinux\).*CONFIG_DEBUG_INFO_BTF.*--btf PATH/);
});

test('BPF refused (not root): clear message naming the missing privilege, exit 1', async () => {
  const r = await cli(['record', '-c', '1'], { uid: 65534 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /needs root.*CAP_BPF.*CAP_PERFMON/);
});

test('least privilege: record runs as nobody with only CAP_BPF and CAP_PERFMON', { timeout: 60_000 }, async () => {
  const r = await new Promise<CliResult>((resolve, reject) => {
    const child = spawn(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        '--inh-caps=+bpf,+perfmon',
        '--ambient-caps=+bpf,+perfmon',
        process.execPath,
        CLI,
        'record',
        '-j',
        '-c',
        '1',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  assert.equal(r.code, 0, `record with CAP_BPF + CAP_PERFMON failed: ${r.stderr}`);
  assert.equal(recordLineSchema.parse(JSON.parse(r.stdout)).v, 5);
});

test(
  'record --json --samples: one NDJSON line per interval, documented fields, samples of the interval',
  { timeout: 60_000 },
  async (t) => {
    const loop = createLoopDevice({ sizeMiB: 64, t });
    let recording = true;
    const run = cli(['record', '--json', '--samples', '-i', '2', '-c', '2', '-d', loop.name], { timeoutMs: 30_000 }).finally(
      () => (recording = false),
    );
    // Reads until record has printed both intervals, however long it takes to attach.
    let issued = 0;
    const load = (async () => {
      for (let i = 0; recording; i = (i + 1) % 60) {
        await runDd({ if: loop.path, of: '/dev/null', bs: '4k', count: 200, iflag: 'direct', skip: i * 200 });
        issued += 200;
        await sleep(500);
      }
    })();
    const [r] = await Promise.all([run, load]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 2, `expected 2 intervals, got:\n${r.stdout}`);
    let reads = 0;
    for (const text of lines) {
      const line = recordLineSchema.parse(JSON.parse(text));
      assert.equal(line.interval_s, 2);
      assert.equal(line.ts % 2, 0, 'intervals are wall-clock aligned');
      for (const disk of line.disks) {
        assert.equal(disk.name, loop.name, 'only the asked-for disk');
        for (const c of disk.classes) {
          if (classOp(c.class) === 'Read') reads += c.count;
          assert.equal(
            c.device.reduce((n, b) => n + b[2], 0),
            c.count,
            'device buckets add up to the count',
          );
          for (const [lo, hi] of c.device) assert.ok(hi === null || hi > lo, 'bucket bounds ascend');
        }
        const samples = line.samples ?? [];
        assert.ok(samples.length > 0, 'samples of the interval are included');
        assert.equal(
          samples.length + disk.dropped,
          disk.classes.reduce((n, c) => n + c.count, 0),
          'samples + dropped = I/Os',
        );
        for (const s of samples)
          assert.ok(
            Math.floor((s.ts_us as number) / 1e6) >= line.ts && (s.ts_us as number) / 1e6 < line.ts + 2,
            'sample inside its interval',
          );
      }
    }
    // No witness: an upper bound (reads go on while record runs); completions hidden from BPF only lower the count.
    assert.ok(reads > 0 && reads <= issued, `reads counted: ${reads} of the ${issued} dd issued`);
    // The host's I/O pressure (added in 4): on the second interval at least (the first second after start has none).
    const psi = lines.map((text) => recordLineSchema.parse(JSON.parse(text)).psi);
    for (const p of psi) if (p) assert.ok(p.some_us <= 2e6 && p.full_us <= 2e6, `at most the interval: ${JSON.stringify(p)}`);
    if (existsSync('/proc/pressure/io')) assert.ok(psi.at(-1), `the last interval carries the host's I/O pressure: ${lines.at(-1)}`);
  },
);

test('record text output: per disk and class, histogram rows with count, p50 and p99', { timeout: 60_000 }, async (t) => {
  const loop = createLoopDevice({ sizeMiB: 64, t });
  let recording = true;
  const run = cli(['record', '-c', '1', '-Q', '-d', loop.name], { timeoutMs: 30_000 }).finally(() => (recording = false));
  // Reads until record has printed its interval, however long it takes to attach.
  const load = (async () => {
    for (let i = 0; recording; i = (i + 1) % 100) {
      await runDd({ if: loop.path, of: '/dev/null', bs: '4k', count: 100, iflag: 'direct', skip: i * 100 });
      await sleep(300);
    }
  })();
  const [r] = await Promise.all([run, load]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`disk = ${loop.name} \\(${loop.dev}\\)`));
  assert.match(r.stdout, /Read {2}device latency {2}count \d+ {2}p50 [\d.]+ (ns|µs|ms|s) {2}p99 [\d.]+ (ns|µs|ms|s)/);
  assert.match(r.stdout, /Read {2}queue latency/);
  assert.match(r.stdout, /\|\*+ *\|/);
});

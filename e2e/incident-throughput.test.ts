// The throughput strip against the real agent on real I/O: fio reads a loop device over a FUSE file
// whose daemon sleeps 10 ms per read, at iodepth 8 with libaio. What the page draws must agree with
// fio: every I/O and byte fio moved is in the strip's columns of its run (exactly: only fio reads
// this disk), the mean IOPS and MB/s of the run's full seconds lie within 2 % of fio's own figures,
// and the I/Os in flight when each second closed are fio's iodepth in steady state. A screenshot
// goes to artifacts/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completionWitness, createDelayedLoopDevice, hook, runFio } from '@blkheat/testkit';
import { kernelFactsOf } from '@blkheat/agent/collector';
import { canRun, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';

const IODEPTH = 8;
const RUN_S = 20;
const BS = 16 * 1024;
// The daemon serves one read at a time, so a read completes every DELAY_MS and fio's turnaround
// (reap, resubmit: 0.3–1 ms on the loaded 2-CPU machine) is a slot out of the kernel for that
// fraction of the time. At 2 ms that was a third to a half of every second's close, and the
// median in flight was fio's iodepth or one less by chance; at 10 ms it is 3–10 %.
const DELAY_MS = 10;

test('throughput strip: IOPS and MB/s within 2 % of fio over its run, in flight = fio iodepth', { timeout: 240_000 }, async (t) => {
  if (!canRun(t, { fuse: true, fio: true })) return;
  const disk = await createDelayedLoopDevice({ delayMs: DELAY_MS, sizeMiB: 64, t });
  const agent = await startAgent(t, ['--disk', disk.name]);
  const s = await openDashboard(t, agent.url);
  const page = s.page;
  const h = hook(page);

  // ftrace witnesses what this kernel shows to no BPF program (docs/accounting.md).
  const witness = completionWitness(t, disk, kernelFactsOf(undefined).hidesInitContext);
  witness.start();
  const startedMs = Date.now();
  const fio = await runFio({
    filename: disk.path,
    rw: 'randread',
    bs: String(BS),
    ioengine: 'libaio',
    iodepth: IODEPTH,
    runtimeS: RUN_S,
    size: '60M',
  });
  const endedMs = Date.now();
  const seen = witness.stop();
  const fioBytesPerS = (fio.bytes * fio.iops) / fio.ios; // fio's bandwidth: io_bytes over its runtime
  t.diagnostic(`fio: ${fio.ios} reads, ${fio.iops.toFixed(1)} IOPS, ${(fioBytesPerS / 1e6).toFixed(3)} MB/s`);
  assert.ok(fio.ios > (RUN_S * 1000) / DELAY_MS / 2, `fio did only ${fio.ios} reads`);

  // Every second of the run has arrived and is drawn.
  const first = Math.floor(startedMs / 1000);
  const last = Math.floor(endedMs / 1000);
  await waitFor(
    page,
    'the strip to draw every second of the run, and the one after',
    async () => {
      const v = await h.throughput(disk.dev);
      // Drawn columns reach to now; a column has data once its seconds closed (null before).
      const after = v ? Math.floor((last + 1 - v.from) / v.step) : -1;
      return v !== undefined && v.from <= first && after >= 0 && v.iops[after] !== undefined && v.iops[after] !== null;
    },
    30_000,
  );
  await h.idle();
  const tp = await h.throughput(disk.dev);
  assert.ok(tp, 'the disk has a throughput strip');
  const { step } = tp;

  let ios = 0;
  let bytes = 0;
  const full: { iops: number; mbps: number; queue: number | null }[] = [];
  for (let i = 0; i < tp.iops.length; i++) {
    const ts = tp.from + i * step;
    const iops = tp.iops[i] ?? 0;
    const mbps = tp.mbps[i] ?? 0;
    ios += iops * step;
    bytes += mbps * 1e6 * step;
    // Steady seconds of the run: fio starts its I/O a moment after it is spawned and exits a
    // moment after its last I/O, so the second after `first` and the one before `last` may be
    // part idle; they are left out with the two partial ones.
    if (ts > first + 1 && ts + step <= last - 1) full.push({ iops, mbps, queue: tp.queue[i] ?? null });
  }
  assert.ok(full.length >= (RUN_S - 5) / step, `${full.length} full columns of the run`);
  t.diagnostic(`strip: ${Math.round(ios)} I/Os, ${Math.round(bytes)} bytes at step ${step} s; ${full.length} full columns`);
  // Only fio reads this disk (the agent traces only it, and the device is idle otherwise); less
  // what this kernel showed to no BPF program, which ftrace counts.
  assert.equal(Math.round(ios), fio.ios - seen.hiddenFromBpf, `the strip counts every I/O fio did (${seen.text})`);
  assert.equal(Math.round(bytes), fio.bytes - seen.hiddenBytesTotal, `the strip counts every byte fio moved (${seen.text})`);

  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const meanIops = mean(full.map((c) => c.iops));
  const meanMbps = mean(full.map((c) => c.mbps));
  const iopsErr = Math.abs(meanIops - fio.iops) / fio.iops;
  const mbpsErr = Math.abs(meanMbps * 1e6 - fioBytesPerS) / fioBytesPerS;
  t.diagnostic(
    `mean over the run's steady columns: ${meanIops.toFixed(1)} IOPS (fio ${fio.iops.toFixed(1)}, ${(iopsErr * 100).toFixed(2)} %), ` +
      `${meanMbps.toFixed(3)} MB/s (fio ${(fioBytesPerS / 1e6).toFixed(3)}, ${(mbpsErr * 100).toFixed(2)} %)`,
  );
  assert.ok(iopsErr <= 0.02, `IOPS ${meanIops.toFixed(1)} vs fio ${fio.iops.toFixed(1)}: ${(iopsErr * 100).toFixed(2)} % apart`);
  assert.ok(
    mbpsErr <= 0.02,
    `MB/s ${meanMbps.toFixed(3)} vs fio ${(fioBytesPerS / 1e6).toFixed(3)}: ${(mbpsErr * 100).toFixed(2)} % apart`,
  );

  // Queue depth: fio keeps IODEPTH reads outstanding; each is a request with the driver (the loop
  // device's worker waits on the FUSE daemon), so a second closes with IODEPTH in flight, give or
  // take the read completed and not yet resubmitted in that instant (DELAY_MS says how rare).
  const queues = full.map((c) => c.queue);
  t.diagnostic(`in flight at each second's close: ${JSON.stringify(queues)}`);
  // The agent scans what is in flight when it closes a second. When it closes two at once (its
  // timer ran late on a loaded machine), the older one's state at its close was never seen and is
  // drawn as no data, not as a guess: most columns, not all, have it.
  const known = queues.filter((q): q is number => q !== null).sort((a, b) => a - b);
  assert.ok(known.length >= 0.75 * queues.length, `in flight known for only ${known.length} of ${queues.length} full columns`);
  const median = known[Math.floor(known.length / 2)];
  assert.equal(median, IODEPTH, `median in flight ${median}, fio iodepth ${IODEPTH}`);
  assert.ok(
    known.every((q) => q <= IODEPTH),
    `never more in flight than fio keeps outstanding: ${known.at(-1)}`,
  );
  await shot(page, 'throughput-vs-fio');
});

// Known latency: loop devices over FUSE files whose daemon sleeps D ms per read. At least 95%
// of each disk's read I/Os must land in buckets overlapping [D, 1.25 D).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { classOp, denseTotal, lowerBoundSeconds, quantileSeconds, upperBoundSeconds } from '@blkheat/shared-types';
import { createDelayedLoopDevice, createLoopDevice, fuseUnavailable, nextSecond, runDd, runFio, type WitnessCount } from '@blkheat/testkit';
import { addToGroup, classTotals, completionWitness, diskSeconds, lossReport, record, type GroupTotals } from './lib/collect.js';

const fuseMissing = fuseUnavailable();

test(
  'known latency: FUSE-delayed loop devices at 5 ms and 20 ms land in their buckets',
  { timeout: 120_000, skip: fuseMissing ? `SKIPPED LOUDLY: ${fuseMissing}` : false },
  async (t) => {
    const disks = await Promise.all([
      createDelayedLoopDevice({ delayMs: 5, sizeMiB: 32, t }).then((d) => ({ d, delayMs: 5, reads: 300 })),
      createDelayedLoopDevice({ delayMs: 20, sizeMiB: 32, t }).then((d) => ({ d, delayMs: 20, reads: 100 })),
    ]);
    const rec = await record(t);
    const from = await nextSecond();
    // One disk after the other: ftrace's witness records one disk at a time.
    const seen = new Map<string, WitnessCount>();
    for (const { d, reads } of disks) {
      const witness = completionWitness(t, d);
      witness.start();
      await runDd({ if: d.path, of: '/dev/null', bs: '4k', count: reads, iflag: 'direct' });
      seen.set(d.dev, witness.stop());
    }
    const to = Math.floor(Date.now() / 1000) + 1;
    await rec.waitForSecond(to);

    for (const { d, delayMs, reads } of disks) {
      const witnessed = seen.get(d.dev) as WitnessCount;
      const lo = delayMs / 1000;
      const hi = 1.25 * lo;
      let total = 0;
      let inside = 0;
      for (const [cls, acc] of classTotals(rec.frames, d.dev, from, to + 1)) {
        if (classOp(cls) !== 'Read') continue;
        total += denseTotal(acc.d);
        acc.d.forEach((count, bucket) => {
          if (count > 0 && upperBoundSeconds(bucket) > lo && lowerBoundSeconds(bucket) < hi) inside += count;
        });
      }
      // dd's reads, less those this kernel showed to no BPF program (ftrace's witness).
      assert.ok(
        total >= reads - witnessed.hiddenFromBpf,
        `${d.name}: ${total} reads recorded, expected at least the ${reads} dd issued (${witnessed.text})`,
      );
      const share = inside / total;
      t.diagnostic(
        `${d.name} at ${delayMs} ms: ${inside} of ${total} reads (${(share * 100).toFixed(1)}%) in buckets overlapping [${delayMs}, ${1.25 * delayMs}) ms`,
      );
      assert.ok(
        share >= 0.95,
        `${d.name} (${delayMs} ms): only ${(share * 100).toFixed(1)}% of ${total} reads in buckets overlapping [${delayMs}, ${1.25 * delayMs}) ms`,
      );
    }
  },
);

test(
  'plugged submissions that waited do not read 0 queue time (own clock), unlike the kernel’s cached plug clock',
  { timeout: 120_000 },
  async (t) => {
    const loop = createLoopDevice({ sizeMiB: 256, t });
    const shareAtZero: Record<'own' | 'kernel', number> = { own: NaN, kernel: NaN };
    for (const stamps of ['own', 'kernel'] as const) {
      const rec = await record(t, { disks: [loop.name], issueTimestamps: stamps });
      const from = await nextSecond();
      // io_uring submits 32 reads per call inside one plug: each waits for the ones after it.
      await runFio({
        filename: loop.path,
        rw: 'randread',
        ioengine: 'io_uring',
        iodepth: 32,
        runtimeS: 3,
        extra: ['--iodepth_batch_submit=32', '--iodepth_batch_complete_min=32'],
      });
      const to = Math.floor(Date.now() / 1000);
      await rec.waitForSecond(to);
      const read = classTotals(rec.frames, loop.dev, from, to).get('Read');
      assert.ok(read && read.n > 10_000, `too few reads recorded (${read?.n})`);
      shareAtZero[stamps] = (read.q[0] as number) / denseTotal(read.q);
      await rec.collector.close();
    }
    t.diagnostic(
      `queue time in the lowest bucket (<= 0.95 µs): own clock ${(shareAtZero.own * 100).toFixed(1)} %, kernel fields ${(shareAtZero.kernel * 100).toFixed(1)} %`,
    );
    assert.ok(
      shareAtZero.own < 0.5,
      `${(shareAtZero.own * 100).toFixed(1)} % of plugged reads show no queue time with blkheat's own clock`,
    );
    assert.ok(shareAtZero.own < shareAtZero.kernel, 'the own clock sees no more queueing than the cached plug clock');
  },
);

test(
  'sizes: 4 KiB and 512 KiB reads land in their size classes with fio’s own counts, bytes equal fio’s, and size × latency tells them apart',
  { timeout: 60_000 },
  async (t) => {
    const loop = createLoopDevice({ sizeMiB: 256, t });
    const rec = await record(t, { disks: [loop.name] });
    const witness = completionWitness(t, loop);
    const from = await nextSecond();
    witness.start();
    // 512 KiB, not 1 MiB: a loop device takes at most 128 segments, so fio's 1 MiB buffers would
    // reach the disk as two requests each, and the counts would differ from fio's for a good reason.
    const [small, big] = await Promise.all([
      runFio({ filename: loop.path, rw: 'randread', bs: '4k', numberIos: 20_000 }),
      runFio({ filename: loop.path, rw: 'randread', bs: '512k', numberIos: 2_000 }),
    ]);
    const seen = witness.stop();
    const to = Math.floor(Date.now() / 1000) + 1;
    await rec.waitForSecond(to);
    const bySize: GroupTotals<number> = new Map();
    let bytes = 0;
    let untimed = 0;
    for (const d of diskSeconds(rec.frames, loop.dev, from, to)) {
      untimed += d.untimed?.read ?? 0;
      for (const c of d.cls) {
        if (classOp(c.c) !== 'Read') continue;
        bytes += c.b ?? 0;
        assert.equal(
          (c.sz ?? []).reduce((n, z) => n + z.n, 0),
          c.n,
          `${c.c}: size classes sum to ${(c.sz ?? []).reduce((n, z) => n + z.n, 0)}, not ${c.n}`,
        );
        for (const z of c.sz ?? []) addToGroup(bySize, z.s, z.n, z.d);
      }
    }
    t.diagnostic(
      `reads by size class: ${[...bySize].map(([s, v]) => `2^${s} B: ${v.n}`).join(', ')}; fio: ${small.ios} × 4k, ${big.ios} × 512k; ` +
        `untimed reads ${untimed}; ${seen.text}; ${lossReport(rec.collector)}`,
    );
    // fio's counts, less what this kernel showed to no BPF program (docs/accounting.md), by size.
    const hidden = (size: number): number => seen.hiddenBytes.get(size) ?? 0;
    if (seen.hiddenFromBpf > 0) t.diagnostic(`NOTE: ${seen.hiddenFromBpf} completions ran where this kernel shows no BPF program`);
    assert.equal(bySize.get(12)?.n, small.ios - hidden(4096), `4 KiB reads (size class 12) (${seen.text})`);
    assert.equal(bySize.get(19)?.n, big.ios - hidden(512 << 10), `512 KiB reads (size class 19) (${seen.text})`);
    assert.equal(
      bytes,
      small.bytes + big.bytes - seen.hiddenBytesTotal,
      `bytes read: frames ${bytes}, fio ${small.bytes + big.bytes} (${seen.text})`,
    );
    const p50 = (d: Float64Array): number => quantileSeconds(d, 0.5) ?? NaN;
    const small50 = p50((bySize.get(12) as { d: Float64Array }).d);
    const big50 = p50((bySize.get(19) as { d: Float64Array }).d);
    t.diagnostic(`p50 device latency: 4 KiB ${(small50 * 1e6).toFixed(1)} µs, 512 KiB ${(big50 * 1e6).toFixed(1)} µs`);
    assert.ok(big50 > small50, 'the 512 KiB reads are not slower than the 4 KiB ones in the size x latency joint');
  },
);

test(
  'queue time under a scheduler: with more I/O outstanding than the driver takes, queue and device times follow Little’s law',
  { timeout: 120_000, skip: fuseMissing ? `SKIPPED LOUDLY: ${fuseMissing}` : false },
  async (t) => {
    // A loop device serves one read at a time (its worker reads the backing file in order), here
    // a FUSE file whose reads take 2 ms, so it completes X ≈ 500 reads/s. Its driver takes
    // `tags` requests (loop's hw_queue_depth); with mq-deadline and nr_requests raised, fio keeps
    // OUTSTANDING reads allocated, and the rest wait in the scheduler. Little's law, from the
    // recorded histograms alone: X × mean device time ≈ tags, X × (mean queue + device) ≈ OUTSTANDING.
    const OUTSTANDING = 512;
    const d = await createDelayedLoopDevice({ delayMs: 2, sizeMiB: 64, t });
    const queue = `/sys/block/${d.name}/queue`;
    // The device's own teardown puts its queue back to the driver's defaults (the loop device outlives this test).
    writeFileSync(`${queue}/scheduler`, 'mq-deadline');
    writeFileSync(`${queue}/nr_requests`, String(2 * OUTSTANDING));
    const tags = Number(readFileSync(`/sys/block/${d.name}/mq/0/nr_tags`, 'utf8'));
    assert.ok(tags > 0 && tags < OUTSTANDING, `driver depth ${tags}`);
    const rec = await record(t, { disks: [d.name] });
    const fio = runFio({ filename: d.path, rw: 'randread', ioengine: 'io_uring', iodepth: OUTSTANDING, runtimeS: 14 });
    // Measure the steady state: after the queue filled, before fio stops.
    const from = Math.floor(Date.now() / 1000) + 5;
    const to = from + 7;
    await fio;
    await rec.waitForSecond(to);
    let n = 0;
    let deviceS = 0;
    let queueS = 0;
    for (const [cls, acc] of classTotals(rec.frames, d.dev, from, to)) {
      if (classOp(cls) !== 'Read') continue;
      n += acc.n;
      // Each bucket at its geometric middle: at 4 buckets per octave, within 10 % of any latency in it.
      // (The overflow bucket, unbounded above, at its lower bound.)
      const mid = (k: number): number =>
        Number.isFinite(upperBoundSeconds(k)) ? Math.sqrt(lowerBoundSeconds(k) * upperBoundSeconds(k)) : lowerBoundSeconds(k);
      acc.d.forEach((c, k) => (deviceS += c > 0 ? c * mid(k) : 0));
      acc.q.forEach((c, k) => (queueS += c > 0 ? c * mid(k) : 0));
    }
    const x = n / (to - from);
    const wd = deviceS / n;
    const wq = queueS / n;
    t.diagnostic(
      `${n} reads in ${to - from} s (X = ${x.toFixed(0)}/s); mean device ${(wd * 1e3).toFixed(0)} ms, queue ${(wq * 1e3).toFixed(0)} ms; ` +
        `X·Wd = ${(x * wd).toFixed(0)} (driver depth ${tags}), X·(Wq+Wd) = ${(x * (wq + wd)).toFixed(0)} (outstanding ${OUTSTANDING})`,
    );
    assert.ok(n > 1000, `only ${n} reads measured`);
    assert.ok(Math.abs((x * wd) / tags - 1) < 0.2, `X·Wd = ${(x * wd).toFixed(0)}, expected ≈ ${tags}`);
    assert.ok(Math.abs((x * (wq + wd)) / OUTSTANDING - 1) < 0.2, `X·(Wq+Wd) = ${(x * (wq + wd)).toFixed(0)}, expected ≈ ${OUTSTANDING}`);
  },
);

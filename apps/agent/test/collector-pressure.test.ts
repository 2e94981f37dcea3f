// Bios held before any block tracepoint: blk-throttle (io.max, blkio.throttle.*) holds them in
// blk_throtl_bio(), before block_bio_queue, so no submit wait can see them (docs/accounting.md).
// The kernel's I/O pressure does: the host's (/proc/pressure/io, the frames' psi) and the
// throttled cgroup's own (its cgroup2 io.pressure, the frames' cg_psi) rise while a cgroup reads
// at five times its limit, and blkheat's total stays the disk's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quantileBucket, upperBoundSeconds } from '@blkheat/shared-types';
import { createLoopDevice, runFio, sleep } from '@blkheat/testkit';
import { findCgroup2Mount, findIoHierarchy } from '../src/collector/host/cgroups.js';
import { bucketText, classTotals, ms, readTotals, record } from './lib/collect.js';

const mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
const ioHierarchy = findIoHierarchy(mountinfo);
const cgroup2 = findCgroup2Mount(mountinfo);

test(
  'pressure: reads held by blk-throttle at a tenth of their rate raise the host’s and the cgroup’s I/O pressure, which the submit wait cannot see',
  { timeout: 90_000, skip: ioHierarchy ? false : 'SKIPPED LOUDLY: no cgroup hierarchy with the io controller: blk-throttle cannot be set' },
  async (t) => {
    const h = ioHierarchy as NonNullable<typeof ioHierarchy>;
    const loop = createLoopDevice({ sizeMiB: 64, t });
    const name = `blkheat-psi-${process.pid}`;
    const dir = join(h.mountPoint, name);
    mkdirSync(dir);
    t.after(() => rmdirSync(dir));
    // The cgroup's own pressure is cgroup2's io.pressure: with blkio on cgroup v1 the agent reads
    // the cgroup2 directory of the same path (systemd's hybrid layout), so fio joins both.
    const dirs = [dir];
    if (h.version === 1) {
      assert.ok(cgroup2, 'cgroup2 is not mounted: no cgroup has io.pressure');
      const mirror = join(cgroup2.mountPoint, name);
      mkdirSync(mirror);
      t.after(() => rmdirSync(mirror));
      dirs.push(mirror);
    }
    const LIMIT = 50;
    // blk-throttle holds the bios in blk_throtl_bio(), before block_bio_queue.
    if (h.version === 1) writeFileSync(join(dir, 'blkio.throttle.read_iops_device'), `${loop.dev} ${LIMIT}`);
    else writeFileSync(join(dir, 'io.max'), `${loop.dev} riops=${LIMIT}`);
    const rec = await record(t, { disks: [loop.name] });
    const quietFrom = Math.floor(Date.now() / 1000) + 1;
    await sleep(3000);
    const from = Math.floor(Date.now() / 1000) + 1;
    const fio = await runFio({ filename: loop.path, rw: 'randread', numjobs: 2, runtimeS: 6, rateIops: 5 * LIMIT, cgroupDir: dirs });
    const to = Math.floor(Date.now() / 1000) - 1;
    await rec.waitForSecond(to + 1);
    const share = (a: number, b: number): number[] =>
      rec.frames.filter((f) => f.ts >= a && f.ts < b).map((f) => (f.psi?.some_us ?? NaN) / (f.step * 1e6));
    const quiet = share(quietFrom, from - 1);
    const busy = share(from + 1, to);
    // The cgroup's: read once it was charged I/O (the agent names it by its blkio path).
    const cgroupShare = rec.frames
      .filter((f) => f.ts >= from + 1 && f.ts < to)
      .map((f) => (f.cg_psi?.find((p) => p.g === `/${name}`)?.some_us ?? NaN) / (f.step * 1e6));
    const reads = readTotals(classTotals(rec.frames, loop.dev, from, to + 1));
    const clat = fio.readClat;
    assert.ok(clat, 'fio reported no read latency');
    const totalP99 = quantileBucket(reads.t, 0.99) ?? -1;
    const pct = (xs: number[]): string => xs.map((x) => `${(x * 100).toFixed(0)}%`).join(' ');
    t.diagnostic(
      `I/O pressure "some" per second: before ${pct(quiet)}, throttled ${pct(busy)}; fio: ${fio.iops.toFixed(0)} IOPS (limit ${LIMIT}), ` +
        `clat mean ${ms(clat.mean / 1e9)}, p50 ${ms(clat.p50 / 1e9)}; blkheat total p99 ${bucketText(totalP99)}`,
    );
    t.diagnostic(`cgroup /${name} io.pressure "some" per second while throttled: ${pct(cgroupShare)}`);
    assert.ok(busy.length >= 3 && busy.every((x) => x >= 0.5), `the pressure did not rise while the reads were throttled: ${pct(busy)}`);
    assert.ok(
      cgroupShare.length >= 3 && cgroupShare.every((x) => x >= 0.5),
      `the cgroup's pressure was not there, or did not rise, while its reads were throttled: ${pct(cgroupShare)}`,
    );
    assert.ok(Math.max(...busy) > 2 * Math.max(0.05, ...quiet), `no rise over the quiet seconds (${pct(quiet)})`);
    // What blk-throttle held is before block_bio_queue: not in the total, which stays the disk's.
    // blk-throttle lets a few through at once each slice and holds the rest: the mean tells.
    assert.ok(clat.mean >= 10e6, `fio's reads were not held (clat mean ${ms(clat.mean / 1e9)})`);
    assert.ok(upperBoundSeconds(totalP99) < 0.005, `total p99 ${bucketText(totalP99)}: the throttle's wait is not before block_bio_queue`);
  },
);

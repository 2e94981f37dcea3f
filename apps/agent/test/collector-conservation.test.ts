// Count conservation, the collector's first promise: per disk, the completed I/Os in its
// frames over a window equal the /proc/diskstats delta (reads + writes + discards + flushes)
// exactly, with two loop devices and vda busy across many second boundaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createLoopDevice, diskstatsDelta, completedRequests, runFio, runCommand } from '@blkheat/testkit';
import { record, countsByDisk, quietBoundary } from './lib/collect.js';

for (const variant of [
  { name: 'tp_btf hooks, kernel issue timestamps', options: {} },
  { name: 'raw_tp hooks, own issue timestamps', options: { hooks: 'raw_tp', issueTimestamps: 'own' } },
] as const) {
  test(`count conservation over >= 10 intervals on two loop devices and vda (${variant.name})`, { timeout: 120_000 }, async (t) => {
    const a = createLoopDevice({ sizeMiB: 256, t });
    const b = createLoopDevice({ sizeMiB: 256, t });
    const vdaDir = mkdtempSync('/var/tmp/blkheat-test-');
    t.after(() => rmSync(vdaDir, { recursive: true, force: true }));
    const rec = await record(t, variant.options);
    const disks = [a.name, b.name, 'vda'];

    const start = await quietBoundary(disks);
    const runtimeS = 11;
    await Promise.all([
      // Mixed reads and writes with fsyncs (flushes) on one loop device.
      runFio({ filename: a.path, rw: 'randrw', runtimeS, rateIops: 3000, fsync: 32 }),
      // O_DSYNC writes (flush sequences) and discards on the other.
      runFio({ filename: b.path, rw: 'randwrite', runtimeS, sync: true, rateIops: 500 }),
      runFio({ filename: b.path, rw: 'randtrim', runtimeS, rateIops: 50, bs: '64k' }),
      // vda through its filesystem: direct reads and writes of a file, fsync'd.
      runFio({ filename: `${vdaDir}/f`, size: '32M', rw: 'randrw', runtimeS, rateIops: 400, fsync: 16 }),
    ]);
    await runCommand('sync', []);
    const end = await quietBoundary(disks);
    assert.ok(end.second - start.second >= 10, `window of ${end.second - start.second} s, want >= 10`);
    await rec.waitForSecond(end.second - 1);

    const counted = countsByDisk(rec.frames, start.second, end.second);
    const stats = JSON.stringify(rec.collector.stats());
    const delta = diskstatsDelta(start.stats, end.stats);
    for (const name of disks) {
      const d = delta.get(name);
      assert.ok(d, `${name} missing from /proc/diskstats`);
      const expected = completedRequests(d);
      assert.ok(expected > (name === 'vda' ? 100 : 1000), `${name}: only ${expected} I/Os in the window; the workload did not run`);
      assert.equal(
        counted.get(d.dev) ?? 0,
        expected,
        `${name} (${d.dev}): frames count ${counted.get(d.dev) ?? 0} I/Os, /proc/diskstats ${expected} (${JSON.stringify(d)}; collector ${stats})`,
      );
    }
    // Every I/O is put on a real disk: none on a device number /proc/diskstats does not know
    // (a recovered completion whose request could not be told once landed on "0:0").
    const known = new Set([...delta.values()].map((d) => d.dev));
    for (const [dev, n] of counted) assert.ok(known.has(dev), `${n} I/Os counted on ${dev}, a device /proc/diskstats does not list`);
    const k = rec.collector.stats().kernel;
    t.diagnostic(
      `completions the kernel did not deliver to BPF, recovered from blkheat's books: ${k.completionUnseen} (empty flush writes: ${k.shellUnseen})`,
    );
    // One frame per second, in order, no gaps, no duplicates.
    const seconds = rec.frames.map((f) => f.ts);
    for (let i = 1; i < seconds.length; i++)
      assert.equal(seconds[i], (seconds[i - 1] as number) + 1, `frame seconds jump at ${seconds[i]}`);
  });
}

// Bio-based devices (zram here; dm, md, bcache elsewhere) have no request tracepoints: they
// are timed block_bio_queue -> block_bio_complete and shown as their own disks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { denseTotal, classOp } from '@blkheat/shared-types';
import { nextSecond, readDiskstats, runCommand, runDd, sleep } from '@blkheat/testkit';
import { record, classTotals } from './lib/collect.js';

async function zramDevice(): Promise<string | undefined> {
  if (!existsSync('/sys/block/zram0')) await runCommand('modprobe', ['zram']).catch(() => undefined);
  return existsSync('/sys/block/zram0') ? 'zram0' : undefined;
}

test('zram I/O appears under its own disk, bio-based, with bio-level latency', { timeout: 60_000 }, async (t) => {
  const name = await zramDevice();
  if (!name) {
    t.skip('SKIPPED LOUDLY: no zram device and the zram module cannot be loaded on this kernel');
    return;
  }
  const sys = `/sys/block/${name}`;
  if (readFileSync(`${sys}/disksize`, 'utf8').trim() !== '0') {
    t.skip(`SKIPPED LOUDLY: /dev/${name} is already in use (disksize set); not touching it`);
    return;
  }
  writeFileSync(`${sys}/disksize`, `${64 << 20}`);
  t.after(() => writeFileSync(`${sys}/reset`, '1'));
  // udev probes a newly sized device (blkid reads it): let that finish before the window.
  await runCommand('udevadm', ['settle']).catch(() => undefined);
  await sleep(1000);
  const dev = readFileSync(`${sys}/dev`, 'utf8').trim();

  const rec = await record(t);
  const from = await nextSecond();
  const before = readDiskstats().get(name);
  await runDd({ if: '/dev/urandom', of: `/dev/${name}`, bs: '4k', count: 300, oflag: 'direct' });
  await runDd({ if: `/dev/${name}`, of: '/dev/null', bs: '4k', count: 300, iflag: 'direct' });
  const after = readDiskstats().get(name);
  const to = Math.floor(Date.now() / 1000) + 1;
  await rec.waitForSecond(to);

  const disk = rec.collector.disks().find((d) => d.dev === dev);
  assert.ok(disk, `${name} (${dev}) not among the collector's disks: ${JSON.stringify(rec.collector.disks())}`);
  assert.equal(disk.kind, 'bio');
  assert.equal(disk.name, name);
  const totals = classTotals(rec.frames, dev, from, to + 1);
  let reads = 0;
  let writes = 0;
  for (const [cls, acc] of totals) {
    assert.equal(denseTotal(acc.d), acc.n, `${cls}: every counted bio has a device latency`);
    assert.equal(denseTotal(acc.q), 0, `${cls}: bio-based disks have no queue time`);
    if (classOp(cls) === 'Read') reads += acc.n;
    if (classOp(cls) === 'Write') writes += acc.n;
  }
  assert.equal(reads, 300, `reads on ${name}: ${JSON.stringify([...totals.keys()])}`);
  assert.equal(writes, 300, `writes on ${name}`);
  // Counted the way the kernel accounts them (zram: bio_start_io_acct() per read and write bio).
  // No witness: zram is bio-based and completes each bio in the submitting dd's own context, never
  // in softirq on top of pid 1's threads (and the witness watches block_rq_complete, which zram never fires).
  assert.ok(before && after, `${name} missing from /proc/diskstats`);
  assert.equal(reads, after.reads - before.reads, 'reads: frames vs /proc/diskstats');
  assert.equal(writes, after.writes - before.writes, 'writes: frames vs /proc/diskstats');
});

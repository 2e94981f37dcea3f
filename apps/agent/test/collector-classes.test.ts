// Op classes as the kernel flags them: O_DIRECT reads, O_DIRECT|O_DSYNC writes (flush
// sequences), fsync (Flush), blkdiscard (Discard) and ext4 metadata on loop devices.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { classOp, parseClassName } from '@blkheat/shared-types';
import { createLoopDevice, runCommand, runDd, sleep } from '@blkheat/testkit';
import { record, classTotals, type Recording } from './lib/collect.js';

/** Runs `work` inside whole seconds and returns the class totals of `dev` over them. */
async function classesOf(rec: Recording, dev: string, work: () => Promise<void>): Promise<Map<string, number>> {
  const from = Math.floor(Date.now() / 1000) + 1;
  await sleep(from * 1000 - Date.now() + 5);
  await work();
  const to = Math.floor(Date.now() / 1000) + 1;
  await rec.waitForSecond(to);
  return new Map([...classTotals(rec.frames, dev, from, to + 1)].map(([c, acc]) => [c, acc.n]));
}

function sumWhere(classes: Map<string, number>, pred: (name: string) => boolean): number {
  let n = 0;
  for (const [c, count] of classes) if (pred(c)) n += count;
  return n;
}

test('op classes: direct reads, dsync writes, fsync flushes, discards, ext4 metadata', { timeout: 120_000 }, async (t) => {
  const loop = createLoopDevice({ sizeMiB: 128, t });
  const rec = await record(t);

  const reads = await classesOf(rec, loop.dev, () => runDd({ if: loop.path, of: '/dev/null', bs: '4k', count: 200, iflag: 'direct' }));
  assert.equal(
    sumWhere(reads, (c) => classOp(c) === 'Read'),
    200,
    `direct reads: ${JSON.stringify([...reads])}`,
  );
  assert.deepEqual(
    [...reads.keys()].filter((c) => classOp(c) !== 'Read'),
    [],
    'nothing but reads while reading',
  );
  // blkdev direct I/O is marked REQ_SYNC by the kernel: biolatency -F prints it as Sync-Read too.
  for (const c of reads.keys()) assert.ok(['Read', 'Sync-Read'].includes(c), `unexpected read class ${c}`);

  const dsync = await classesOf(rec, loop.dev, () => runDd({ if: '/dev/zero', of: loop.path, bs: '4k', count: 50, oflag: 'direct,dsync' }));
  // Each O_DSYNC write is a data write plus an fsync: the flush machinery turns them into
  // Sync-Writes (REQ_SYNC added, REQ_PREFLUSH/REQ_FUA consumed) and separate flush requests.
  const syncWrites = sumWhere(dsync, (c) => classOp(c) === 'Write' && parseClassName(c).flags.includes('Sync'));
  assert.ok(syncWrites >= 50, `dsync writes: ${syncWrites} Sync-Write (${JSON.stringify([...dsync])})`);
  assert.ok((dsync.get('Flush') ?? 0) >= 50, `dsync writes: ${dsync.get('Flush') ?? 0} Flush (${JSON.stringify([...dsync])})`);

  const discards = await classesOf(rec, loop.dev, () =>
    runCommand('blkdiscard', ['-o', '0', '-l', String(16 << 20), loop.path]).then(() => undefined),
  );
  assert.ok(sumWhere(discards, (c) => classOp(c) === 'Discard') >= 1, `blkdiscard: ${JSON.stringify([...discards])}`);

  const mnt = mkdtempSync('/tmp/blkheat-mnt-');
  t.after(async () => {
    await runCommand('umount', [mnt]).catch(() => undefined);
    rmSync(mnt, { recursive: true, force: true });
  });
  const meta = await classesOf(rec, loop.dev, async () => {
    await runCommand('mkfs.ext4', ['-q', '-F', loop.path]);
    await runCommand('mount', [loop.path, mnt]);
    for (let i = 0; i < 100; i++) writeFileSync(`${mnt}/f${i}`, `file ${i}\n`);
    const fd = openSync(`${mnt}/f0`, 'r+');
    fsyncSync(fd);
    closeSync(fd);
    await runCommand('umount', [mnt]);
  });
  const metadata = [...meta.keys()].filter((c) => parseClassName(c).flags.includes('Metadata'));
  assert.ok(metadata.length > 0, `ext4 metadata: no Metadata- class in ${JSON.stringify([...meta])}`);
  assert.ok(
    sumWhere(meta, (c) => parseClassName(c).flags.includes('Metadata') && classOp(c) === 'Write') > 0,
    `no Metadata-...-Write in ${JSON.stringify([...meta])}`,
  );
  assert.ok((meta.get('Flush') ?? 0) > 0, `fsync on ext4: no Flush in ${JSON.stringify([...meta])}`);
});

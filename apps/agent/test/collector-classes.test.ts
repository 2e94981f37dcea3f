// Op classes as the kernel flags them: O_DIRECT reads, O_DIRECT|O_DSYNC writes (flush
// sequences), fsync (Flush), blkdiscard (Discard) and ext4 metadata on loop devices. Each
// workload runs under ftrace's completion witness: on a kernel that runs no BPF program on top of
// pid 1's threads, the counts may be short of dd's by the completions it saw run there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { classOp, parseClassName } from '@blkheat/shared-types';
import { createLoopDevice, nextSecond, runCommand, runDd, type CompletionWitness, type WitnessCount } from '@blkheat/testkit';
import { record, classTotals, completionWitness, type Recording } from './lib/collect.js';

/**
 * Runs `work` inside whole seconds, under the witness of `dev`'s completions, and returns the
 * class totals of `dev` over them and what the witness saw.
 */
async function classesOf(
  rec: Recording,
  witness: CompletionWitness,
  dev: string,
  work: () => Promise<void>,
): Promise<{ classes: Map<string, number>; seen: WitnessCount }> {
  const from = await nextSecond();
  witness.start();
  await work();
  const seen = witness.stop();
  const to = Math.floor(Date.now() / 1000) + 1;
  await rec.waitForSecond(to);
  return { classes: new Map([...classTotals(rec.frames, dev, from, to + 1)].map(([c, acc]) => [c, acc.n])), seen };
}

/**
 * Of the completions no BPF program could see (the witness's, by rwbs), those of op `op` ("R",
 * "W", "D", "F" for a flush request) carrying every flag in `flags` ("S" sync, "M" metadata). An
 * rwbs is the op letter, after an "F" for a preflush ("FWS": a write with one), then the flags.
 */
function hiddenOf(seen: WitnessCount, op: string, flags = ''): number {
  let n = 0;
  for (const [rwbs, count] of seen.hiddenRwbs) {
    const preflush = rwbs.length > 1 && rwbs[0] === 'F' && 'WRDN'.includes(rwbs[1] as string);
    const rest = rwbs.slice(preflush ? 2 : 1);
    if ((preflush ? rwbs[1] : rwbs[0]) === op && [...flags].every((f) => rest.includes(f))) n += count;
  }
  return n;
}

function sumWhere(classes: Map<string, number>, pred: (name: string) => boolean): number {
  let n = 0;
  for (const [c, count] of classes) if (pred(c)) n += count;
  return n;
}

test('op classes: direct reads, dsync writes, fsync flushes, discards, ext4 metadata', { timeout: 120_000 }, async (t) => {
  const loop = createLoopDevice({ sizeMiB: 128, t });
  const witness = completionWitness(t, loop);
  const rec = await record(t);

  const { classes: reads, seen: readsSeen } = await classesOf(rec, witness, loop.dev, () =>
    runDd({ if: loop.path, of: '/dev/null', bs: '4k', count: 200, iflag: 'direct' }),
  );
  assert.equal(
    sumWhere(reads, (c) => classOp(c) === 'Read'),
    200 - hiddenOf(readsSeen, 'R'),
    `direct reads: ${JSON.stringify([...reads])} (${readsSeen.text})`,
  );
  assert.deepEqual(
    [...reads.keys()].filter((c) => classOp(c) !== 'Read'),
    [],
    'nothing but reads while reading',
  );
  // blkdev direct I/O is marked REQ_SYNC by the kernel: biolatency -F prints it as Sync-Read too.
  for (const c of reads.keys()) assert.ok(['Read', 'Sync-Read'].includes(c), `unexpected read class ${c}`);

  const { classes: dsync, seen: dsyncSeen } = await classesOf(rec, witness, loop.dev, () =>
    runDd({ if: '/dev/zero', of: loop.path, bs: '4k', count: 50, oflag: 'direct,dsync' }),
  );
  // Each O_DSYNC write is a data write plus an fsync: the flush machinery turns them into
  // Sync-Writes (REQ_SYNC added, REQ_PREFLUSH/REQ_FUA consumed) and separate flush requests.
  // A data request of a flush sequence completes twice, the I/O being the second (ftrace sees
  // both): the write completions hidden from BPF bound the Sync-Writes missed from above.
  const syncWrites = sumWhere(dsync, (c) => classOp(c) === 'Write' && parseClassName(c).flags.includes('Sync'));
  assert.ok(
    syncWrites >= 50 - hiddenOf(dsyncSeen, 'W'),
    `dsync writes: ${syncWrites} Sync-Write (${JSON.stringify([...dsync])}; ${dsyncSeen.text})`,
  );
  assert.ok(
    (dsync.get('Flush') ?? 0) >= 50 - hiddenOf(dsyncSeen, 'F'),
    `dsync writes: ${dsync.get('Flush') ?? 0} Flush (${JSON.stringify([...dsync])}; ${dsyncSeen.text})`,
  );

  const { classes: discards, seen: discardsSeen } = await classesOf(rec, witness, loop.dev, () =>
    runCommand('blkdiscard', ['-o', '0', '-l', String(16 << 20), loop.path]).then(() => undefined),
  );
  assert.ok(
    sumWhere(discards, (c) => classOp(c) === 'Discard') + hiddenOf(discardsSeen, 'D') >= 1,
    `blkdiscard: ${JSON.stringify([...discards])} (${discardsSeen.text})`,
  );

  const mnt = mkdtempSync('/tmp/blkheat-mnt-');
  t.after(async () => {
    await runCommand('umount', [mnt]).catch(() => undefined);
    rmSync(mnt, { recursive: true, force: true });
  });
  const { classes: meta, seen: metaSeen } = await classesOf(rec, witness, loop.dev, async () => {
    await runCommand('mkfs.ext4', ['-q', '-F', loop.path]);
    await runCommand('mount', [loop.path, mnt]);
    for (let i = 0; i < 100; i++) writeFileSync(`${mnt}/f${i}`, `file ${i}\n`);
    const fd = openSync(`${mnt}/f0`, 'r+');
    fsyncSync(fd);
    closeSync(fd);
    await runCommand('umount', [mnt]);
  });
  const metadata = [...meta.keys()].filter((c) => parseClassName(c).flags.includes('Metadata'));
  const hiddenMetaWrites = hiddenOf(metaSeen, 'W', 'M');
  assert.ok(
    metadata.length > 0 || hiddenMetaWrites + hiddenOf(metaSeen, 'R', 'M') > 0,
    `ext4 metadata: no Metadata- class in ${JSON.stringify([...meta])} (${metaSeen.text})`,
  );
  assert.ok(
    sumWhere(meta, (c) => parseClassName(c).flags.includes('Metadata') && classOp(c) === 'Write') + hiddenMetaWrites > 0,
    `no Metadata-...-Write in ${JSON.stringify([...meta])} (${metaSeen.text})`,
  );
  assert.ok(
    (meta.get('Flush') ?? 0) + hiddenOf(metaSeen, 'F') > 0,
    `fsync on ext4: no Flush in ${JSON.stringify([...meta])} (${metaSeen.text})`,
  );
});

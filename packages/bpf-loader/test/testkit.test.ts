// The test fixtures themselves (packages/testkit): /proc/diskstats parsing and loop devices.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { completedRequests, createLoopDevice, diskstatsDelta, parseDiskstats, readDiskstats } from '@blkheat/testkit';
import { directReads } from './helpers.js';

test('parseDiskstats reads the 11-, 15- and 17-field formats', () => {
  const text = [
    '   8       0 sda 10 1 200 30 20 2 400 50 0 60 80',
    '   8      16 sdb 10 1 200 30 20 2 400 50 1 60 80 3 0 24 5',
    ' 254       0 vda 11029 3291 840414 4373 2657 2011 161632 4079 0 9512 9286 7 0 56 1 380 832',
    'garbage',
  ].join('\n');
  const stats = parseDiskstats(text);
  assert.equal(stats.size, 3);
  assert.deepEqual(
    [stats.get('sda')?.reads, stats.get('sda')?.writes, stats.get('sda')?.discards, stats.get('sda')?.flushes],
    [10, 20, 0, 0],
  );
  assert.equal(stats.get('sdb')?.inFlight, 1);
  assert.equal(stats.get('sdb')?.discards, 3);
  assert.equal(stats.get('sdb')?.flushes, 0);
  const vda = stats.get('vda');
  assert.ok(vda);
  assert.equal(vda.dev, '254:0');
  assert.equal(vda.sectorsRead, 840414);
  assert.equal(vda.discards, 7);
  assert.equal(vda.flushes, 380);
  assert.equal(vda.flushTimeMs, 832);
  assert.equal(completedRequests(vda), 11029 + 2657 + 7 + 380);

  const later = parseDiskstats(' 254       0 vda 11030 3291 840422 4374 2660 2011 161640 4080 2 9513 9287 7 0 56 1 381 833');
  const delta = diskstatsDelta(stats, later).get('vda');
  assert.ok(delta);
  assert.deepEqual([delta.reads, delta.writes, delta.flushes, delta.sectorsRead], [1, 3, 1, 8]);
  assert.equal('inFlight' in delta, false);
  assert.equal(diskstatsDelta(stats, later).has('sda'), false, 'vanished devices are left out');
});

test('createLoopDevice: a real block device; close() detaches it and deletes the file', async () => {
  const loop = createLoopDevice({ sizeMiB: 4 });
  try {
    assert.match(loop.path, /^\/dev\/loop\d+$/);
    assert.equal(loop.dev, `${loop.major}:${loop.minor}`);
    assert.equal(loop.major, 7);
    assert.equal(Number(readFileSync(`/sys/block/${loop.name}/size`, 'utf8')) * 512, 4 * 1024 * 1024);
    assert.equal(readFileSync(`/sys/block/${loop.name}/loop/backing_file`, 'utf8').trim(), loop.backingFile);
    const before = readDiskstats();
    await directReads(loop.path, 8);
    // No witness: diskstats against dd's own count, no BPF count in between (diskstats counts every completion).
    assert.equal(diskstatsDelta(before, readDiskstats()).get(loop.name)?.reads, 8);
  } finally {
    loop.close();
  }
  loop.close();
  assert.equal(existsSync(loop.backingFile), false);
  assert.equal(execFileSync('losetup', ['-j', loop.backingFile], { encoding: 'utf8' }).trim(), '');
});

test('createLoopDevice with a test context cleans up in t.after()', async (t) => {
  let backingFile = '';
  await t.test('inner', (inner) => {
    backingFile = createLoopDevice({ sizeMiB: 1, t: inner }).backingFile;
    assert.equal(existsSync(backingFile), true);
  });
  assert.equal(existsSync(backingFile), false, 'gone after the inner test ended');
});

test('a loop device left by a killed process is detached by the next process that creates one', () => {
  // A process killed outright (as a machine restart mid-run does) cannot clean up after itself.
  const child = (code: string): string =>
    execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', cwd: import.meta.dirname }).trim();
  let orphan = '';
  try {
    child(
      "import { createLoopDevice } from '@blkheat/testkit'; process.stdout.write(createLoopDevice({ sizeMiB: 1 }).backingFile); process.kill(process.pid, 'SIGKILL');",
    );
  } catch (error) {
    orphan = String((error as { stdout?: unknown }).stdout ?? '').trim();
  }
  assert.match(orphan, /blkheat-loop-\d+-/, 'the killed child said which file backs its device');
  assert.notEqual(execFileSync('losetup', ['-j', orphan], { encoding: 'utf8' }).trim(), '', 'the device outlived its process');
  child("import { createLoopDevice } from '@blkheat/testkit'; createLoopDevice({ sizeMiB: 1 }).close();");
  assert.equal(execFileSync('losetup', ['-j', orphan], { encoding: 'utf8' }).trim(), '', 'detached by the next process');
  assert.equal(existsSync(orphan), false, 'and its backing file deleted');
});

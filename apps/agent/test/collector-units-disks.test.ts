// The collector's view of the disks, without the kernel (over a fake sysfs tree): names,
// partitions, request- vs bio-based, the disk scope of --disk and --partitions, and the queue
// settings whose change freezes a queue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeviceRegistry } from '../src/collector/host/devices.js';
import { DiskScope } from '../src/collector/host/disk-scope.js';
import { QueueSettingsWatcher, queueSettingValue } from '../src/collector/host/queue-settings.js';
import { CollectorError } from '../src/collector/errors.js';
import { devString } from '../src/collector/abi/layout.js';
import { fakeSysfs } from './lib/fake-sysfs.js';

test('sysfs resolution: names, partitions to their disk, request vs bio, size, model, lookup by name', (t) => {
  const root = fakeSysfs(t);
  const reg = new DeviceRegistry(root);
  const part = reg.resolve((254 << 20) | 1);
  assert.equal(part.name, 'vda1');
  assert.equal(part.isPartition, true);
  assert.equal(devString(part.wholeDev), '254:0');
  assert.equal(part.kind, 'request');
  const loop = reg.resolve((7 << 20) | 3);
  assert.deepEqual(
    { name: loop.name, kind: loop.kind, size: loop.sizeBytes, model: loop.model },
    { name: 'loop3', kind: 'request', size: 4096 * 512, model: 'loop: /dev/shm/x.img' },
  );
  assert.equal(reg.resolve((253 << 20) | 0).kind, 'bio');
  assert.equal(reg.resolve((254 << 20) | 0).model, 'virtio disk');
  assert.equal(reg.lookup('vda1'), (254 << 20) | 1);
  assert.equal(reg.lookup('7:3'), (7 << 20) | 3);
  assert.equal(reg.lookup('nope'), undefined);
  assert.equal(reg.lookup('../../etc'), undefined);
  const gone = reg.resolve((8 << 20) | 0);
  assert.equal(gone.present, false);
  assert.equal(gone.name, '8:0');
  assert.equal(reg.rescan(), false, 'every disk was already resolved: nothing new');
  assert.equal(new DeviceRegistry(root).rescan(), true, 'a first scan finds the disks');
  assert.deepEqual(
    reg.list(new Set()).map((d) => d.name),
    ['loop3', 'vda', 'zram0'],
  );
  rmSync(join(root, 'dev/block/7:3'));
  rmSync(join(root, 'block/loop3'));
  assert.equal(reg.rescan(), true, 'a disk going away is a change');
  assert.equal(reg.resolve((7 << 20) | 3).present, false);
  assert.equal(reg.rescan(), false, 'nothing changed since');
});

test('disk scope: --disk picks shown disks (a partition names its disk; with --partitions, a disk names its partitions too)', (t) => {
  const root = fakeSysfs(t);
  const reg = new DeviceRegistry(root);
  reg.rescan();
  const [vda, vda1, loop3, zram0] = [(254 << 20) | 0, (254 << 20) | 1, (7 << 20) | 3, (253 << 20) | 0];
  const known = reg.list(new Set());

  const all = DiskScope.of(reg, [], false);
  assert.equal(all.only, undefined, 'no --disk: every disk');
  assert.deepEqual([all.shownDev(vda1), all.shownDev(loop3), all.shownDev(zram0)], [vda, loop3, zram0], 'partitions roll up');
  assert.deepEqual([...all.measuredDisks(known)], [loop3, vda], 'untimed I/Os are measured on request-based disks only');

  const onePart = DiskScope.of(reg, ['vda1'], false);
  assert.deepEqual([...(onePart.only ?? [])], [vda], 'without --partitions a partition names its whole disk');
  assert.equal(onePart.shownDev(vda1), vda);
  assert.equal(onePart.shownDev(loop3), undefined, 'a disk not named is filtered out');
  assert.equal(onePart.includes(zram0), false);

  const split = DiskScope.of(reg, ['vda'], true);
  assert.deepEqual([...(split.only ?? [])], [vda, vda1], 'with --partitions a disk names itself and its partitions');
  assert.equal(split.shownDev(vda1), vda1, 'each shown on its own');
  assert.deepEqual([...split.measuredDisks(known)], [vda, vda1]);
  assert.deepEqual([...(DiskScope.of(reg, ['vda1'], true).only ?? [])], [vda1], 'a partition names only itself');

  assert.throws(
    () => DiskScope.of(reg, ['sdz'], false),
    (e: unknown) => e instanceof CollectorError && /disk 'sdz' does not exist \(disks here: loop3, vda, zram0\)/.test(e.message),
  );
});

test('queue settings: a changed scheduler or nr_requests is given once, with the tick after the look that found it; a first look, a bio disk or an unreadable file gives none', async (t) => {
  const root = fakeSysfs(t);
  const reg = new DeviceRegistry(root);
  reg.rescan();
  const disks = reg.list(new Set());
  const queue = join(root, 'block/vda/queue');
  mkdirSync(queue, { recursive: true });
  writeFileSync(join(queue, 'scheduler'), '[none] mq-deadline\n');
  writeFileSync(join(queue, 'nr_requests'), '256\n');
  const watcher = new QueueSettingsWatcher(root);
  const tick = async (): Promise<Record<string, string[]>> => {
    const found = watcher.take(disks);
    await watcher.settled();
    return Object.fromEntries([...found].map(([dev, s]) => [devString(dev), [...s]]));
  };
  assert.deepEqual(await tick(), {}, 'the first look is the baseline');
  assert.deepEqual(await tick(), {}, 'nothing changed');
  writeFileSync(join(queue, 'scheduler'), 'none [mq-deadline]\n');
  assert.deepEqual(await tick(), {}, 'the look that finds it is given with the next tick');
  writeFileSync(join(queue, 'nr_requests'), '4\n');
  assert.deepEqual(await tick(), { '254:0': ['scheduler'] });
  assert.deepEqual(await tick(), { '254:0': ['nr_requests'] });
  writeFileSync(join(queue, 'scheduler'), '[none] mq-deadline\n');
  writeFileSync(join(queue, 'nr_requests'), '64\n');
  await tick();
  assert.deepEqual(await tick(), { '254:0': ['scheduler', 'nr_requests'] }, 'both, in QUEUE_SETTINGS order');
  rmSync(join(queue, 'nr_requests'));
  await tick();
  assert.deepEqual(await tick(), {}, 'a file that cannot be read is no change');
  assert.equal(queueSettingValue('scheduler', 'mq-deadline kyber [bfq] none\n'), 'bfq');
  assert.equal(queueSettingValue('nr_requests', '128\n'), '128');
});

/**
 * A sysfs tree in a temp directory for the collector's unit tests: block devices by dev_t and by
 * name, a partition, a loop device's backing file, a bio-based disk, as /sys lays them out.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CleanupContext } from '@blkheat/testkit';

/** A fake sysfs: vda (blk-mq) with partition vda1, loop3 over a file, zram0 (bio-based). Removed after the test. */
export function fakeSysfs(t: CleanupContext): string {
  const root = mkdtempSync(join(tmpdir(), 'blkheat-sysfs-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const disk = (
    name: string,
    dev: string,
    opts: { mq: boolean; sectors: number; parent?: string; backing?: string; model?: string },
  ): void => {
    const dir = opts.parent ? join(root, 'devices/virtual/block', opts.parent, name) : join(root, 'devices/virtual/block', name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'dev'), `${dev}\n`);
    writeFileSync(join(dir, 'size'), `${opts.sectors}\n`);
    if (opts.mq) mkdirSync(join(dir, 'mq'));
    if (opts.parent) writeFileSync(join(dir, 'partition'), '1\n');
    if (opts.backing) {
      mkdirSync(join(dir, 'loop'));
      writeFileSync(join(dir, 'loop/backing_file'), `${opts.backing}\n`);
    }
    if (opts.model) {
      mkdirSync(join(dir, 'device'));
      writeFileSync(join(dir, 'device/model'), `${opts.model}\n`);
    }
    mkdirSync(join(root, 'dev/block'), { recursive: true });
    symlinkSync(join('../../devices/virtual/block', opts.parent ? `${opts.parent}/${name}` : name), join(root, 'dev/block', dev));
    if (!opts.parent) {
      mkdirSync(join(root, 'block'), { recursive: true });
      symlinkSync(join('../devices/virtual/block', name), join(root, 'block', name));
    }
    mkdirSync(join(root, 'class/block'), { recursive: true });
    symlinkSync(join('../../devices/virtual/block', opts.parent ? `${opts.parent}/${name}` : name), join(root, 'class/block', name));
  };
  disk('vda', '254:0', { mq: true, sectors: 2048, model: 'virtio disk' });
  disk('vda1', '254:1', { mq: true, sectors: 1024, parent: 'vda' });
  disk('loop3', '7:3', { mq: true, sectors: 4096, backing: '/dev/shm/x.img' });
  disk('zram0', '253:0', { mq: false, sectors: 8192 });
  return root;
}

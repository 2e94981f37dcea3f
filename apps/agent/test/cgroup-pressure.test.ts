// Cgroups' I/O pressure (collector/host/cgroup-pressure.ts), without the kernel: a fake cgroup2
// tree of io.pressure files rewritten between reads, and a scripted clock. Which file a path
// names (cgroup2 io hierarchy, a sub-tree mount, the hybrid mirror of a v1 blkio hierarchy, none);
// the stall per second of each cgroup charged lately, nothing for a first read, a cgroup without
// a file said once and left out, cgroups forgotten after KEEP_READS reads without I/O, the
// special names never read; and the frame carries it, valid, the most stalled first.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CGROUP_NONE, CGROUP_OTHER, type CgroupPressure, frameSchema } from '@blkheat/shared-types';
import { CgroupPressureReader, KEEP_READS, pressureFile, pressureRoot } from '../src/collector/host/cgroup-pressure.js';
import { findCgroup2Mount } from '../src/collector/host/cgroups.js';
import { buildFrame } from '../src/collector/decode/frame-builder.js';
import { ClassNamer } from '../src/collector/decode/classes.js';
import { DeviceRegistry } from '../src/collector/host/devices.js';
import { ABI } from './lib/abi.js';
import { fakeSysfs } from './lib/fake-sysfs.js';

const SECOND = 1_000_000_000n;
const psiText = (some: number, full: number): string =>
  `some avg10=1.25 avg60=0.40 avg300=0.09 total=${some}\nfull avg10=0.50 avg60=0.10 avg300=0.02 total=${full}\n`;

const MOUNTINFO = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

test('which io.pressure a cgroup path names: its own on cgroup2, the same path in cgroup2 beside v1 blkio, none without cgroup2', () => {
  const unified = findCgroup2Mount(MOUNTINFO);
  assert.deepEqual(unified, { mountPoint: '/sys/fs/cgroup/unified', root: '/', version: 2 });
  const v1 = { mountPoint: '/sys/fs/cgroup/blkio', root: '/', version: 1 as const };
  assert.deepEqual(pressureRoot(v1, unified), { mountPoint: '/sys/fs/cgroup/unified', root: '/', mirror: true });
  assert.match(JSON.stringify(pressureRoot(v1, undefined)), /cgroup v1 \(blkio\), which has no io.pressure/);
  assert.match(JSON.stringify(pressureRoot(undefined, unified)), /no cgroup hierarchy holds the io controller/);
  const v2 = { mountPoint: '/sys/fs/cgroup', root: '/', version: 2 as const };
  const root = pressureRoot(v2, v2);
  assert.ok(!('none' in root) && !root.mirror);
  assert.equal(pressureFile(v2, '/system.slice/db.service'), '/sys/fs/cgroup/system.slice/db.service/io.pressure');
  assert.equal(pressureFile(v2, '/'), '/sys/fs/cgroup/io.pressure');
  // A container's mount of a sub-tree: paths are the hierarchy's, the files under the mount.
  const sub = { mountPoint: '/sys/fs/cgroup', root: '/kubepods/pod1' };
  assert.equal(pressureFile(sub, '/kubepods/pod1/app'), '/sys/fs/cgroup/app/io.pressure');
  assert.equal(pressureFile(sub, '/elsewhere'), undefined, 'outside the mount');
  for (const g of [CGROUP_NONE, CGROUP_OTHER, 'cgroup#4242', '/a/../../etc']) assert.equal(pressureFile(v2, g), undefined, g);
});

interface Rig {
  readonly reader: CgroupPressureReader;
  readonly logs: string[];
  readonly warnings: string[];
  write(g: string, some: number, full: number): void;
  /** Moves the clock on a second and reads with `charged` (the reader has a root: never undefined). */
  read(charged: readonly string[]): CgroupPressure[];
}

function rig(t: TestContext): Rig {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-cgpsi-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let now = 1000n * SECOND;
  const logs: string[] = [];
  const warnings: string[] = [];
  const reader = new CgroupPressureReader(
    { mountPoint: dir, root: '/', mirror: false },
    { now: () => now, log: (l) => logs.push(l), warn: (w) => warnings.push(w) },
  );
  return {
    reader,
    logs,
    warnings,
    write(g, some, full) {
      mkdirSync(join(dir, g), { recursive: true });
      writeFileSync(join(dir, g, 'io.pressure'), psiText(some, full));
    },
    read(charged) {
      now += SECOND;
      const got = reader.read(charged);
      assert.ok(got, 'a reader with a root reads');
      return got;
    },
  };
}

test('each cgroup charged lately: its stall per second from the second read on; a cgroup without a file said once and left out', (t) => {
  const r = rig(t);
  r.write('/db', 1_000_000, 500_000);
  r.write('/backup', 0, 0);
  assert.deepEqual(r.read(['/db', CGROUP_NONE, '/gone']), [], 'a first read gives nothing');
  assert.equal(r.logs.filter((l) => l.includes('/gone')).length, 1, r.logs.join('\n'));
  r.write('/db', 1_900_000, 1_300_000);
  assert.deepEqual(r.read(['/db', '/backup', '/gone']), [{ g: '/db', some_us: 900_000, full_us: 800_000 }]);
  r.write('/db', 2_000_000, 1_300_000);
  r.write('/backup', 250_000, 0);
  // /db completed nothing this second (held back): still read, it was charged lately.
  assert.deepEqual(r.read(['/backup']), [
    { g: '/db', some_us: 100_000, full_us: 0 },
    { g: '/backup', some_us: 250_000, full_us: 0 },
  ]);
  assert.equal(r.logs.filter((l) => l.includes('/gone')).length, 1, 'said once');
  assert.deepEqual(r.warnings, []);
});

test(`a cgroup not charged for ${KEEP_READS} reads is forgotten; junk in a file is a warning once, never a throw`, (t) => {
  const r = rig(t);
  r.write('/db', 0, 0);
  r.write('/web', 0, 0);
  r.read(['/db', '/web']);
  for (let i = 1; i < KEEP_READS; i++)
    assert.deepEqual(
      r
        .read(['/web'])
        .map((p) => p.g)
        .sort(),
      ['/db', '/web'],
      `read ${i}`,
    );
  assert.deepEqual(
    r.read(['/web']).map((p) => p.g),
    ['/web'],
    'forgotten',
  );
  r.write('/web', Number.NaN, 0);
  assert.deepEqual(r.read(['/web']), []);
  r.read(['/web']);
  assert.equal(r.warnings.length, 1, r.warnings.join('\n'));
});

test('the frame carries the cgroups’ pressure, the most stalled first, and it is valid', (t) => {
  const reg = new DeviceRegistry(fakeSysfs(t));
  const namer = new ClassNamer(new Map([['REQ_OP_READ', 0]]), ABI.classBits);
  const cgPsi = [
    { g: '/a', some_us: 10, full_us: 0 },
    { g: '/b', some_us: 900_000, full_us: 100 },
  ];
  const frame = buildFrame(1795290000, [], reg, namer, { partitions: false }, { cgPsi });
  assert.deepEqual(frame.cg_psi, [cgPsi[1], cgPsi[0]]);
  assert.equal(frameSchema.safeParse(frame).success, true);
  assert.equal(buildFrame(1795290000, [], reg, namer, { partitions: false }, { cgPsi: [] }).cg_psi, undefined, 'none: absent');
});

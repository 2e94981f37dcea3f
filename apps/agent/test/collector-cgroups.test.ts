// Per-cgroup accounting on the real kernel: two fio processes in two cgroups of the hierarchy that
// holds the io controller (blkio v1 here, or cgroup2) write to one loop device; each cgroup's
// count must equal its fio job's own I/O count, under the cgroup's path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CGROUP_NONE, denseTotal } from '@blkheat/shared-types';
import { createLoopDevice, nextSecond, runFio } from '@blkheat/testkit';
import { CgroupNamer, findIoHierarchy } from '../src/collector/host/cgroups.js';
import { addToGroup, completionWitness, diskSeconds, groupCountsByDisk, lossReport, record, type GroupTotals } from './lib/collect.js';

const hierarchy = findIoHierarchy(readFileSync('/proc/self/mountinfo', 'utf8'));

test(
  'cgroups: two fio jobs in two cgroups writing one loop device are counted per cgroup, exactly, under their paths',
  { timeout: 90_000, skip: hierarchy ? false : 'NO CGROUP HIERARCHY WITH THE IO CONTROLLER: per-cgroup accounting cannot be tested' },
  async (t) => {
    const h = hierarchy as NonNullable<typeof hierarchy>;
    t.diagnostic(`io controller: cgroup v${h.version} at ${h.mountPoint}`);
    const names = ['a', 'b'].map((x) => `blkheat-test-${process.pid}-${x}`);
    const dirs = names.map((n) => join(h.mountPoint, n));
    for (const d of dirs) mkdirSync(d);
    t.after(() => {
      for (const d of dirs) rmdirSync(d);
    });
    const loop = createLoopDevice({ sizeMiB: 256, t });
    const rec = await record(t, { disks: [loop.name] });
    const witness = completionWitness(t, loop);
    const from = await nextSecond();
    witness.start();
    const [a, b] = await Promise.all([
      runFio({ filename: loop.path, rw: 'randwrite', numberIos: 6_000, cgroupDir: dirs[0] }),
      runFio({ filename: loop.path, rw: 'randwrite', bs: '16k', numberIos: 2_500, cgroupDir: dirs[1] }),
    ]);
    const seen = witness.stop();
    const to = Math.floor(Date.now() / 1000) + 1;
    await rec.waitForSecond(to);

    const byCgroup: GroupTotals<string> = new Map();
    let classCount = 0;
    for (const d of diskSeconds(rec.frames, loop.dev, from, to)) {
      for (const c of d.cls) if (!c.pt) classCount += c.n;
      for (const g of d.cg ?? []) addToGroup(byCgroup, g.g, g.n, g.d);
    }
    t.diagnostic(`by cgroup: ${[...byCgroup].map(([g, v]) => `${g}: ${v.n}`).join(', ')}; fio: a ${a.ios}, b ${b.ios}`);
    const root = h.root === '/' ? '' : h.root;
    const pathA = `${root}/${names[0]}`;
    const pathB = `${root}/${names[1]}`;
    // A shortfall names its likely cause: completions no probe saw are untimed, with no cgroup.
    const untimed = groupCountsByDisk(rec.frames, from, to).get(loop.dev)?.untimed;
    const why = `${loop.name} untimed in the window: ${JSON.stringify(untimed)}; ${seen.text}; ${lossReport(rec.collector)}`;
    const nA = byCgroup.get(pathA)?.n ?? 0;
    const nB = byCgroup.get(pathB)?.n ?? 0;
    // Completions the kernel showed to no BPF program have no cgroup: each group may be short,
    // by exactly those together (which group each belonged to, no witness says); with none
    // hidden, both equal fio's counts.
    if (seen.hiddenFromBpf > 0) t.diagnostic(`NOTE: ${seen.hiddenFromBpf} completions ran where this kernel shows no BPF program`);
    assert.ok(nA <= a.ios && nB <= b.ios, `cgroups counted ${nA}/${nB}, more than fio's ${a.ios}/${b.ios} (${why})`);
    assert.equal(a.ios - nA + (b.ios - nB), seen.hiddenFromBpf, `cgroups ${pathA} ${nA}, ${pathB} ${nB}, fio ${a.ios}, ${b.ios} (${why})`);
    for (const p of [pathA, pathB]) {
      const v = byCgroup.get(p) as { n: number; d: Float64Array };
      assert.equal(denseTotal(v.d), v.n, `${p}: every counted I/O has a latency`);
    }
    const total = [...byCgroup.values()].reduce((n, v) => n + v.n, 0);
    assert.equal(total, classCount, 'Σ over cgroups = Σ over the classes diskstats counts');
    assert.ok(!byCgroup.has(CGROUP_NONE) || (byCgroup.get(CGROUP_NONE)?.n ?? 0) < total, 'data I/O is charged to a cgroup');
  },
);

test('cgroup names: a mountinfo with blkio v1 and cgroup2 picks blkio; ids resolve to paths by inode', (t) => {
  const mountinfo = [
    '25 1 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755',
    '30 25 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
    '34 25 0:31 / /sys/fs/cgroup/blk\\040io rw,relatime - cgroup cgroup rw,blkio',
  ].join('\n');
  assert.deepEqual(findIoHierarchy(mountinfo), { mountPoint: '/sys/fs/cgroup/blk io', root: '/', version: 1 });
  assert.deepEqual(findIoHierarchy(mountinfo.split('\n').slice(0, 2).join('\n')), {
    mountPoint: '/sys/fs/cgroup/unified',
    root: '/',
    version: 2,
  });
  assert.equal(findIoHierarchy('garbage\n\n- -'), undefined);

  // Any directory tree serves to check the walk: the ids are inode numbers.
  const dir = join(tmpdir(), `blkheat-cgnames-${process.pid}`);
  mkdirSync(join(dir, 'x', 'y'), { recursive: true });
  t.after(() => {
    rmdirSync(join(dir, 'x', 'y'));
    rmdirSync(join(dir, 'x'));
    rmdirSync(dir);
  });
  let now = 0;
  const namer = new CgroupNamer({ mountPoint: dir, root: '/ns', version: 2 }, () => now);
  assert.equal(namer.name(statSync(join(dir, 'x', 'y'), { bigint: true }).ino), '/ns/x/y');
  assert.equal(namer.name(statSync(dir, { bigint: true }).ino), '/ns');
  assert.equal(namer.name(0n), CGROUP_NONE);
  assert.equal(namer.name(1n), 'cgroup#1', 'an id not in the tree is shown by its number');
  now += 10_000;
  assert.equal(namer.name(1n), 'cgroup#1');
});

// Incident views against the real agent on real I/O: the size × latency panel, the cgroup table and
// its filter, and failed I/Os on the heat map. Each test runs its I/O first, then opens the
// dashboard on a fixed range around it (?from&to), so what the page shows is compared with fio's
// own counts and the agent's range answer. Screenshots go to artifacts/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  completionWitness,
  createDelayedLoopDevice,
  createLoopDevice,
  hook,
  nextSecond,
  runCommand,
  runFio,
  sleep,
  sleepUntilSecond,
} from '@blkheat/testkit';
import { findIoHierarchy, kernelFactsOf } from '@blkheat/agent/collector';
import { canRun, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';

/** Whether this kernel runs no BPF program on top of pid 1's threads (docs/accounting.md). */
const hidesInitContext = kernelFactsOf(undefined).hidesInitContext;

/** The dashboard on the fixed range [from, to) of one disk, once the agent has closed `to`. */
async function openRange(t: Parameters<typeof openDashboard>[0], url: string, disk: string, from: number, to: number) {
  await sleepUntilSecond(to + 2);
  const s = await openDashboard(t, `${url}?from=${from}&to=${to}&disks=${disk}`);
  const h = hook(s.page);
  await h.idle();
  return { page: s.page, h };
}

test(
  'size × latency: 4 KiB and 512 KiB reads in their size columns with fio’s counts, the big ones higher',
  { timeout: 180_000 },
  async (t) => {
    if (!canRun(t, { fuse: true, fio: true })) return;
    const disk = await createDelayedLoopDevice({ delayMs: 0.5, sizeMiB: 256, t });
    // Each read's delay grows with its size: 512 KiB reads wait ~10 ms more than 4 KiB ones.
    disk.setDelayPerMiB(20);
    const agent = await startAgent(t, ['--disk', disk.name]);
    const witness = completionWitness(t, disk, hidesInitContext);
    const from = await nextSecond();
    witness.start();
    // 512 KiB, not 1 MiB: a loop device takes at most 128 segments, so fio's 1 MiB reads would
    // reach the disk as two requests each (see collector-latency's sizes test).
    const [small, big] = await Promise.all([
      runFio({ filename: disk.path, rw: 'randread', bs: '4k', numberIos: 1500 }),
      runFio({ filename: disk.path, rw: 'randread', bs: '512k', numberIos: 300 }),
    ]);
    const seen = witness.stop();
    // fio's counts, less what this kernel showed to no BPF program, by size.
    const smallSeen = small.ios - (seen.hiddenBytes.get(4096) ?? 0);
    const bigSeen = big.ios - (seen.hiddenBytes.get(512 << 10) ?? 0);
    const to = Math.floor(Date.now() / 1000) + 1;
    const { page, h } = await openRange(t, agent.url, disk.name, from, to);
    const sl = await h.sizeLatency(disk.dev);
    assert.ok(sl, 'the size panel has data');
    const bySize = new Map(sl.sizes.map((z) => [z.s, z.n]));
    t.diagnostic(
      `size classes drawn: ${sl.sizes.map((z) => `2^${z.s} B: ${z.n}`).join(', ')}; fio: ${small.ios} × 4k, ${big.ios} × 512k; ${seen.text}`,
    );
    assert.equal(bySize.get(12), smallSeen, `4 KiB reads (size class 12), as fio counted them (${seen.text})`);
    assert.equal(bySize.get(19), bigSeen, `512 KiB reads (size class 19), as fio counted them (${seen.text})`);
    // Each size column's cells sum to its count; the big reads sit in higher latency rows.
    const rows = (s: number): number[] => sl.cells.filter((c) => c.s === s).flatMap((c) => Array<number>(c.count).fill(c.bucket));
    const median = (xs: number[]): number => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    assert.equal(rows(12).length, smallSeen);
    assert.equal(rows(19).length, bigSeen);
    t.diagnostic(`median latency row: 4 KiB ${median(rows(12))}, 512 KiB ${median(rows(19))}`);
    assert.ok(median(rows(19)) > median(rows(12)), 'the 512 KiB cells sit above the 4 KiB cells');
    // The pixels: the busiest 512 KiB cell is lit.
    const hotBig = sl.cells.filter((c) => c.s === 19).sort((a, b) => b.count - a.count)[0];
    assert.ok(hotBig);
    const at = await h.sizeCellCenter(19, hotBig.bucket);
    assert.ok(at, 'the busiest 512 KiB cell is drawn');
    const px = await h.sizePixelAt(at.x, at.y);
    assert.ok(px && (px[3] as number) > 0, `the busiest 512 KiB cell is lit: ${JSON.stringify(px)}`);
    await page.locator('[data-testid=size-heatmap]').scrollIntoViewIfNeeded();
    await shot(page, 'size-latency-4k-512k');
  },
);

const hierarchy = findIoHierarchy(readFileSync('/proc/self/mountinfo', 'utf8'));

test('cgroups: the table counts each fio job’s writes, and a click filters the heat map to one job', { timeout: 180_000 }, async (t) => {
  if (!canRun(t, { fio: true })) return;
  if (!hierarchy) return void t.skip('NO CGROUP HIERARCHY WITH THE IO CONTROLLER: per-cgroup views cannot be tested');
  const names = ['a', 'b'].map((x) => `blkheat-e2e-${process.pid}-${x}`);
  const dirs = names.map((n) => join(hierarchy.mountPoint, n));
  for (const d of dirs) mkdirSync(d);
  t.after(() => {
    for (const d of dirs) rmdirSync(d);
  });
  const loop = createLoopDevice({ sizeMiB: 256, t });
  const agent = await startAgent(t, ['--disk', loop.name]);
  const witness = completionWitness(t, loop, hidesInitContext);
  await sleep(1500); // the udev probe of the new device is not ours to count
  const from = await nextSecond();
  witness.start();
  const [a, b] = await Promise.all([
    runFio({ filename: loop.path, rw: 'randwrite', numberIos: 4000, cgroupDir: dirs[0] }),
    runFio({ filename: loop.path, rw: 'randwrite', bs: '16k', numberIos: 1500, cgroupDir: dirs[1] }),
  ]);
  const seen = witness.stop();
  const to = Math.floor(Date.now() / 1000) + 1;
  const { page, h } = await openRange(t, agent.url, loop.name, from, to);
  const root = hierarchy.root === '/' ? '' : hierarchy.root;
  const pathA = `${root}/${names[0]}`;
  const pathB = `${root}/${names[1]}`;
  const table = await h.cgroups(loop.dev);
  t.diagnostic(`cgroup table: ${table.map((c) => `${c.g}: ${c.n}`).join(', ')}; fio: a ${a.ios}, b ${b.ios}; ${seen.text}`);
  const nA = table.find((c) => c.g === pathA)?.n ?? 0;
  const nB = table.find((c) => c.g === pathB)?.n ?? 0;
  // fio's writes, less what this kernel showed to no BPF program (which job's, no witness says).
  assert.ok(nA <= a.ios && nB <= b.ios, `${pathA} ${nA}, ${pathB} ${nB}: more than fio's ${a.ios}, ${b.ios}`);
  assert.equal(a.ios - nA + (b.ios - nB), seen.hiddenFromBpf, `${pathA} ${nA} and ${pathB} ${nB}: fio's jobs' writes (${seen.text})`);
  const shownA = await page.locator(`[data-testid=cgroup-row][data-cgroup="${pathA}"]`).getAttribute('data-count');
  assert.equal(Number(shownA), nA, 'the row shows the count');
  await shot(page, 'cgroups-1-table');

  // A click filters every view to job b: the heat map then counts b's writes only.
  await page.locator(`[data-testid=cgroup-row][data-cgroup="${pathB}"] [data-testid=cgroup-button]`).click();
  await h.idle();
  assert.equal((await h.state()).cgroup, pathB);
  const hist = await h.histogram(loop.dev);
  const drawn = hist.reduce((x, y) => x + y, 0);
  t.diagnostic(`filtered to ${pathB}: the heat map's histogram counts ${drawn}`);
  assert.equal(drawn, nB, 'the filtered heat map counts job b’s writes, and only those');
  // The page writes its URL a moment after a change (it coalesces them).
  const encoded = `cgroup=${pathB}`;
  await waitFor(page, 'the filter in the URL', async () => new URL(page.url()).search.includes(encoded), 5000);
  await shot(page, 'cgroups-2-filtered');
});

test('errors: reads failing with EIO are marked on the heat map in their seconds, with their count', { timeout: 120_000 }, async (t) => {
  if (!canRun(t, { fuse: true })) return;
  const disk = await createDelayedLoopDevice({ delayMs: 0, sizeMiB: 32, t });
  const agent = await startAgent(t, ['--disk', disk.name]);
  const failFrom = 8 << 20;
  disk.failReads(failFrom, failFrom + (1 << 20));
  const witness = completionWitness(t, disk, hidesInitContext);
  await sleep(1500);
  const from = await nextSecond();
  witness.start();
  const FAILED = 6;
  for (let i = 0; i < 40; i++) await runCommand('dd', [`if=${disk.path}`, 'of=/dev/null', 'bs=4k', 'count=1', `skip=${i}`, 'iflag=direct']);
  const failedAt: number[] = [];
  for (let i = 0; i < FAILED; i++) {
    failedAt.push(Math.floor(Date.now() / 1000));
    // dd stops at the first error: one failed read per run.
    await runCommand('dd', [`if=${disk.path}`, 'of=/dev/null', 'bs=4k', 'count=1', `skip=${failFrom / 4096 + i}`, 'iflag=direct']).then(
      () => assert.fail('a read of the failing range succeeded'),
      () => undefined,
    );
    await sleep(300);
  }
  const seen = witness.stop();
  const to = Math.floor(Date.now() / 1000) + 1;
  const { page, h } = await openRange(t, agent.url, disk.name, from, to);
  const faults = await h.faults(disk.dev);
  const failed = faults.reduce((n, f) => n + f.failed, 0);
  t.diagnostic(
    `marked: ${faults.map((f) => `${f.ts}: ${f.failed} failed ${JSON.stringify(f.byStatus)}`).join('; ')}; dd failed at ${failedAt.join(', ')}; ${seen.text}`,
  );
  // A failure that completed on top of pid 1's threads ran no BPF program on this kernel
  // (docs/accounting.md): it is untimed, its status unseen, and ftrace counts it.
  assert.equal(failed, FAILED - seen.hiddenFailed, `every failed read a BPF program may see is marked, once (${seen.text})`);
  for (const f of faults) assert.ok(failedAt.includes(f.ts) || failedAt.includes(f.ts - 1), `a mark at ${f.ts}, where no read failed`);
  assert.ok(
    faults.every((f) => Object.keys(f.byStatus).every((s) => s === 'IOERR')),
    'EIO is block status IOERR',
  );
  await shot(page, 'errors-eio-marks');
});

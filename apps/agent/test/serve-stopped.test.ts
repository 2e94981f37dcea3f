// The agent stopped (SIGSTOP) for 30 s in the middle of a flush-heavy run: the kernel keeps
// counting into per-second entries, and after SIGCONT the agent harvests every second it
// missed, once. Over the whole run the recorded frames equal /proc/diskstats per op group.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Frame } from '@blkheat/shared-types';
import { createLoopDevice, diskstatsDelta, sleep, startFio } from '@blkheat/testkit';
import { groupCountsByDisk, quietBoundary } from './lib/collect.js';
import { needsRootAndFio, startRealAgent, tempDataDir, gapOrDuplicate, type TestContextLike } from './serve-fixtures.js';

const STOPPED_S = 30;

test(
  `agent SIGSTOPped ${STOPPED_S} s mid-run: every second recorded once, counts equal /proc/diskstats`,
  { timeout: 180_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const loop = createLoopDevice({ sizeMiB: 128, t });
    const agent = await startRealAgent(t, tempDataDir(t), ['--disk', loop.name]);
    const start = await quietBoundary([loop.name]);
    const fio = [
      startFio({ filename: loop.path, rw: 'randrw', runtimeS: STOPPED_S + 10, rateIops: 2000, fsync: 4 }, t),
      startFio({ filename: loop.path, rw: 'randwrite', runtimeS: STOPPED_S + 10, rateIops: 300, sync: true }, t),
    ];
    await sleep(4000);
    process.kill(agent.pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    await sleep(STOPPED_S * 1000);
    process.kill(agent.pid, 'SIGCONT');
    t.diagnostic(`agent stopped for ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`);
    for (const f of fio) assert.equal(await f.done, 0, 'fio failed');
    const end = await quietBoundary([loop.name]);

    // Wait until the agent has recorded the last second of the window, then read it all back.
    let frames: Frame[] = [];
    const deadline = Date.now() + 15_000;
    for (;;) {
      const res = await fetch(`${agent.url}api/v1/range?from=${start.second}&to=${end.second}&step=1`);
      frames = ((await res.json()) as { frames: Frame[] }).frames;
      if (frames.at(-1)?.ts === end.second - 1 || Date.now() > deadline) break;
      await sleep(250);
    }
    const seconds = frames.map((f) => f.ts);
    assert.equal(gapOrDuplicate(seconds), undefined, `recorded seconds: ${seconds.join(',')}`);
    assert.equal(seconds.length, end.second - start.second, `${seconds.length} seconds recorded of ${end.second - start.second}`);
    const ours = groupCountsByDisk(frames, start.second, end.second).get(loop.dev);
    const kernel = diskstatsDelta(start.stats, end.stats).get(loop.name);
    assert.ok(ours && kernel, 'no I/O recorded on the loop device');
    assert.ok(kernel.writes > 10_000, `only ${kernel.writes} writes: the workload did not run`);
    for (const [g, k] of [
      ['read', kernel.reads],
      ['write', kernel.writes],
      ['discard', kernel.discards],
      ['flush', kernel.flushes],
    ] as const) {
      // No witness: counted + untimed (measured from /proc/diskstats) holds every completion, hidden from BPF or not.
      assert.equal(
        ours.counted[g] + ours.untimed[g],
        k,
        `${g}: ${ours.counted[g]} counted + ${ours.untimed[g]} untimed, /proc/diskstats ${k}`,
      );
    }
    t.diagnostic(
      `${kernel.reads + kernel.writes + kernel.flushes} I/Os over ${seconds.length} s conserved; untimed ${JSON.stringify(ours.untimed)}`,
    );
  },
);

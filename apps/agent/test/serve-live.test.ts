// The real agent on the real kernel: live frames match /proc/diskstats, and a client that
// reconnects with a backfill misses and repeats no second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completedRequests, createLoopDevice, readDiskstats, sleep, startFio } from '@blkheat/testkit';
import { classOp, type DiskInfo, type Frame, type ServerMessage } from '@blkheat/shared-types';
import {
  agentOnLoop,
  diskCount,
  gapOrDuplicate,
  needsRootAndFio,
  readFrames,
  startRealAgent,
  subscriber,
  tempDataDir,
  type TestContextLike,
} from './serve-fixtures.js';

const completedZero = { reads: 0, writes: 0, discards: 0, flushes: 0 };

test(
  'a client gets one frame per second; per disk the counts equal /proc/diskstats deltas',
  { timeout: 120_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const loopA = createLoopDevice({ sizeMiB: 128, t });
    const loopB = createLoopDevice({ sizeMiB: 128, t });
    const agent = await startRealAgent(t, tempDataDir(t));
    const { client, hello } = await subscriber(t, agent);
    /** Disks announced so far (hello, then `disks` messages): every frame's disks must be among them. */
    const known = new Map(hello.disks.map((d) => [d.dev, d]));
    const unannounced = new Set<string>();
    const track = (messages: readonly ServerMessage[]): void => {
      for (const m of messages) {
        if (m.t === 'disks') for (const d of m.disks) known.set(d.dev, d);
        if (m.t === 'frame') for (const d of m.frame.disks) if (!known.has(d.dev)) unannounced.add(d.dev);
      }
    };
    // Let the first (partial) second after subscribing go by, and the new devices settle.
    track((await readFrames(client, 2)).messages);
    const before = readDiskstats();
    const counted = new Map<string, number>([
      [loopA.dev, 0],
      [loopB.dev, 0],
    ]);
    /** Per disk and op ("Read", "Write", "Flush", ...): for the failure message. */
    const byOp = new Map<string, Map<string, number>>();
    const seconds: number[] = [];
    const fioA = startFio({ filename: loopA.path, rw: 'randrw', runtimeS: 9, rateIops: 400, fsync: 8 }, t);
    const fioB = startFio({ filename: loopB.path, runtimeS: 9, rateIops: 150, rw: 'randwrite' }, t);
    const take = async (n: number): Promise<void> => {
      const { frames, messages } = await readFrames(client, n);
      for (const f of frames) {
        seconds.push(f.ts);
        for (const dev of counted.keys()) counted.set(dev, (counted.get(dev) ?? 0) + diskCount(f, dev));
        for (const d of f.disks) {
          const ops = byOp.get(d.dev) ?? new Map<string, number>();
          byOp.set(d.dev, ops);
          for (const c of d.cls) ops.set(classOp(c.c), (ops.get(classOp(c.c)) ?? 0) + c.n);
        }
      }
      track(messages);
    };
    await take(10);
    await Promise.all([fioA.done, fioB.done]);
    // Wait until /proc/diskstats shows the loop devices idle for 2 s (nothing in flight, counts
    // still), then read frames past that second: every completed I/O is in a frame by then.
    const total = (): number => [loopA, loopB].reduce((n, l) => n + completedRequests(readDiskstats().get(l.name) ?? completedZero), 0);
    let quietSince = Date.now();
    for (let last = total(); Date.now() - quietSince < 2000;) {
      await take(0).then(() => sleep(250));
      const now = total();
      if (now !== last) quietSince = Date.now();
      last = now;
    }
    const after = readDiskstats();
    const quietSecond = Math.floor(quietSince / 1000);
    while ((seconds[seconds.length - 1] ?? 0) <= quietSecond) await take(1);

    assert.equal(gapOrDuplicate(seconds), undefined, `one frame per second: ${seconds.join(',')}`);
    assert.ok(seconds.length >= 10, `${seconds.length} frames`);
    for (const loop of [loopA, loopB]) {
      const b = before.get(loop.name);
      const a = after.get(loop.name);
      assert.ok(a && b, `${loop.name} in /proc/diskstats`);
      const expected = completedRequests(a) - completedRequests(b);
      assert.ok(expected > 100, `${loop.name} did I/O (${expected})`);
      const delta = {
        reads: a.reads - b.reads,
        writes: a.writes - b.writes,
        discards: a.discards - b.discards,
        flushes: a.flushes - b.flushes,
      };
      // No witness: diskCount is conservedCount, counted + untimed, where untimed is measured from /proc/diskstats.
      assert.equal(
        counted.get(loop.dev),
        expected,
        `${loop.name} (${loop.dev}): frames ${JSON.stringify(Object.fromEntries(byOp.get(loop.dev) ?? []))} vs /proc/diskstats ${JSON.stringify(delta)}`,
      );
    }
    // Disks are announced (with their names) before their first frame.
    assert.deepEqual([...unannounced], [], 'frames only name announced disks');
    for (const loop of [loopA, loopB]) assert.equal(known.get(loop.dev)?.name, loop.name);
  },
);

test('disconnect for 5 s, reconnect with backfill: no second missing, none twice', { timeout: 120_000 }, async (t: TestContextLike) => {
  if (!needsRootAndFio(t)) return;
  const { loop, agent } = await agentOnLoop(t, 64, { rw: 'randrw', runtimeS: 25, rateIops: 300 });
  const first = await subscriber(t, agent);
  const part1 = await readFrames(first.client, 4);
  first.client.destroy();
  await sleep(5000);

  const last = part1.frames[part1.frames.length - 1] as Frame;
  const second = await subscriber(t, agent, { backfillFrom: last.ts + 1 });
  const part2 = await readFrames(second.client, 9);
  const backfills = part2.messages.filter((m): m is Extract<ServerMessage, { t: 'backfill' }> => m.t === 'backfill');
  assert.ok(backfills.length >= 1, 'the missed seconds came as a backfill');
  assert.equal(backfills[0]?.from, last.ts + 1);
  const missed = backfills.reduce((n, b) => n + b.frames.length, 0);
  assert.ok(missed >= 4, `about 5 s were backfilled (${missed})`);
  const seconds = [...part1.frames, ...part2.frames].map((f) => f.ts);
  assert.equal(gapOrDuplicate(seconds), undefined, seconds.join(','));
  // The backfilled seconds are the recorded ones, byte for byte.
  const range = (await (await fetch(`${agent.url}api/v1/range?from=${last.ts + 1}&to=${last.ts + 1 + missed}&step=1`)).json()) as {
    frames: Frame[];
  };
  assert.deepEqual(
    backfills.flatMap((b) => b.frames),
    range.frames,
  );
  assert.ok(
    part2.frames.some((f) => diskCount(f, loop.dev) > 0),
    'the loop device I/O is in the frames',
  );
});

test('a disk that appears or goes away is announced to clients', { timeout: 120_000 }, async (t: TestContextLike) => {
  if (!needsRootAndFio(t)) return;
  const agent = await startRealAgent(t, tempDataDir(t));
  const { client, hello } = await subscriber(t, agent);
  const loop = createLoopDevice({ sizeMiB: 64, t });
  assert.equal(
    hello.disks.find((d) => d.dev === loop.dev && d.present && d.sizeBytes),
    undefined,
    'not attached yet at hello',
  );
  const fio = startFio({ filename: loop.path, rw: 'randrw', runtimeS: 3, rateIops: 200 }, t);
  let announced: DiskInfo | undefined;
  const deadline = Date.now() + 30_000;
  for (;;) {
    assert.ok(Date.now() < deadline, `${loop.name} never showed up`);
    const m = (await client.next(30_000)).json<ServerMessage>();
    if (m.t === 'disks') announced = m.disks.find((d) => d.dev === loop.dev) ?? announced;
    if (m.t === 'frame' && m.frame.disks.some((d) => d.dev === loop.dev)) {
      assert.equal(announced?.name, loop.name, 'announced by name before its first frame');
      break;
    }
  }
  await fio.done;
  const was = JSON.stringify(announced);
  loop.close();
  let gone: DiskInfo | undefined | null = null;
  while (gone === null) {
    assert.ok(Date.now() < deadline + 30_000, `no disks message after ${loop.name} was detached`);
    const m = (await client.next(30_000)).json<ServerMessage>();
    if (m.t !== 'disks') continue;
    const now = m.disks.find((d) => d.dev === loop.dev);
    if (JSON.stringify(now) !== was) gone = now;
  }
  assert.ok(gone === undefined || !gone.present || !gone.sizeBytes, `${loop.name} after detach: ${JSON.stringify(gone)}`);
  t.diagnostic(`${loop.name} announced as ${was}, after detach as ${JSON.stringify(gone)}`);
});

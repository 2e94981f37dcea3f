// History survives kill -9 under load, and a torn history file is recovered up to the tear.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { coarsenFrames, type Frame } from '@blkheat/shared-types';
import { SEGMENT_SPANS } from '../src/history/store.js';
import { agentOnLoop, diskCount, needsRootAndFio, readFrames, startRealAgent, subscriber, type TestContextLike } from './serve-fixtures.js';

async function range(url: string, from: number, to: number, step: number): Promise<{ step: number; frames: Frame[] }> {
  const res = await fetch(`${url}api/v1/range?from=${from}&to=${to}&step=${step}`);
  assert.equal(res.status, 200);
  return (await res.json()) as { step: number; frames: Frame[] };
}

test('kill -9 under load, restart: the history from before the kill is served again', { timeout: 180_000 }, async (t: TestContextLike) => {
  if (!needsRootAndFio(t)) return;
  const { loop, agent: first, dataDir } = await agentOnLoop(t, 256, { runtimeS: 60, rw: 'randread', ioengine: 'libaio', iodepth: 8 });
  const { client } = await subscriber(t, first);
  const { frames: seen } = await readFrames(client, 25);
  assert.ok(
    seen.some((f) => diskCount(f, loop.dev) > 1000),
    'under load',
  );
  const killed = await first.kill9();
  assert.equal(killed.signal, 'SIGKILL');

  const second = await startRealAgent(t, dataDir);
  assert.doesNotMatch(second.stderr(), /another blkheat agent/, 'the stale lock of the killed agent is taken over');
  const from = (seen[0] as Frame).ts;
  const to = (seen[seen.length - 1] as Frame).ts + 1;
  const again = await range(second.url, from, to, 1);
  assert.equal(again.step, 1);
  // Every second a client saw before the kill was recorded first: all of them come back, exactly.
  assert.deepEqual(again.frames, seen);
  // The coarse tiers were rebuilt from the 1 s frames: a 10 s view of the same seconds is their exact sum.
  const tenFrom = Math.ceil(from / 10) * 10;
  const tenTo = Math.floor(to / 10) * 10;
  const tens = await range(second.url, tenFrom, tenTo, 10);
  assert.equal(tens.step, 10);
  assert.deepEqual(
    tens.frames,
    coarsenFrames(
      seen.filter((f) => f.ts >= tenFrom && f.ts < tenTo),
      10,
    ),
  );
  // And the restarted agent keeps recording.
  const fresh = await subscriber(t, second);
  const more = await readFrames(fresh.client, 2);
  assert.ok((more.frames[0] as Frame).ts > to - 1);
});

test('a history file cut mid-record is recovered up to the tear', { timeout: 120_000 }, async (t: TestContextLike) => {
  if (!needsRootAndFio(t)) return;
  const { agent: first, dataDir } = await agentOnLoop(t, 64, { runtimeS: 20, rateIops: 2000, rw: 'randrw' });
  const { client } = await subscriber(t, first);
  const { frames: seen } = await readFrames(client, 8);
  // The newest 1 s segment must hold a few whole records besides the one cut below. A segment
  // begins every SEGMENT_SPANS[0] s of the wall clock, and an agent stopped in the first seconds
  // of one holds only those seconds in it (3 records in a CI run stopped 3 s after one began).
  while ((seen[seen.length - 1] as Frame).ts % SEGMENT_SPANS[0] < 4) seen.push(...(await readFrames(client, 1)).frames);
  const stopped = await first.stop('SIGTERM');
  assert.equal(stopped.code, 0, `clean exit on SIGTERM: ${first.stderr()}`);
  assert.equal((await client.closed).code, 1001, 'clients are closed with "going away"');

  // The newest 1 s segment; cut its last record in half, as a crash in the middle of write() would.
  const dir = join(dataDir, 'history');
  const newest = readdirSync(dir)
    .filter((n) => /^t1-\d+\.seg$/.test(n))
    .sort((a, b) => Number(a.slice(3, -4)) - Number(b.slice(3, -4)))
    .pop();
  assert.ok(newest, 'a 1 s segment exists');
  const path = join(dir, newest);
  const bytes = readFileSync(path);
  const starts: number[] = [];
  const tsOf: number[] = [];
  for (let pos = 8; pos < bytes.length; pos += 12 + bytes.readUInt32LE(pos)) {
    starts.push(pos);
    tsOf.push(bytes.readUInt32LE(pos + 8));
  }
  assert.ok(starts.length >= 4, `records in ${newest}: ${starts.length}`);
  const lastStart = starts[starts.length - 1] as number;
  const cutTs = tsOf[tsOf.length - 1] as number;
  truncateSync(path, lastStart + Math.floor((bytes.length - lastStart) / 2));

  const second = await startRealAgent(t, dataDir);
  assert.match(second.stderr(), /torn tail/, 'the recovery is reported');
  assert.equal(statSync(path).size, lastStart, 'cut back to the last whole record');
  const before = seen.filter((f) => f.ts < cutTs);
  assert.ok(before.length >= 3);
  const from = (before[0] as Frame).ts;
  const got = await range(second.url, from, cutTs + 1, 1);
  // Everything before the torn record is intact; the torn second is gone, nothing else.
  assert.deepEqual(
    got.frames.filter((f) => f.ts < cutTs),
    before,
  );
  assert.equal(
    got.frames.find((f) => f.ts === cutTs),
    undefined,
  );
});

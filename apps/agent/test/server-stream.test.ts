import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WsTestClient } from '@blkheat/testkit';
import {
  BUCKET_SCHEMA,
  type DiskInfo,
  HELLO_INLINE_DISKS,
  MAX_CLIENT_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  coarsenFrames,
  filterFrame,
  frameSchema,
  type BackfillMessage,
  type Frame,
  type FrameMessage,
  type HelloMessage,
  type LaggingMessage,
  type RangeAnswer,
  type SamplesAnswer,
  type ServerMessage,
} from '@blkheat/shared-types';
import { randomFrames, randomSample, rng } from './history-fixtures.js';
import { nowS, startTestAgent, TEST_DISKS } from './server-fixtures.js';

type Msg = ServerMessage;

async function connect(url: string, t: { after(fn: () => void | Promise<void>): void }): Promise<WsTestClient> {
  const c = await WsTestClient.connect(url);
  t.after(() => c.destroy());
  return c;
}

/** Collects frames (live and backfill) until `until` returns true. */
async function collectSeconds(
  c: WsTestClient,
  until: (seconds: number[]) => boolean,
  timeoutMs = 10_000,
): Promise<{ seconds: number[]; msgs: Msg[] }> {
  const seconds: number[] = [];
  const msgs: Msg[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!until(seconds)) {
    const m = (await c.next(Math.max(1, deadline - Date.now()))).json<Msg>();
    msgs.push(m);
    if (m.t === 'frame') seconds.push(m.frame.ts);
    if (m.t === 'backfill') for (const f of m.frames) seconds.push(f.ts);
  }
  return { seconds, msgs };
}

test('hello describes the agent, then a subscriber gets each new second once, in order', async (t) => {
  const a = await startTestAgent(t);
  const c = await connect(a.streamUrl, t);
  const hello = (await c.next()).json<HelloMessage>();
  assert.equal(hello.t, 'hello');
  assert.equal(hello.protocol, PROTOCOL_VERSION);
  assert.deepEqual(hello.schema, BUCKET_SCHEMA);
  assert.deepEqual(hello.tiers, [1, 10, 60]);
  assert.equal(hello.step, 1);
  assert.deepEqual(hello.disks, TEST_DISKS);
  assert.equal(hello.disksFollow, undefined, 'a short list is in the hello');
  assert.ok(Math.abs(hello.now - nowS()) <= 2);
  assert.ok(hello.status && hello.status.startedAt <= hello.now, `status: ${JSON.stringify(hello.status)}`);
  assert.equal(hello.status.historyFault, undefined, 'no history fault');

  c.sendJson({ t: 'subscribe' });
  const frames = randomFrames(31, nowS() - 20, 10);
  await new Promise((r) => setTimeout(r, 50)); // let the subscribe arrive
  for (const f of frames) a.collector.emit(f);
  const got: Frame[] = [];
  while (got.length < frames.length) {
    const m = (await c.next()).json<FrameMessage>();
    assert.equal(m.t, 'frame');
    assert.ok(frameSchema.safeParse(m.frame).success, 'a valid wire frame');
    got.push(m.frame);
  }
  assert.deepEqual(got, frames);
});

test('a disk list over HELLO_INLINE_DISKS follows the hello at once in a disks message; the hello says so', async (t) => {
  // A big fleet lists thousands: a browser reads a long message in pieces between the page's
  // own tasks, so the hello (and what the page asks on it) would wait for the list.
  const many: DiskInfo[] = Array.from({ length: HELLO_INLINE_DISKS + 1 }, (_, i) => ({
    dev: `259:${i}`,
    name: `nvme${i}n1`,
    kind: 'request',
    present: true,
  }));
  const a = await startTestAgent(t, { collectorDisks: many });
  const c = await connect(a.streamUrl, t);
  const hello = (await c.next()).json<HelloMessage>();
  assert.equal(hello.t, 'hello');
  assert.equal(hello.disksFollow, true);
  assert.deepEqual(hello.disks, [], 'the hello lists none itself');
  const list = (await c.next()).json<Msg>();
  assert.equal(list.t, 'disks', 'the very next message is the list');
  assert.deepEqual(list.t === 'disks' ? list.disks : [], many, 'every disk, as the agent lists them');
  // And the connection goes on as any other: a subscribe gets the live seconds.
  c.sendJson({ t: 'subscribe' });
  await new Promise((r) => setTimeout(r, 50));
  const frames = randomFrames(33, nowS() - 5, 3);
  for (const f of frames) a.collector.emit(f);
  const { seconds } = await collectSeconds(c, (s) => s.length >= frames.length);
  assert.deepEqual(
    seconds,
    frames.map((f) => f.ts),
  );
});

test('subscribe with backfillFrom: every second from there to live exactly once, then live', async (t) => {
  const a = await startTestAgent(t);
  const start = nowS() - 3500;
  const history = randomFrames(32, start, 3490, { idle: 0.2, density: 0.2 });
  for (const f of history) a.collector.emit(f);

  const c = await connect(a.streamUrl, t);
  await c.next(); // hello
  const filter = { disks: ['7:0', '8:0'], classes: ['Read', 'Flush', 'Sync-Write'] };
  c.sendJson({ t: 'subscribe', backfillFrom: start + 10, ...filter });
  const { seconds, msgs } = await collectSeconds(c, (s) => s.length >= 3480);
  const backfills = msgs.filter((m): m is BackfillMessage => m.t === 'backfill');
  assert.ok(backfills.length >= 2, `paged by size: ${backfills.length} backfill messages`);
  assert.equal(backfills[0]?.from, start + 10);
  assert.equal(backfills[backfills.length - 1]?.more, false);
  assert.equal(backfills[backfills.length - 1]?.to, start + 3490);
  for (let i = 1; i < backfills.length; i++) assert.equal(backfills[i]?.from, backfills[i - 1]?.to, 'pages are contiguous');
  assert.deepEqual(
    seconds,
    history.slice(10).map((f) => f.ts),
  );
  const got = backfills.flatMap((b) => b.frames);
  assert.deepEqual(
    got,
    history.slice(10).map((f) => filterFrame(f, filter)),
  );

  // Live continues right after the backfill, filtered the same way.
  const next = randomFrames(33, start + 3490, 3);
  for (const f of next) a.collector.emit(f);
  const live = await collectSeconds(c, (s) => s.length >= 3);
  assert.deepEqual(live.seconds, [start + 3490, start + 3491, start + 3492]);
  const m = live.msgs[0] as FrameMessage;
  assert.deepEqual(m.frame, filterFrame(next[0] as Frame, filter));
});

test('a backfill from before the 1 s tier starts at its oldest second', async (t) => {
  const a = await startTestAgent(t);
  const start = nowS() - 30;
  for (const f of randomFrames(38, start, 20)) a.collector.emit(f);
  const c = await connect(a.streamUrl, t);
  await c.next();
  c.sendJson({ t: 'subscribe', backfillFrom: start - 5000 });
  const m = (await c.next()).json<BackfillMessage>();
  assert.equal(m.from, start);
  assert.equal(m.to, start + 20);
  assert.equal(m.frames.length, 20);
});

test('reconnecting with backfillFrom = last second + 1 loses and repeats nothing', async (t) => {
  const a = await startTestAgent(t);
  const start = nowS() - 100;
  const frames = randomFrames(34, start, 60);
  const c1 = await connect(a.streamUrl, t);
  await c1.next();
  c1.sendJson({ t: 'subscribe' });
  await new Promise((r) => setTimeout(r, 50));
  for (const f of frames.slice(0, 20)) a.collector.emit(f);
  const first = await collectSeconds(c1, (s) => s.length >= 20);
  c1.destroy();
  for (const f of frames.slice(20, 45)) a.collector.emit(f); // while disconnected

  const c2 = await connect(a.streamUrl, t);
  await c2.next();
  c2.sendJson({ t: 'subscribe', backfillFrom: (first.seconds[first.seconds.length - 1] as number) + 1 });
  const caughtUp = await collectSeconds(c2, (s) => s.length >= 25);
  for (const f of frames.slice(45)) a.collector.emit(f);
  const rest = await collectSeconds(c2, (s) => s.length >= 15);
  const all = [...first.seconds, ...caughtUp.seconds, ...rest.seconds];
  assert.deepEqual(
    all,
    frames.map((f) => f.ts),
  );
});

test('an empty backfill is still answered, so the client knows it is complete; live follows', async (t) => {
  const a = await startTestAgent(t);
  const c = await connect(a.streamUrl, t);
  await c.next();
  c.sendJson({ t: 'subscribe', backfillFrom: nowS() - 60 });
  const m = (await c.next()).json<BackfillMessage>();
  assert.equal(m.t, 'backfill');
  assert.deepEqual(m.frames, []);
  assert.equal(m.more, false);
  // The first second the agent records comes live, without a `lagging` for the empty past.
  const [f] = randomFrames(39, nowS() - 1, 1);
  a.collector.emit(f as Frame);
  assert.deepEqual((await c.next()).json<Msg>(), { t: 'frame', frame: f });
});

test('range requests are answered at the finest fitting step, exactly and filtered', async (t) => {
  const a = await startTestAgent(t);
  const start = nowS() - 1800 - (nowS() % 60);
  const frames = randomFrames(35, start, 1800);
  for (const f of frames) a.collector.emit(f);
  const c = await connect(a.streamUrl, t);
  await c.next();

  c.sendJson({ t: 'range', id: 1, from: start + 60, to: start + 120 });
  const r1 = (await c.next()).json<RangeAnswer>();
  assert.deepEqual(
    { t: r1.t, id: r1.id, from: r1.from, to: r1.to, step: r1.step },
    { t: 'range', id: 1, from: start + 60, to: start + 120, step: 1 },
  );
  assert.deepEqual(r1.frames, frames.slice(60, 120));

  c.sendJson({ t: 'range', id: 'zoom', from: start, to: start + 1800, step: 60, classes: ['Read'] });
  const r2 = (await c.next()).json<RangeAnswer>();
  assert.equal(r2.id, 'zoom');
  assert.equal(r2.step, 60);
  assert.deepEqual(
    r2.frames,
    coarsenFrames(frames, 60).map((f) => filterFrame(f, { classes: ['Read'] })),
  );
});

test('samples requests return the sampled I/Os of a cell', async (t) => {
  const a = await startTestAgent(t);
  const r = rng(36);
  const now = nowS();
  const samples = Array.from({ length: 300 }, (_, i) => randomSample(r, (now - 30) * 1e6 + i * 10_000));
  a.collector.emitSamples(samples);
  const c = await connect(a.streamUrl, t);
  await c.next();
  c.sendJson({ t: 'samples', id: 7, from: now - 30, to: now, kind: 'device', minNs: 1_000_000, maxNs: 8_000_000, disks: ['7:0'] });
  const ans = (await c.next()).json<SamplesAnswer>();
  assert.equal(ans.t, 'samples');
  assert.equal(ans.id, 7);
  const want = samples.filter((s) => s.dev === '7:0' && s.d_ns >= 1_000_000 && s.d_ns <= 8_000_000);
  assert.ok(want.length > 0);
  assert.deepEqual(ans.samples, want);
  assert.equal(ans.truncated, false);
});

test('disk changes are announced to every client', async (t) => {
  const a = await startTestAgent(t);
  const c = await connect(a.streamUrl, t);
  await c.next();
  const changed = [...TEST_DISKS.slice(1), { dev: '7:5', name: 'loop5', kind: 'request' as const, present: true }];
  a.collector.setDisks(changed);
  const m = await c.nextJson<Msg>((x) => x.t === 'disks');
  assert.deepEqual(m, { t: 'disks', disks: changed });
  const res = await fetch(`${a.base}/api/v1/disks`);
  assert.deepEqual(await res.json(), { disks: changed });
});

test('bad messages are answered with an error naming the field, and the connection keeps working', async (t) => {
  const a = await startTestAgent(t);
  const c = await connect(a.streamUrl, t);
  await c.next();
  const cases: [string | Buffer, RegExp, string | undefined][] = [
    ['not json', /not valid JSON/, undefined],
    ['[1,2]', /JSON object/, undefined],
    ['{"t":"nope"}', /expected "subscribe"/, 't'],
    ['{"t":"range","id":3,"from":"x","to":1}', /from/, 'from'],
    ['{"t":"range","id":4,"from":1700000100,"to":1700000000}', /to/, 'to'],
    ['{"t":"subscribe","disks":["sda"]}', /MAJ:MIN/, 'disks.0'],
    ['{"t":"samples","id":5,"from":1700000000,"to":1700000010,"limit":0}', /limit/, 'limit'],
    ['{"t":"subscribe","extra":1}', /extra|Unrecognized/i, undefined],
  ];
  for (const [payload, re, field] of cases) {
    if (typeof payload === 'string') c.sendText(payload);
    else c.sendFrame(0x1, payload);
    const e = (await c.next()).json<{ t: string; message: string; field?: string; id?: unknown }>();
    assert.equal(e.t, 'error', String(payload));
    assert.match(e.message, re);
    if (field !== undefined) assert.equal(e.field, field, e.message);
  }
  // The id of a rejected request comes back so the client can match the error.
  c.sendJson({ t: 'range', id: 'q1', from: 5, to: 6 });
  const withId = await c.nextJson<{ t: string; id?: string }>();
  assert.equal(withId.id, 'q1');
  c.sendBinary(Buffer.from([1, 2, 3]));
  assert.match((await c.nextJson<{ message: string }>()).message, /binary/);
  // Still served.
  c.sendJson({ t: 'range', id: 9, from: nowS() - 60, to: nowS() });
  assert.equal((await c.nextJson<{ t: string }>()).t, 'range');

  // Over the size limit: closed with 1009 by the WebSocket layer.
  c.sendText(JSON.stringify({ t: 'subscribe', pad: 'x'.repeat(MAX_CLIENT_MESSAGE_BYTES) }));
  const closed = await c.closed;
  assert.equal(closed.code, 1009);
});

test('text that is not UTF-8, in a message or a close reason, fails the connection with 1007 (RFC 6455 8.1)', async (t) => {
  const a = await startTestAgent(t);
  const inMessage = await connect(a.streamUrl, t);
  await inMessage.next();
  inMessage.sendFrame(0x1, Buffer.from([0xc3, 0x28, 0x7b]));
  assert.equal((await inMessage.closed).code, 1007);
  // A close frame: code 1000, then a reason that is not UTF-8; it must not be echoed back.
  const inReason = await connect(a.streamUrl, t);
  await inReason.next();
  inReason.sendFrame(0x8, Buffer.from([0x03, 0xe8, 0xff, 0xfe, 0x41]));
  assert.equal((await inReason.closed).code, 1007);
});

test('a client that stops reading is held back, then told what it missed; agent memory stays bounded', async (t) => {
  const a = await startTestAgent(t);
  const c = await connect(a.streamUrl, t);
  await c.next();
  c.sendJson({ t: 'subscribe' });
  await new Promise((r) => setTimeout(r, 50));
  c.pause();
  // Big frames, fast: far more than kernel socket buffers hold.
  const start = nowS() - 6000;
  const frames = randomFrames(37, start, 5000, { idle: 0, density: 1 });
  const bytes = frames.reduce((n, f) => n + JSON.stringify(f).length, 0);
  const hub = a.agent.hub;
  for (let i = 0; i < frames.length; i++) {
    a.collector.emit(frames[i] as Frame);
    if (i % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  const sentWhilePaused = hub.stats().bytesSent;
  t.diagnostic(`paused client: ${bytes} bytes of frames emitted, ${sentWhilePaused} written to the socket`);
  assert.ok(sentWhilePaused < bytes / 2, `only what fits in socket buffers was written: ${sentWhilePaused} of ${bytes} bytes`);
  assert.ok(hub.stats().framesSkipped === 0, 'nothing is counted as skipped until the client reads again');

  c.resume();
  const seen: number[] = [];
  let lagging: LaggingMessage | undefined;
  while (seen[seen.length - 1] !== start + 4999) {
    const m = (await c.next(20_000)).json<Msg>();
    if (m.t === 'frame') seen.push(m.frame.ts);
    if (m.t === 'lagging') {
      lagging = m;
      assert.equal(m.resumeFrom, (seen[seen.length - 1] as number) + 1, 'resumeFrom is the first second not received');
    }
  }
  assert.ok(lagging, 'the client was told it fell behind');
  assert.ok(lagging.skipped > 0);
  // Everything received is in order without duplicates; the gap is exactly what `lagging` said.
  for (let i = 1; i < seen.length; i++) assert.ok((seen[i] as number) > (seen[i - 1] as number));
  assert.equal(seen.length + lagging.skipped, 5000);
  assert.equal(hub.stats().framesSkipped, lagging.skipped);
});

test('stop closes clients with 1001 after the collector detached', async (t) => {
  const a = await startTestAgent(t);
  const c = await connect(a.streamUrl, t);
  await c.next();
  await a.agent.stop();
  const closed = await c.closed;
  assert.equal(closed.code, 1001);
  assert.equal(a.collector.closed, true);
});

test('backfillFrom in the future: nothing before it is sent, live starts there', async (t) => {
  const a = await startTestAgent(t);
  const start = nowS() - 20;
  const frames = randomFrames(40, start, 10);
  for (const f of frames.slice(0, 5)) a.collector.emit(f);
  const c = await connect(a.streamUrl, t);
  await c.next();
  c.sendJson({ t: 'subscribe', backfillFrom: start + 8 });
  const empty = (await c.next()).json<BackfillMessage>();
  assert.deepEqual(empty, { t: 'backfill', from: start + 8, to: start + 8, frames: [], more: false });
  for (const f of frames.slice(5)) a.collector.emit(f);
  const got = await collectSeconds(c, (s) => s.length >= 2);
  assert.deepEqual(got.seconds, [start + 8, start + 9]);
});

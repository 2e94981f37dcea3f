// Many clients each get every frame; a client that stops reading is told it fell behind; the
// agent's memory stays bounded either way (RSS is reported).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep, WsTestClient } from '@blkheat/testkit';
import type { ErrorMessage, LaggingMessage, ServerMessage } from '@blkheat/shared-types';
import { agentOnLoop, gapOrDuplicate, needsRootAndFio, readFrames, subscriber, type TestContextLike } from './serve-fixtures.js';

/** Generous bounds: an agent holding what its clients did not read would blow far past them. */
const RSS_BOUND = 400 * 1024 * 1024;
const RSS_GROWTH_BOUND = 150 * 1024 * 1024;

test(
  '100 concurrent clients for 30 s: each gets every frame; agent RSS stays bounded',
  { timeout: 180_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    const { agent } = await agentOnLoop(t, 128, { runtimeS: 50, rateIops: 3000, rw: 'randrw', fsync: 32 });
    const rss0 = agent.rssBytes();
    const clients = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const c = await WsTestClient.connect(agent.streamUrl);
        t.after(() => c.destroy());
        await c.next(15_000); // hello
        return c;
      }),
    );
    // Everyone subscribes from the same second on, so everyone must see the same seconds.
    const from = Math.floor(Date.now() / 1000) + 1;
    for (const c of clients) c.sendJson({ t: 'subscribe', backfillFrom: from });
    let maxRss = rss0;
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, agent.rssBytes())), 500);
    t.after(() => clearInterval(sampler));
    await sleep(31_000);
    clearInterval(sampler);

    const results = await Promise.all(clients.map((c) => readFrames(c, 29, 10_000)));
    const reference = results[0]?.frames.map((f) => f.ts) ?? [];
    assert.equal(gapOrDuplicate(reference), undefined, reference.join(','));
    assert.equal(reference[0], from);
    for (const [i, r] of results.entries()) {
      const secs = r.frames.map((f) => f.ts);
      assert.equal(gapOrDuplicate(secs), undefined, `client ${i}: ${secs.join(',')}`);
      assert.deepEqual(secs.slice(0, 29), reference.slice(0, 29), `client ${i} saw the same seconds`);
      assert.ok(!r.messages.some((m) => m.t === 'lagging' || m.t === 'error'), `client ${i} was never lagging`);
      assert.deepEqual(r.frames.slice(0, 29), results[0]?.frames.slice(0, 29), `client ${i} got the same frames`);
    }
    t.diagnostic(
      `agent RSS: ${Math.round(rss0 / 2 ** 20)} MiB before the clients, at most ${Math.round(maxRss / 2 ** 20)} MiB with 100 clients`,
    );
    assert.ok(maxRss < RSS_BOUND && maxRss - rss0 < RSS_GROWTH_BOUND, `RSS ${maxRss} bytes (from ${rss0})`);
  },
);

test(
  'a client that does not read for 60 s: bounded agent memory, then told it fell behind; others unaffected',
  { timeout: 240_000 },
  async (t: TestContextLike) => {
    if (!needsRootAndFio(t)) return;
    // Fast random reads: the sample store fills, so samples answers are large (~1 MB each).
    const { agent } = await agentOnLoop(t, 256, { runtimeS: 120, rw: 'randread', ioengine: 'libaio', iodepth: 8 });
    const bystander = await subscriber(t, agent);
    const slow = await subscriber(t, agent);
    await readFrames(slow.client, 3);
    const rss0 = agent.rssBytes();

    // A frozen dashboard tab: it subscribed, asked for data, and stopped reading its socket.
    slow.client.pause();
    let maxRss = rss0;
    const started = Date.now();
    let asked = 0;
    while (Date.now() - started < 60_000) {
      const now = Math.floor(Date.now() / 1000);
      slow.client.sendJson({ t: 'samples', id: asked++, from: now - 30, to: now, limit: 5000 });
      maxRss = Math.max(maxRss, agent.rssBytes());
      await sleep(500);
    }
    // The bystander got every second meanwhile.
    const seen = (await readFrames(bystander.client, bystander.client.pending)).frames.map((f) => f.ts);
    assert.ok(seen.length >= 58, `bystander frames: ${seen.length}`);
    assert.equal(gapOrDuplicate(seen), undefined);

    slow.client.resume();
    let lagging: LaggingMessage | undefined;
    let refused = 0;
    let answered = 0;
    let lastFrameTs = 0;
    const deadline = Date.now() + 60_000;
    while (!lagging || lastFrameTs === 0 || lastFrameTs <= lagging.resumeFrom + lagging.skipped) {
      assert.ok(Date.now() < deadline, 'read the backlog and a live frame after the lagging notice');
      const m = (await slow.client.next(20_000)).json<ServerMessage>();
      if (m.t === 'lagging') lagging = m;
      else if (m.t === 'error' && /still unread/.test((m as ErrorMessage).message)) refused++;
      else if (m.t === 'samples') answered++;
      else if (m.t === 'frame' && lagging) lastFrameTs = m.frame.ts;
    }
    t.diagnostic(
      `slow client: ${asked} requests, ${answered} answered, ${refused} refused while behind; lagging ${JSON.stringify(lagging)}; ` +
        `agent RSS ${Math.round(rss0 / 2 ** 20)} -> at most ${Math.round(maxRss / 2 ** 20)} MiB`,
    );
    assert.ok(lagging.skipped > 0, 'it was told how many seconds it missed');
    assert.ok(refused > 0, 'large answers were refused while it was not reading');
    assert.equal(answered + refused, asked, 'every request was answered one way or the other');
    assert.ok(maxRss < RSS_BOUND && maxRss - rss0 < RSS_GROWTH_BOUND, `RSS ${maxRss} bytes (from ${rss0})`);
    // It can catch up with a backfill from where it was told to resume.
    slow.client.sendJson({ t: 'subscribe', backfillFrom: lagging.resumeFrom });
    const caught = await readFrames(slow.client, lagging.skipped);
    assert.equal(caught.frames[0]?.ts, lagging.resumeFrom);
  },
);

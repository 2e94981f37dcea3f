// A fleet's live step changes on its own (issue 30): two simulated hosts (fleet/simulated-hosts.ts)
// scraped every 2 s by a real Prometheus (Debian's), the fleet server in this process, its page in
// headless chromium, no kernel. Prometheus is then told to scrape them every 5 s (its config
// rewritten and reloaded): the fleet server, once its targets say so (it reads them once a
// minute), closes its streams with 1012; a new connection's hello names the 5 s step and where the
// fleet's data ends at that step; and the page, reconnected, draws 5 s live columns following live
// with its view's end within a step plus the scrape lag of now. Needs apps/web/dist, chromium
// and prometheus.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CLOSE_CODES, type HelloMessage } from '@blkheat/shared-types';
import { hook, launchFor, prometheusUnavailable, skipWithoutBrowser, WsTestClient } from '@blkheat/testkit';
import { eventually, WEB_ROOT } from './lib/fleet-rig.js';
import { startSimulatedFleetRig } from './lib/simulated-fleet-rig.js';

const missing = prometheusUnavailable();
const BEFORE_S = 2;
const AFTER_S = 5;
/** A round of the fleet server (1 s), Prometheus' answer and the page's own work. */
const SLACK_S = 3;

interface Shown {
  connection: string;
  step?: number;
  lastFrameTs?: number;
  following: boolean;
  view: { from: number; to: number };
}

test(
  'a host’s scrape interval changes: the fleet server closes with 1012, the new hello names the new step, the page follows at it',
  { timeout: 300_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t: TestContext) => {
    if (skipWithoutBrowser(t, join(WEB_ROOT, 'index.html'))) return;
    const { prom, fleet } = await startSimulatedFleetRig(t, 2, BEFORE_S);
    const streamUrl = `${fleet.url.replace('http', 'ws')}api/v1/stream`;
    const ws = await eventually(
      `a hello naming the ${BEFORE_S} s live step`,
      async () => {
        const c = await WsTestClient.connect(streamUrl);
        const hello = await c.nextJson<HelloMessage>((m) => m.t === 'hello');
        if (hello.step === BEFORE_S && hello.fleet?.liveTo !== undefined) return c;
        c.destroy();
        await new Promise((r) => setTimeout(r, 1000));
        return undefined;
      },
      90_000,
    );
    t.after(() => ws.destroy());

    const { page } = await launchFor(t, { width: 1400, height: 900, colorScheme: 'light' });
    await page.goto(fleet.url);
    const h = hook(page);
    const shown = async (): Promise<Shown> => (await h.state()) as Shown;
    await eventually(`the page live at ${BEFORE_S} s columns`, async () => {
      const st = await shown();
      return st.connection === 'live' && st.step === BEFORE_S && st.lastFrameTs !== undefined ? st : undefined;
    });

    const changedAt = Date.now();
    await prom.setScrapeInterval(AFTER_S);
    const closed = await Promise.race([ws.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 120_000).unref())]);
    const closedAfterS = (Date.now() - changedAt) / 1000;
    t.diagnostic(`stream closed ${closedAfterS.toFixed(1)} s after Prometheus took the ${AFTER_S} s interval: ${JSON.stringify(closed)}`);
    assert.ok(closed, 'the stream closed within 120 s (the fleet server reads the targets once a minute)');
    assert.equal(closed.code, CLOSE_CODES.restart, 'with 1012: reconnect for the new step');

    const again = await WsTestClient.connect(streamUrl);
    t.after(() => again.destroy());
    const hello = await again.nextJson<HelloMessage>((m) => m.t === 'hello');
    const nowS = Date.now() / 1000;
    t.diagnostic(
      `new hello: step ${hello.step}, liveTo ${hello.fleet?.liveTo} (${(nowS - (hello.fleet?.liveTo ?? 0)).toFixed(1)} s before now), liveLag ${hello.fleet?.liveLag}`,
    );
    assert.equal(hello.step, AFTER_S, 'the new hello names the new step');
    const liveTo = hello.fleet?.liveTo;
    assert.ok(liveTo !== undefined && liveTo % AFTER_S === 0, 'and where the data ends, at that step');
    assert.ok(nowS - liveTo <= 2 * AFTER_S + SLACK_S + BEFORE_S, `within a step and the scrape lag of now (${nowS - liveTo} s)`);

    // The page reconnected by itself, and follows live in 5 s columns, at now.
    const after = await eventually(
      `the page live at ${AFTER_S} s columns`,
      async () => {
        const st = await shown();
        return st.connection === 'live' && st.step === AFTER_S && st.lastFrameTs !== undefined && st.lastFrameTs % AFTER_S === 0
          ? st
          : undefined;
      },
      60_000,
    );
    const behind = Date.now() / 1000 - after.view.to;
    t.diagnostic(
      `page: step ${after.step}, newest live column ${after.lastFrameTs}, view ${after.view.from}..${after.view.to} (${behind.toFixed(1)} s before now)`,
    );
    assert.ok(after.following, 'following live');
    assert.ok(behind <= 2 * AFTER_S + SLACK_S, `the view's end ${behind.toFixed(1)} s before now`);
  },
);

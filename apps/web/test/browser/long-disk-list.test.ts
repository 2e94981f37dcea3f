// A long disk list (a big fleet's thousands; here the fake agent's 3 busy disks and 300 quiet
// ones) follows the hello in a `disks` message (protocol 6, `hello.disksFollow`): a browser reads
// a long message in pieces between the page's own tasks, so the hello, and what the page asks on
// it, waited for the list. In chromium: the hello comes without the list and says it follows;
// the page subscribes before the list is read; every disk is then known to the page (found by
// name in the picker); and the list is not taken for 300 disks appearing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HELLO_INLINE_DISKS } from '@blkheat/shared-types';
import { hook, idle, waitLive } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';
import { defaultDisks, type SynthDisk, syntheticSource } from '../fixtures/synthetic.ts';

const QUIET = 300;

function quietDisks(): SynthDisk[] {
  return Array.from({ length: QUIET }, (_, i) => ({
    info: { dev: `259:${i}`, name: `nvme${i}n1`, kind: 'request', present: true },
    iops: 0,
    median: 1e-4,
    sigma: 0.5,
    classes: [{ c: 'Read', weight: 1, latencyMul: 1 }],
  }));
}

test(
  'a disk list over HELLO_INLINE_DISKS follows the hello: the page asks on the hello, knows every disk, and no disk "appeared"',
  { timeout: 120_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    assert.ok(QUIET + 3 > HELLO_INLINE_DISKS, 'the list is long enough to follow the hello');
    const source = syntheticSource({ disks: [...defaultDisks(Math.floor(Date.now() / 1000) - 600), ...quietDisks()] });
    const { agent, page } = await openFakeAgent(t, { source, history: 600 });
    const got: string[] = [];
    page.on('websocket', (ws) => {
      ws.on('framereceived', (f) => got.push(`got ${typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8')}`));
      ws.on('framesent', (f) => got.push(`sent ${typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8')}`));
    });
    await page.goto(`${agent.url}?live=60`);
    await waitLive(page, 20_000);
    await idle(page);

    const received = got.filter((m) => m.startsWith('got ')).map((m) => m.slice(4));
    const hello = JSON.parse(received[0] ?? '{}') as { t?: string; disks?: unknown[]; disksFollow?: boolean };
    assert.equal(hello.t, 'hello');
    assert.equal(hello.disksFollow, true, 'the hello says its list follows');
    assert.deepEqual(hello.disks, [], 'and lists none itself');
    const list = JSON.parse(received[1] ?? '{}') as { t?: string; disks?: unknown[] };
    assert.equal(list.t, 'disks', 'the next message is the list');
    assert.equal(list.disks?.length, QUIET + 3);
    // The page acted on the hello (subscribed, and asked for its window) without waiting for the list.
    const subscribed = got.findIndex((m) => m.startsWith('sent {"t":"subscribe"'));
    const listAt = got.findIndex((m) => m.startsWith('got {"t":"disks"'));
    assert.ok(subscribed > 0 && listAt > 0, 'the page subscribed, and the list came');
    assert.ok(
      subscribed < listAt,
      `it subscribed on the hello, before the list was read (${got
        .slice(0, 4)
        .map((m) => m.slice(0, 24))
        .join(' | ')})`,
    );

    // Every disk is known: the quietest, far past the chips drawn, is found by name.
    await page.fill('[data-testid=disk-find]', `nvme${QUIET - 1}n1`);
    await page.locator(`[data-testid="disk-chip-nvme${QUIET - 1}n1"]`).waitFor({ timeout: 10_000 });
    assert.deepEqual(
      (await hook(page).state()).shownDisks,
      ['7:0', '252:0', '253:0'],
      'the disks with I/O are shown, as with a short list',
    );
    const notices = await hook(page).notices();
    assert.deepEqual(
      notices.filter((n) => /appeared|went away/.test(n.text)),
      [],
      'the hello’s list is not 303 disks appearing',
    );
  },
);

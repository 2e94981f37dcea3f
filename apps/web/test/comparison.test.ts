// The compare part of the data layer (pipeline/comparison.ts): a baseline older than the live log
// is fetched from the agent, which answers from a coarser tier (10 s, merged exactly); it is
// summed over the whole steps holding it and says so, while the comparison follows the live
// view from the live log. A failed fetch says why; clearing the choice clears the state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coarsenFrames, type Frame, type RangeAnswer, type RangeRequest } from '@blkheat/shared-types';
import { ALL_CLASSES } from '../src/model/compare.ts';
import { liveView } from '../src/model/view.ts';
import type { DataLayer } from '../src/pipeline/dataLayer.ts';
import type { AgentSource } from '../src/pipeline/source.ts';
import { dataHarness, LOOP0 } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_000;

/** One second of loop0: `n` Reads in `bucket` and one Write in bucket 30. */
function io(ts: number, bucket: number, n: number): Frame {
  return {
    ts,
    step: 1,
    disks: [
      {
        dev: '7:0',
        cls: [
          { c: 'Read', n, d: [bucket, n], q: [] },
          { c: 'Write', n: 1, d: [30, 1], q: [] },
        ],
      },
    ],
  };
}

/** The agent's history: bucket 40 (2 h ago it answers from its 10 s tier). */
const history = (ts: number): Frame => io(ts, 40, 1 + (ts % 5));

async function settled(dm: DataLayer): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 10));
    if (dm.pending === 0) return;
  }
  throw new Error('the data layer did not settle');
}

function agent(fail: boolean): { client: AgentSource; asked: Omit<RangeRequest, 'id'>[] } {
  const asked: Omit<RangeRequest, 'id'>[] = [];
  const request = (msg: Omit<RangeRequest, 'id'>): Promise<RangeAnswer> => {
    asked.push(msg);
    if (fail) return Promise.reject(new Error('history file unreadable'));
    // The last hour from the 1 s tier, older seconds from the 10 s one.
    const step = msg.from >= T0 - 3600 ? 1 : 10;
    const from = Math.floor(msg.from / step) * step;
    const to = Math.ceil(msg.to / step) * step;
    const frames: Frame[] = [];
    for (let t = from; t < to; t++) frames.push(history(t));
    return Promise.resolve({ t: 'range', id: asked.length, from, to, step, frames: coarsenFrames(frames, step) });
  };
  return { client: { connected: true, hello: undefined, request: request as AgentSource['request'] }, asked };
}

function live(dm: DataLayer): void {
  const frames: Frame[] = [];
  for (let s = 0; s < 60; s++) frames.push(io(T0 + s, 50, 3));
  dm.onFrames(frames);
  dm.onCovered(T0, T0 + 60);
}

/** Live, with the last minute in the page, a baseline of ten minutes two hours back (not in the page): the compare state once settled. */
async function compareTwoHoursBack(client: AgentSource) {
  const h = dataHarness({ disks: [LOOP0], client });
  h.ui.setState({ view: liveView(T0 + 60, 60) });
  live(h.dm);
  h.ui.setState({ compare: { baseline: { from: T0 - 7200, to: T0 - 6600 } } });
  h.dm.refresh();
  await settled(h.dm);
  return h.store.getState().compare;
}

test('compare: a baseline older than the live log is fetched, summed over whole 10 s steps; the comparison follows the live view', async () => {
  const { client, asked } = agent(false);
  const h = dataHarness({ disks: [LOOP0], client });
  h.ui.setState({
    agent: { version: 'test', protocol: 3, host: { hostname: 'h', kernel: 'k' }, tiers: [1, 10, 60], historyFrom: T0 - 86400 },
    view: liveView(T0 + 60, 60),
  });
  live(h.dm);
  const baseline = { from: T0 - 7203, to: T0 - 6597 };
  h.ui.setState({ compare: { baseline } });
  h.dm.refresh();
  await settled(h.dm);
  const st = h.store.getState().compare;
  assert.ok(st, 'a compare state');
  assert.equal(st.status, 'ready', st.error);
  assert.ok(
    asked.some((m) => m.from === baseline.from && m.to === baseline.to),
    `the baseline was asked of the agent: ${JSON.stringify(asked)}`,
  );
  assert.deepEqual(st.baseline, { from: T0 - 7210, to: T0 - 6590, step: 10 }, 'the whole 10 s steps holding it');
  assert.deepEqual(st.comparison, { from: T0, to: T0 + 60, step: 1 }, 'the live view, from the live log');
  const row = st.disks[0]?.rows.find((r) => r.c === 'Read');
  let reads = 0;
  for (let t = T0 - 7210; t < T0 - 6590; t++) reads += 1 + (t % 5);
  assert.equal(row?.baseline.total, reads);
  assert.equal(row?.baseline.hist[40], reads);
  assert.equal(row?.comparison.total, 180);
  assert.equal(row?.comparison.hist[50], 180);
  assert.equal(st.disks[0]?.rows[0]?.c, ALL_CLASSES);
  assert.equal(st.disks[0]?.rows[0]?.baseline.total, reads + 620);

  // A new live second moves the comparison (the live view's edge) on.
  h.dm.onFrames([io(T0 + 60, 50, 3)]);
  h.dm.onCovered(T0 + 60, T0 + 61);
  await settled(h.dm);
  assert.deepEqual(h.store.getState().compare?.comparison, { from: T0 + 1, to: T0 + 61, step: 1 });

  h.ui.setState({ compare: undefined });
  h.dm.refresh();
  await settled(h.dm);
  assert.equal(h.store.getState().compare, undefined);
});

test('compare: history the agent cannot read is an error that names the range', async () => {
  const { client } = agent(true);
  const st = await compareTwoHoursBack(client);
  assert.equal(st?.status, 'error');
  assert.equal(st?.error, 'the baseline could not be read (history file unreadable)');
});

test('compare: a range the page does not hold waits for the agent, and says so', async () => {
  const st = await compareTwoHoursBack({ connected: false, hello: undefined, request: agent(false).client.request });
  assert.equal(st?.status, 'loading');
  assert.match(st?.waitingFor ?? '', /the agent/);
});

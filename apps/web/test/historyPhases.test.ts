// The phases and disks a source shows are learnt from its history too (DataSource.noteHistory): a
// page opened on a past range learns from the agent's answer that the total and submit phases
// exist, before any live frame comes, so a link with `lat=total` sums its range as total once, not
// as device latency first (phase-split.test.ts saw a page idle at device latency under load); and
// the disks busy in the range have rows before any live frame names them (cgroups.test.ts once
// read the table of the only disk left, zram0, before loop0's first live frame came).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type Frame } from '@blkheat/shared-types';
import { fixedView } from '../src/model/view.ts';
import { withTwoHours } from './fixtures/dataLayer.ts';

const T0 = 1_700_003_600;

function withTotals(ts: number): Frame {
  return {
    ts,
    step: 1,
    disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 4, d: [40, 4], q: [0, 4], w: [30, 4], t: [44, 4], wu: 0 }] }],
  };
}

/** A data layer on a past range, once it has asked the agent for it (no live frame yet). */
async function pastRangeAsked(): Promise<ReturnType<typeof withTwoHours>> {
  const opened = withTwoHours(fixedView(T0 - 600, T0 - 300), T0);
  opened.dm.setLiveSchema(BUCKET_SCHEMA);
  opened.dm.refresh();
  for (let i = 0; i < 100 && opened.asked.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(opened.asked.length, 1, 'the past range is asked');
  return opened;
}

/** Answers the first range asked with `frame(ts, step)` at each of its steps, and lets the answer land. */
async function answer(asked: ReturnType<typeof withTwoHours>['asked'], frame: (ts: number, step: number) => Frame): Promise<void> {
  const r = asked[0] as (typeof asked)[0];
  const step = r.msg.step ?? 1;
  const frames: Frame[] = [];
  for (let ts = r.msg.from; ts < r.msg.to; ts += step) frames.push(frame(ts, step));
  r.answer(frames);
  for (let i = 0; i < 5; i++) await new Promise((r2) => setTimeout(r2, 0));
}

test('data layer: a range the agent answers with submit-wait timing makes the total phase the source’s, with no live frame yet', async () => {
  const { h, dm, asked } = await pastRangeAsked();
  assert.equal(h.store.getState().submitTiming, false, 'nothing known of the phases before the answer');
  await answer(asked, (ts, step) => ({ ...withTotals(ts), step }));
  assert.equal(dm.live.size, 0, 'no live frame came');
  assert.equal(h.store.getState().submitTiming, true, 'the answer’s timing is the source’s');
});

test('data layer: the disks busy in a range the agent answers have rows, with no live frame yet', async () => {
  const { h, dm, asked } = await pastRangeAsked();
  assert.deepEqual(h.store.getState().shownDevs, [], 'no disk known before the answer');
  // 7:0 busy, 8:0 named with nothing done (not a row), 7:1 only with a bio waiting (a row: a frozen queue).
  await answer(asked, (ts, step) => ({
    ...withTotals(ts),
    step,
    disks: [
      ...withTotals(ts).disks,
      { dev: '8:0', cls: [] },
      { dev: '7:1', cls: [], inflight: { n: 0, oldest_ns: 0, ios: [], waiting: 3, oldest_wait_ns: 2e9 } },
    ],
  }));
  assert.equal(dm.live.size, 0, 'no live frame came');
  assert.deepEqual(h.store.getState().shownDevs, ['7:0', '7:1'], 'the range’s busy disks are the rows');
});

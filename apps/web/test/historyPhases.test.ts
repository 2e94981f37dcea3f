// The phases a source shows are learnt from its history too (DataSource.noteHistory): a page
// opened on a past range learns from the agent's answer that the total and submit phases exist,
// before any live frame comes, so a link with `lat=total` sums its range as total once, not as
// device latency first (phase-split.test.ts saw a page idle at device latency under load).
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

test('data layer: a range the agent answers with submit-wait timing makes the total phase the source’s, with no live frame yet', async () => {
  const { h, dm, asked } = withTwoHours(fixedView(T0 - 600, T0 - 300), T0);
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.refresh();
  for (let i = 0; i < 100 && asked.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(asked.length, 1, 'the past range is asked');
  assert.equal(h.store.getState().submitTiming, false, 'nothing known of the phases before the answer');
  const r = asked[0] as (typeof asked)[0];
  const step = r.msg.step ?? 1;
  const frames: Frame[] = [];
  for (let ts = r.msg.from; ts < r.msg.to; ts += step) frames.push({ ...withTotals(ts), step });
  r.answer(frames);
  for (let i = 0; i < 5; i++) await new Promise((r2) => setTimeout(r2, 0));
  assert.equal(dm.live.size, 0, 'no live frame came');
  assert.equal(h.store.getState().submitTiming, true, 'the answer’s timing is the source’s');
});

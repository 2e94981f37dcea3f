// Live frames coarser than 1 s (protocol 6: a fleet server whose hosts are scraped at over 1 s
// streams columns of the coarsest scrape interval, and its hello's `step` says it): the page's
// columns are never finer than that step, even off the 1-2-5 ladder; each live column moves the
// edge by one column; and a hello with another step drops the live columns held.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type Frame } from '@blkheat/shared-types';
import { chooseStep } from '../src/model/resolution.ts';
import { liveView } from '../src/model/view.ts';
import { dataHarness, LOOP0 } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_100;

function column(ts: number, step: number, n: number): Frame {
  return { ts, step, disks: [{ dev: '7:0', cls: [{ c: 'Read', n, d: [40, n], q: [0, n] }] }] };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

test('resolution: the source’s own step when it is finer than the pixels need, on the ladder or not', () => {
  assert.equal(chooseStep(300, 1200, 15), 15);
  assert.equal(chooseStep(300, 1200, 3), 3, 'not 15, the first ladder step 3 divides');
  assert.equal(chooseStep(300, 1200, 4), 4, 'not 60, the first ladder step 4 divides');
  assert.equal(chooseStep(300, 1200, 1), 1);
  assert.equal(chooseStep(36000, 1200, 4), 60, 'coarser than the pixels allow: a ladder step it divides');
  assert.equal(chooseStep(3600, 1200, 1), 5);
});

test('data layer: live columns of 15 s draw at 15 s, each moves the live edge a column, and another step drops them', async () => {
  const h = dataHarness({ disks: [LOOP0] });
  const dm = h.dm;
  h.ui.setState({ view: liveView(T0 + 45, 300) });
  dm.setLiveSchema(BUCKET_SCHEMA, 15);
  dm.onFrames([column(T0, 15, 30), column(T0 + 15, 15, 20)]);
  dm.onCovered(T0, T0 + 30);
  dm.refresh();
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(h.window()?.step, 15, 'the window’s columns are the live step');
  assert.equal(dm.edge(), T0 + 30);
  const m = h.window()?.matrices.get('7:0');
  assert.equal(m?.count(m.columnOf(T0), 40), 30);
  assert.equal(m?.count(m.columnOf(T0 + 15), 40), 20);

  dm.onFrames([column(T0 + 30, 15, 7)]);
  dm.onCovered(T0 + 30, T0 + 45);
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(dm.edge(), T0 + 45, 'one column later, the edge moved one column');
  assert.equal(h.store.getState().visible.to, T0 + 45, 'and the view with it');
  assert.equal(
    h
      .window()
      ?.matrices.get('7:0')
      ?.count(T0 / 15 + 2, 40),
    7,
  );

  // The fleet's hosts are now scraped every 5 s: a hello says so, and 15 s columns are dropped.
  dm.setLiveSchema(BUCKET_SCHEMA, 5);
  assert.equal(dm.live.size, 0, 'the 15 s columns held are dropped');
  dm.onFrames([column(T0 + 45, 5, 3)]);
  dm.onCovered(T0 + 45, T0 + 50);
  dm.refresh();
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(h.window()?.step, 5);
  assert.equal(dm.edge(), T0 + 50);
});

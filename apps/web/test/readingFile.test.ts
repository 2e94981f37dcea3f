// While a snapshot file is read (DataLayer.whileReadingFile), live frames are kept but not drawn;
// when the read ends they are drawn in the order they came, so a file that fails to import
// leaves the live view as if nothing had been held; one that imports shows its own data, and
// the seconds that came meanwhile are there when the snapshot is closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type Frame } from '@blkheat/shared-types';
import { liveView } from '../src/model/view.ts';
import { dataHarness, LOOP0, snapshotOf } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_100;
const BUCKET = 40;

function second(ts: number, n: number): Frame {
  return { ts, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n, d: [BUCKET, n], q: [0, n] }] }] };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

/** A live page on loop0 with T0..T0+10 drawn, and a read that ends when `finish` is called. */
async function liveWithRead() {
  const h = dataHarness({ disks: [LOOP0] });
  h.dm.setLiveSchema(BUCKET_SCHEMA, 1);
  h.ui.setState({ view: liveView(T0 + 10, 60) });
  h.dm.onFrames(Array.from({ length: 10 }, (_, i) => second(T0 + i, 5)));
  h.dm.onCovered(T0, T0 + 10);
  h.dm.refresh();
  await settle();
  let finish: (imported: boolean) => void = () => {};
  const read = h.dm.whileReadingFile(
    () =>
      new Promise<boolean>((resolve) => {
        finish = resolve;
      }),
  );
  // Three seconds arrive while the file is read.
  h.dm.onFrames([second(T0 + 10, 7), second(T0 + 11, 8)]);
  h.dm.onCovered(T0 + 10, T0 + 12);
  h.dm.onFrames([second(T0 + 12, 9)]);
  h.dm.onCovered(T0 + 12, T0 + 13);
  await settle();
  const countAt = (ts: number): number | undefined => {
    const m = h.window()?.matrices.get('7:0');
    return m?.count(m.columnOf(ts), BUCKET);
  };
  return { h, read, finish: (imported: boolean) => finish(imported), countAt };
}

test('a file read that fails: the live seconds held meanwhile are drawn when it ends, in order', async () => {
  const { h, read, finish, countAt } = await liveWithRead();
  assert.equal(countAt(T0 + 9), 5, 'the seconds before the read are drawn');
  assert.equal(h.window()?.coveredTo, T0 + 10, 'held: the window has not moved on');
  assert.equal(h.dm.live.size, 13, 'but every second is kept');
  assert.ok(h.dm.pending > 0, 'the read counts as work under way');
  finish(false);
  assert.equal(await read, false);
  await settle();
  assert.equal(h.window()?.coveredTo, T0 + 13, 'then the window moves on to the newest second');
  assert.deepEqual([countAt(T0 + 10), countAt(T0 + 11), countAt(T0 + 12)], [7, 8, 9]);
  assert.equal(h.dm.edge(), T0 + 13);
});

test('a file read that imports: its snapshot is shown, and the live seconds of the read are there when it is closed', async () => {
  const { h, read, finish, countAt } = await liveWithRead();
  const snap = snapshotOf([second(T0 - 500, 3)], { from: T0 - 500, to: T0 - 499 });
  h.openSnapshot(snap, 'file.json');
  finish(true);
  assert.equal(await read, true);
  await settle();
  assert.equal(h.dm.snapshot, snap, 'the snapshot is the source');
  assert.equal(countAt(T0 - 500), 3, 'and on screen');
  assert.equal(h.dm.closeSnapshot(), true);
  h.ui.setState({ view: liveView(h.dm.edge(), 60) });
  h.dm.refresh();
  await settle();
  assert.deepEqual([countAt(T0 + 9), countAt(T0 + 10), countAt(T0 + 12)], [5, 7, 9], 'live again, with the seconds of the read');
});

// The data layer's direction is one way: it reads the UI store (what the user chose) and
// publishes into its own store, never writing the UI store, whatever the source does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, FINE_BUCKET_SCHEMA, type Frame } from '@blkheat/shared-types';
import { liveView } from '../src/model/view.ts';
import { dataHarness, LOOP0, SDA, snapshotOf } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_000;

function io(ts: number, n = 5): Frame {
  return { ts, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n, d: [40, n], q: [0, n] }] }] };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

test('data layer: live frames, a schema change, a snapshot and samples never write the UI store', async () => {
  const h = dataHarness({ disks: [LOOP0] });
  h.ui.setState({ view: liveView(T0 + 10, 60) });
  let uiWrites = 0;
  const stop = h.ui.subscribe(() => uiWrites++);
  try {
    const dm = h.dm;
    dm.setLiveSchema(BUCKET_SCHEMA);
    dm.onFrames([0, 1, 2, 3, 4].map((s) => io(T0 + s)));
    dm.onCovered(T0, T0 + 5);
    dm.refresh();
    for (let i = 0; i < 5; i++) await tick();
    const live = h.store.getState();
    assert.ok(live.window, 'a window was published');
    assert.deepEqual(live.shownDevs, ['7:0']);
    assert.equal(live.lastFrameTs, T0 + 4);
    assert.ok(live.visible.following && live.visible.to === dm.edge(), 'the visible window follows the edge');
    assert.equal(live.summary?.disks.get('7:0')?.n, 25, 'the summary of the visible range is published');

    await dm.selectCells({
      dev: '7:0',
      from: T0,
      to: T0 + 1,
      bucketLo: 40,
      bucketHi: 40,
      schema: BUCKET_SCHEMA,
      kind: 'device',
      classes: [],
    });
    assert.equal(h.store.getState().samples.status, 'error', 'no agent to ask');

    const snapshot = snapshotOf(
      [0, 1, 2].map((s) => io(T0 + s)),
      { from: T0, to: T0 + 5 },
    );
    dm.loadSnapshot(snapshot, 's.json');
    assert.equal(h.store.getState().selection, undefined, 'a new source drops the selection');
    assert.equal(h.store.getState().mode, 'snapshot');
    for (let i = 0; i < 5; i++) await tick();
    assert.ok(dm.closeSnapshot());
    dm.setLiveSchema(FINE_BUCKET_SCHEMA);
    assert.deepEqual(h.store.getState().schema, FINE_BUCKET_SCHEMA);
    for (let i = 0; i < 5; i++) await tick();
    assert.equal(uiWrites, 0, 'the UI store was written');
  } finally {
    stop();
  }
});

test('data layer: a disk whose only I/O is in flight (a hang completes nothing) is shown; the newest live frame is published', async () => {
  const h = dataHarness({ disks: [LOOP0, SDA] });
  h.ui.setState({ view: liveView(T0 + 10, 60) });
  const dm = h.dm;
  dm.setLiveSchema(BUCKET_SCHEMA);
  const hung = (ts: number): Frame => ({
    ts,
    step: 1,
    disks: [
      ...io(ts).disks,
      {
        dev: SDA.dev,
        cls: [],
        inflight: {
          n: 1,
          oldest_ns: (ts - T0 + 1) * 1e9,
          ios: [{ c: 'Write', pid: 9, comm: 'dd', sector: 0, bytes: 4096, age_ns: (ts - T0 + 1) * 1e9, dev_age_ns: null }],
        },
      },
    ],
  });
  dm.onFrames([0, 1, 2].map((s) => hung(T0 + s)));
  dm.onCovered(T0, T0 + 3);
  dm.refresh();
  for (let i = 0; i < 5; i++) await tick();
  const st = h.store.getState();
  assert.deepEqual(st.shownDevs, [LOOP0.dev, SDA.dev]);
  assert.equal(st.lastFrame?.ts, T0 + 2);
  assert.equal(st.lastFrame?.disks.find((d) => d.dev === SDA.dev)?.inflight?.oldest_ns, 3e9);
  // Idle with nothing in flight is still no I/O.
  const idle = dataHarness({ disks: [LOOP0, SDA] });
  idle.ui.setState({ view: liveView(T0 + 10, 60) });
  idle.dm.setLiveSchema(BUCKET_SCHEMA);
  idle.dm.onFrames([{ ts: T0, step: 1, disks: [...io(T0).disks, { dev: SDA.dev, cls: [], inflight: { n: 0, oldest_ns: 0, ios: [] } }] }]);
  idle.dm.onCovered(T0, T0 + 1);
  idle.dm.refresh();
  for (let i = 0; i < 5; i++) await tick();
  assert.deepEqual(idle.store.getState().shownDevs, [LOOP0.dev]);
});

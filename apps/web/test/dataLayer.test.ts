// The data layer's direction is one way: it reads the UI store (what the user chose) and
// publishes into its own store, never writing the UI store, whatever the source does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, FINE_BUCKET_SCHEMA, type Frame, type RangeAnswer, type RangeRequest } from '@blkheat/shared-types';
import { type AgentSource, helloClock } from '../src/pipeline/source.ts';
import { liveView } from '../src/model/view.ts';
import { answeringAgent, dataHarness, LOOP0, SDA, snapshotOf, withTwoHours } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_000;

function io(ts: number, n = 5): Frame {
  return { ts, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n, d: [40, n], q: [0, n] }] }] };
}

type RangeRequestBody = Omit<RangeRequest, 'id'>;

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

test('data layer: following, a live second that comes while a new window waits to load is in that window', async () => {
  // Zooming the live view waits out the gesture (a debounce) before loading from the live
  // buffer; a live second arriving meanwhile must land in the new window, not be left out.
  const h = dataHarness({ disks: [LOOP0] });
  const dm = h.dm;
  h.ui.setState({ view: liveView(T0 + 60, 20) });
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.onFrames(Array.from({ length: 60 }, (_, s) => io(T0 + s)));
  dm.onCovered(T0, T0 + 60);
  dm.refresh();
  await tick();
  const first = h.window();
  assert.ok(first && first.from > T0, 'the last 20 s and some');
  h.ui.setState({ view: liveView(dm.edge(), 50) });
  dm.refresh();
  await tick();
  assert.equal(h.window(), first, 'the new window waits for the gesture to settle');
  dm.onFrames([io(T0 + 60, 7)]);
  dm.onCovered(T0 + 60, T0 + 61);
  await new Promise((r) => setTimeout(r, 400));
  const w = h.window();
  assert.notEqual(w, first, 'a new window');
  assert.equal(w?.frames.at(-1)?.ts, T0 + 60, 'with the second that came meanwhile');
  assert.ok(w && w.to >= T0 + 61 && w.coveredTo === T0 + 61);
  assert.equal(h.store.getState().summary?.disks.get('7:0')?.n, 5 * 49 + 7, 'and in the summary of the visible range');
});

test('data layer: the source says whether its frames carry submit-wait timing; a snapshot from before protocol 4 does not', async () => {
  const h = dataHarness({ disks: [LOOP0] });
  h.ui.setState({ view: liveView(T0 + 10, 60) });
  const dm = h.dm;
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.onFrames([io(T0)]);
  assert.equal(h.store.getState().submitTiming, false, 'an agent before protocol 4: device latency');
  const timed: Frame = {
    ts: T0 + 1,
    step: 1,
    disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 2, d: [40, 2], q: [0, 2], w: [60, 2], t: [61, 2], wu: 0 }] }],
  };
  dm.onFrames([timed]);
  assert.equal(h.store.getState().submitTiming, true, 'a frame with `t`/`w`: total and submit wait can be shown');
  // An old snapshot opens on its own data: no submit-wait timing, so its phases fall back to device.
  h.openSnapshot(snapshotOf([io(T0), io(T0 + 1)], { from: T0, to: T0 + 5 }), 'old.json');
  assert.equal(h.store.getState().submitTiming, false);
  // Its heat maps draw device latency (what app.ts resolves the phase to) and count every I/O.
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(h.store.getState().summary?.perDisk.get('7:0')?.total, 10, 'the old snapshot draws');
  // The phase on screen says "total" while the source has none: nothing is drawn rather than device passed off as total.
  h.ui.setState({ kind: 'total' });
  dm.refresh();
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(h.store.getState().summary?.perDisk.get('7:0')?.total ?? 0, 0);
  assert.ok(dm.closeSnapshot());
  assert.equal(h.store.getState().submitTiming, true, 'back to live: its frames have it');
});

test('data layer: a fresh live page stands at the agent’s now from the first window on, asks for what is visible at once, and the backfill (oldest first) moves nothing visible', async () => {
  // The agent has ten minutes of history; the page backfills them oldest first, in pages, for
  // seconds on end. The live view must show the last minute before the backfill gets there,
  // never the minute the backfill has reached labelled as live (issue 29).
  const NOW = T0 + 600;
  const { client, asked } = answeringAgent();
  const h = dataHarness({ disks: [LOOP0], client });
  const dm = h.dm;
  h.ui.setState({
    agent: { version: 'test', protocol: 4, host: { hostname: 'h', kernel: 'k' }, tiers: [1, 10, 60], historyFrom: T0 },
    view: liveView(NOW, 60),
  });
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.setAgentClock(helloClock({ now: NOW, step: 1 }, Date.now()));
  const visibleTo = (): number => h.store.getState().visible.to;
  const shownFrom = (): number | undefined => h.window()?.frames[0]?.ts;
  // The first backfill page: the oldest 100 seconds.
  dm.onFrames(Array.from({ length: 100 }, (_, s) => io(T0 + s)));
  dm.onCovered(T0, T0 + 100);
  dm.refresh();
  for (let i = 0; i < 5; i++) await tick();
  assert.ok(visibleTo() >= NOW - 2, `the view stands at the agent's now (to ${visibleTo() - T0} s, now ${NOW - T0} s)`);
  for (let i = 0; i < 50 && asked.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(asked.length, 1, 'the visible range is asked for at once, not left to the backfill');
  const req = asked[0]!.msg;
  assert.ok(
    req.from <= visibleTo() - 60 && req.to >= visibleTo() - 1,
    `the request covers the visible minute (${req.from - T0}..${req.to - T0})`,
  );
  const w0 = h.window();
  assert.ok(!w0 || (shownFrom() ?? Infinity) >= visibleTo() - 120, 'no window of the old backfill seconds is published as live');
  // More backfill arrives while the agent answers: still nothing old on screen.
  dm.onFrames(Array.from({ length: 100 }, (_, s) => io(T0 + 100 + s)));
  dm.onCovered(T0 + 100, T0 + 200);
  for (let i = 0; i < 5; i++) await tick();
  assert.ok(visibleTo() >= NOW - 2, 'the view did not move back to the backfill');
  const history: Frame[] = [];
  for (let ts = req.from; ts < req.to; ts++) history.push(io(ts, 3));
  asked[0]!.answer(history);
  for (let i = 0; i < 10; i++) await tick();
  const w = h.window();
  assert.ok(w, 'the visible window is on screen');
  assert.ok(w.coveredTo >= visibleTo(), `covered to the view's end (${w.coveredTo - T0} vs ${visibleTo() - T0})`);
  assert.equal(
    h.store.getState().summary?.disks.get('7:0')?.n,
    3 * (visibleTo() - h.store.getState().visible.from),
    'the summary is of the visible minute, from history',
  );
  // The rest of the backfill, then live seconds: the window grows at the edge.
  dm.onFrames(Array.from({ length: 400 }, (_, s) => io(T0 + 200 + s)));
  dm.onCovered(T0 + 200, NOW);
  dm.onFrames([io(NOW, 9)]);
  dm.onCovered(NOW, NOW + 1);
  for (let i = 0; i < 10; i++) await tick();
  assert.equal(visibleTo(), NOW + 1, 'the newest live second is the edge');
  assert.equal(asked.length, 1, 'no other request');
});

test('data layer: back after five minutes away, a following window short of the visible range asks for it at once instead of waiting for the backfill', async () => {
  const asked: RangeRequestBody[] = [];
  const h = dataHarness({
    disks: [LOOP0],
    client: {
      connected: true,
      hello: undefined,
      request: (msg: RangeRequestBody) => {
        asked.push(msg);
        return new Promise<RangeAnswer>(() => undefined); // the agent thinks (the test looks at what was asked)
      },
    } as AgentSource,
  });
  const dm = h.dm;
  h.ui.setState({
    agent: { version: 'test', protocol: 4, host: { hostname: 'h', kernel: 'k' }, tiers: [1, 10, 60], historyFrom: T0 },
    view: liveView(T0 + 60, 60),
  });
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.setAgentClock(helloClock({ now: T0 + 60, step: 1 }, Date.now()));
  dm.onFrames(Array.from({ length: 60 }, (_, s) => io(T0 + s)));
  dm.onCovered(T0, T0 + 60);
  dm.refresh();
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(h.window()?.coveredTo, T0 + 60, 'the live minute is on screen, from the live buffer');
  const before = asked.length;
  // The connection comes back five minutes on: a new hello, and the backfill's first page.
  dm.setAgentClock(helloClock({ now: T0 + 360, step: 1 }, Date.now()));
  dm.onFrames(Array.from({ length: 30 }, (_, s) => io(T0 + 60 + s)));
  dm.onCovered(T0 + 60, T0 + 90);
  for (let i = 0; i < 50 && asked.length === before; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(asked.length, before + 1, 'the visible minute is asked for');
  const req = asked.at(-1) as RangeRequestBody;
  assert.ok(req.to >= T0 + 358 && req.from <= T0 + 299, `the request covers the minute before now (${req.from - T0}..${req.to - T0})`);
});

test('data layer: following an hour live, a new second is added to the summary, not the hour summed again', async (t) => {
  // The agent has two hours of history; the page follows the last hour live. Every frame of the
  // history counts how often its disks are read: summing the visible hour again for each live
  // second (what the page did until RunningSummary) reads each of them at least once a second.
  const { h, dm, asked, start } = withTwoHours(liveView(T0, 3600), T0);
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.onCovered(start, T0);
  dm.refresh();
  for (let i = 0; i < 100 && asked.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
  const ask = { ...asked[0]!.msg, step: asked[0]!.msg.step ?? 1 };
  let reads = 0;
  const history: Frame[] = [];
  for (let ts = ask.from; ts < ask.to; ts += ask.step) {
    const disks = io(ts, 2).disks;
    history.push({
      ts,
      step: ask.step,
      get disks() {
        reads++;
        return disks;
      },
    });
  }
  asked[0]!.answer(history);
  for (let i = 0; i < 10; i++) await tick();
  assert.equal(h.window()?.step, ask.step, 'the hour is on screen');
  const held = h.window()?.frames.length ?? 0;
  const liveSeconds = 40;
  reads = 0;
  for (let s = 0; s < liveSeconds; s++) {
    dm.onFrames([io(T0 + s)]);
    dm.onCovered(T0 + s, T0 + s + 1);
    await new Promise((r) => setTimeout(r, 30));
    const summary = h.store.getState().summary;
    const visible = h.store.getState().visible;
    // The summary is of the range shown and counts every I/O of it (history frames hold 2, live ones 5).
    let want = 0;
    for (const f of h.window()?.frames ?? []) if (summary && f.ts >= summary.from && f.ts < summary.to) want += f.ts < T0 ? 2 : 5;
    assert.ok(summary && summary.from <= visible.from && summary.to >= visible.to, `second ${s}: the summary covers the visible range`);
    assert.equal(summary.disks.get('7:0')?.n, want, `second ${s}: the summary counts the range's I/Os`);
  }
  // A new sum is left where the range's start moves on a column (once a column step); each sum
  // reads a frame six times (weighed to choose at once or in slices, weighed for a slice, then
  // the class, cgroup, size and submit-wait tallies).
  const columnsCrossed = Math.ceil(liveSeconds / ask.step) + 1;
  const bound = columnsCrossed * 6 * held;
  t.diagnostic(
    `a ${ask.step} s column step, ${held} frames held, ${liveSeconds} live seconds: ${reads} reads of history frames ` +
      `(${(reads / held).toFixed(1)} per frame; a sum per column: at most ${bound}; a sum per second: ${liveSeconds * 6 * held})`,
  );
  assert.ok(reads <= bound, `${reads} reads of the history in ${liveSeconds} live seconds: more than a sum per column`);
});

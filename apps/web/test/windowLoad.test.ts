// Loading a window of history while the data's end moves: a load under way that serves the
// newer want is not asked again (pipeline/windowWant.ts continues), following live or not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type Frame } from '@blkheat/shared-types';
import { fixedView, liveView } from '../src/model/view.ts';
import { alignCeil } from '../src/model/resolution.ts';
import { helloClock } from '../src/pipeline/source.ts';
import { answeringAgent, type AskedRange, dataHarness, withTwoHours } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_000;

function io(ts: number, n = 5): Frame {
  return { ts, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n, d: [40, n], q: [0, n] }] }] };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

/** Answers a range request with 2 I/Os a column over its whole range, and lets the answer land. */
async function answerWithHistory(range: AskedRange, step: number): Promise<void> {
  const history: Frame[] = [];
  for (let ts = range.msg.from; ts < range.msg.to; ts += step) history.push({ ...io(ts, 2), step });
  range.answer(history);
  for (let i = 0; i < 10; i++) await tick();
}

test('data layer: following, a history fetch slower than a live second still lands (the moving edge does not restart it)', async () => {
  // The agent has two hours of history; the page holds the last minute live. Zooming the live
  // view out to an hour needs a fetch at a coarser step. Each live second moves the edge while
  // the fetch is out: it must not be dropped and asked again, or an agent slower than a second
  // to answer never gets the hour on screen.
  const { h, dm, asked } = withTwoHours(liveView(T0 + 60, 20), T0);
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.onFrames(Array.from({ length: 60 }, (_, s) => io(T0 + s)));
  dm.onCovered(T0, T0 + 60);
  dm.refresh();
  await tick();
  assert.equal(h.window()?.step, 1, 'the last 20 s, from the live buffer');
  assert.equal(asked.length, 0);

  h.ui.setState({ view: liveView(dm.edge(), 3600) });
  dm.refresh();
  const waitAsked = async (n: number): Promise<void> => {
    for (let i = 0; i < 100 && asked.length < n; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(asked.length, n, `${n} range request(s)`);
  };
  await waitAsked(1);
  const first = { ...asked[0]!.msg, step: asked[0]!.msg.step ?? 1 };
  assert.ok(first.step > 1, `an hour at a coarser step (${first.step} s)`);
  // Three live seconds arrive while the agent thinks.
  for (const s of [60, 61, 62]) {
    dm.onFrames([io(T0 + s)]);
    dm.onCovered(T0 + s, T0 + s + 1);
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(asked.length, 1, 'the request under way was not asked again');
  await answerWithHistory(asked[0]!, first.step);
  const w = h.window();
  assert.equal(w?.step, first.step, 'the hour is on screen');
  assert.ok(w && w.from <= dm.edge() - 3600, 'from an hour ago');
  assert.ok(w && w.coveredTo >= T0 + 63, `up to the newest live second (covered to ${w ? w.coveredTo - T0 : '-'})`);
  assert.deepEqual(
    w?.frames.filter((f) => f.ts >= T0 + 60).map((f) => f.ts - T0),
    [60, 61, 62],
    'the live seconds that came during the fetch are in it',
  );
  assert.ok(w && w.to >= T0 + 63, 'and the window reaches them');
});

test('data layer: a fixed range asked while the data’s end moves is asked once (only the buffer past the view moved)', async () => {
  // A fleet's first window of an hour takes a second or more to answer, and its edge moves a
  // scrape meanwhile. The view ends before the edge: the newer edge only moves the buffer past
  // it, which a loaded window is not reloaded for either. Asking again doubled the fleet's work.
  const { h, dm, asked } = withTwoHours(fixedView(T0 - 1800, T0 + 50), T0);
  dm.setLiveSchema(BUCKET_SCHEMA);
  dm.onFrames(Array.from({ length: 60 }, (_, s) => io(T0 + s)));
  dm.onCovered(T0, T0 + 60);
  dm.refresh();
  for (let i = 0; i < 100 && asked.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(asked.length, 1, 'the range is asked for');
  const first = { ...asked[0]!.msg, step: asked[0]!.msg.step ?? 1 };
  assert.ok(first.to > T0 + 50, `its buffer reaches past the view (to the edge: ${first.to - T0})`);
  for (const s of [60, 61, 62, 63, 64, 65, 66, 67, 68, 69]) {
    dm.onFrames([io(T0 + s)]);
    dm.onCovered(T0 + s, T0 + s + 1);
    dm.refresh();
    await new Promise((r) => setTimeout(r, 30));
  }
  assert.ok(dm.edge() >= alignCeil(T0 + 70, first.step) - first.step, 'the edge moved on while the range was out');
  assert.equal(asked.length, 1, 'the request under way was not asked again');
  await answerWithHistory(asked[0]!, first.step);
  const w = h.window();
  assert.equal(w?.step, first.step, 'the range is on screen');
  assert.ok(w && w.from <= T0 - 1800 && w.to >= T0 + 50, 'holding the visible range');
  dm.refresh();
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(asked.length, 1, 'and kept: nothing more is asked for the view');

  // A zoom the pending window does not hold still asks at once (the step changes).
  h.ui.setState({ view: fixedView(T0 - 7000, T0 + 50) });
  dm.refresh();
  for (let i = 0; i < 100 && asked.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(asked.length, 2, 'a view the window does not hold is asked for');
});

/**
 * A page opened on a fixed range draws a placeholder until it is connected; the hello asks for
 * the range at once (`step`: the hello's live step; a fleet's hello has an empty disk list, its
 * disks follow).
 */
async function askedOnHello(step: number): Promise<void> {
  const { client, asked } = answeringAgent();
  const link = client as { connected: boolean };
  link.connected = false;
  const h = dataHarness({ client });
  h.ui.setState({
    agent: { version: 'test', protocol: 6, host: { hostname: 'h', kernel: 'k' }, tiers: [step], historyFrom: T0 - 7200 },
    view: fixedView(T0 - 3600, T0 - 60),
  });
  const dm = h.dm;
  dm.refresh();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(asked.length, 0, 'nothing is asked before the hello');
  assert.equal(h.window()?.provisional, true, 'a placeholder is drawn meanwhile');
  // The hello, as app.ts handles it: schema, clock, and the disk list.
  link.connected = true;
  dm.setLiveSchema(BUCKET_SCHEMA, step);
  dm.setAgentClock(helloClock({ now: T0, step }, Date.now()));
  dm.setAgentDisks([]);
  // At once, not after the gesture debounce (LOAD_DEBOUNCE, 120 ms) a window on screen waits:
  // during those 120 ms the page reads the list, and the timer fires after it.
  for (let i = 0; i < 3; i++) await tick();
  assert.equal(asked.length, 1, 'the range is asked on the hello, before any backfill');
  assert.ok(asked[0]!.msg.from <= T0 - 3600 && asked[0]!.msg.to >= T0 - 60, 'for the visible range');
  // The backfill then lands: the load under way is not asked again.
  dm.onCovered(T0 - 600, T0);
  dm.refresh();
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(asked.length, 1, 'and the backfill does not ask it again');
  await answerWithHistory(asked[0]!, asked[0]!.msg.step ?? 1);
  assert.equal(h.window()?.provisional, false, 'the answer replaces the placeholder');
}

test('data layer: a fixed range opened before the hello is asked on the hello, not when the first backfill lands (a fleet at 15 s)', async () => {
  // A big fleet's hello is followed by its disk list (466 KiB at 4,000 disks), read in pieces
  // between the page's tasks: a range asked after a debounce went out behind it, 231 ms after the
  // hello (bench/fleet-scale, 8 minutes of history at 1,000 hosts).
  await askedOnHello(15);
});

test('data layer: a fixed range opened before the hello is asked on the hello (an agent at 1 s, in the page’s own schema)', async () => {
  // Nothing the placeholder was made for changes at this hello (step, schema, disks): kept until
  // the backfill landed, the page idled on it, with no data's numbers and phases (phase-split's
  // `lat=total` read device latency in a loaded CI run).
  await askedOnHello(1);
});

// A fleet page asks its ranges for device latency alone until it shows queue latency (protocol
// 7: pipeline/fleetWindow.ts fleetRangePhases): each phase is a query over every host to
// Prometheus, and a fleet page shows device latency unless asked. Once it shows queue latency,
// the frames it holds (whose `q` are empty, not "no queue latency") are dropped and asked again
// with every phase, once. An agent's ranges name no phase: a phase switch there stays instant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type Frame, PROTOCOL_VERSION } from '@blkheat/shared-types';
import { fixedView, liveView, type ViewState } from '../src/model/view.ts';
import { helloClock } from '../src/pipeline/source.ts';
import { answeringAgent, type AskedRange, dataHarness, type DataHarness, LOOP0 } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_040;
const STEP = 15;

/** Answers a range with 3 I/Os a column, with queue latency or without (as a fleet server asked for device latency alone). */
function answer(range: AskedRange, queue: boolean): void {
  const frames: Frame[] = [];
  for (let ts = range.msg.from; ts < range.msg.to; ts += STEP)
    frames.push({ ts, step: STEP, disks: [{ dev: LOOP0.dev, cls: [{ c: 'Read', n: 3, d: [40, 3], q: queue ? [2, 3] : [] }] }] });
  range.answer(frames);
}

async function until(what: string, holds: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !holds(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(holds(), what);
}

const FLEET = { prometheus: 'http://p', scrapeInterval: STEP };

/**
 * A page on a source at 15 s after its hello (a fleet server's or an agent's), showing `kind`, on
 * `view` (a fixed hour unless said), its clock `clock` (the hello's `now` T0 unless said).
 */
function opened(
  fleet: boolean,
  o: { kind?: 'device' | 'queue'; view?: ViewState; clock?: ReturnType<typeof helloClock> } = {},
): { h: DataHarness; asked: AskedRange[] } {
  const { client, asked } = answeringAgent();
  const h = dataHarness({ client, disks: [LOOP0] });
  h.ui.setState({
    agent: {
      version: 'test',
      protocol: PROTOCOL_VERSION,
      host: { hostname: 'fleet', kernel: 'k' },
      tiers: [STEP],
      historyFrom: T0 - 7200,
      ...(fleet ? { fleet: FLEET } : {}),
    },
    view: o.view ?? fixedView(T0 - 3600, T0 - 60),
    kind: o.kind ?? 'device',
  });
  h.dm.setLiveSchema(BUCKET_SCHEMA, STEP);
  h.dm.setAgentClock(o.clock ?? helloClock({ now: T0, step: STEP }, Date.now()));
  h.dm.refresh();
  return { h, asked };
}

/** The shown window's queue latency count. */
function queueCount(frames: readonly Frame[] | undefined): number {
  let n = 0;
  for (const f of frames ?? []) for (const d of f.disks) for (const c of d.cls) for (let i = 1; i < c.q.length; i += 2) n += c.q[i] ?? 0;
  return n;
}

test('fleet: ranges ask device latency alone; showing queue latency drops the frames held and asks them again with every phase, once', async () => {
  const { h, asked } = opened(true);
  await until('the hour is asked', () => asked.length === 1);
  assert.deepEqual(asked[0]?.msg.phases, ['device'], 'a fleet page showing device latency asks for device latency alone');
  assert.equal(h.dm.heldWithoutQueue, true, 'what it holds lacks queue latency: the export fallback builds no snapshot of it');
  answer(asked[0]!, false);
  await until('the hour is on screen', () => h.window()?.provisional === false && (h.window()?.frames.length ?? 0) > 0);
  const deviceWindow = h.window();
  // A comparison's ranges (its baseline, and the view it compares) are asked as the window's.
  const baseline = { from: T0 - 7200, to: T0 - 6600 };
  h.ui.setState({ compare: { baseline } });
  h.dm.refresh();
  await until('the baseline and the view compared are asked', () => asked.length === 3);
  assert.ok(
    asked.slice(1).some((a) => a.msg.from === baseline.from),
    'the baseline asked',
  );
  assert.deepEqual(
    asked.slice(1).map((a) => a.msg.phases),
    [['device'], ['device']],
    'a comparison’s ranges: device latency alone too',
  );
  for (const a of asked.slice(1)) answer(a, false);

  h.ui.setState({ kind: 'queue' });
  h.dm.refresh();
  await until('the hour and the comparison’s ranges are asked again', () => asked.length === 6);
  assert.ok(
    asked.slice(3).some((a) => a.msg.from === baseline.from),
    'the baseline asked again',
  );
  assert.deepEqual(
    asked.slice(3).map((a) => a.msg.phases),
    [undefined, undefined, undefined],
    'with every phase',
  );
  assert.equal(h.dm.heldWithoutQueue, false);
  assert.notEqual(h.window(), deviceWindow, 'the window without queue latency is no longer drawn');
  assert.equal(queueCount(h.window()?.frames), 0);
  for (const a of asked.slice(3)) answer(a, true);
  await until('the hour is on screen again', () => (h.window()?.frames.length ?? 0) > 0);
  const columns = h.window()?.frames.length ?? 0;
  assert.equal(queueCount(h.window()?.frames), 3 * columns, `with its queue latency: 3 I/Os in each of its ${columns} columns`);

  // Back to device latency, and to queue again: every phase is held, nothing is asked.
  for (const kind of ['device', 'queue'] as const) {
    h.ui.setState({ kind });
    h.dm.refresh();
  }
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(asked.length, 6, 'nothing asked again');
  assert.equal(queueCount(h.window()?.frames), 3 * columns);
});

test('fleet: a page opened on queue latency asks it from the first range; an agent’s ranges name no phase', async () => {
  for (const [fleet, kind] of [
    [true, 'queue'],
    [false, 'device'],
  ] as const) {
    // A fleet page chosen on queue latency before its first range (a `lat=queue` link).
    const { h, asked } = opened(fleet, { kind });
    await until('a range is asked', () => asked.length === 1);
    assert.equal(h.dm.heldWithoutQueue, false);
    assert.equal(asked[0]?.msg.phases, undefined, `${fleet ? 'a fleet page showing queue latency' : 'an agent'}: every phase`);
  }
});

test('fleet, following live: showing queue latency keeps the live edge where the dropped frames reached, and asks the newest column again', async (t) => {
  // The fleet's clock says a column is complete 10 s after its end (its lag when its edge last
  // moved): at T0 the newest it has closed ends at T0 - 15.
  const { h, asked } = opened(true, {
    view: liveView(T0 - STEP, 600),
    clock: helloClock({ now: T0, step: STEP, fleet: { ...FLEET, liveTo: T0 - STEP, liveLag: 10 } }, Date.now()),
  });
  // A fleet's clock ticks on a timer; an agent's clock (which does not) drops it at the end.
  t.after(() => h.dm.setAgentClock(helloClock({ now: T0, step: 1 }, Date.now())));
  await until('the window is asked', () => asked.length === 1);
  assert.equal(asked[0]?.msg.to, T0 - STEP);
  answer(asked[0]!, false);
  await until('the window is on screen', () => (h.window()?.frames.length ?? 0) > 0);
  // The column ending at T0 comes as a live frame as soon as the fleet server saw it complete,
  // before the clock would say so.
  h.dm.onFrames([{ ts: T0 - STEP, step: STEP, disks: [{ dev: LOOP0.dev, cls: [{ c: 'Read', n: 3, d: [40, 3], q: [] }] }] }]);
  assert.equal(h.store.getState().visible.to, T0, 'the live edge is where the newest frame ends');

  h.ui.setState({ kind: 'queue' });
  h.dm.refresh();
  assert.equal(h.store.getState().visible.to, T0, 'the frames dropped, the live edge stays (the clock alone would put it a column back)');
  await until('the window is asked again', () => asked.length === 2);
  assert.equal(asked[1]?.msg.phases, undefined, 'with every phase');
  assert.equal(asked[1]?.msg.to, T0, 'up to the newest column the page held');
  answer(asked[1]!, true);
  await until('the window is on screen again', () => (h.window()?.frames.length ?? 0) > 0);
  assert.ok(
    h.window()?.frames.some((f) => f.ts === T0 - STEP),
    'the newest column is on the page with its queue latency',
  );
});

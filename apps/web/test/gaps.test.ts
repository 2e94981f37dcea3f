// Seconds the agent did not record are told apart from recorded seconds without I/O (the
// protocol: a frame with `disks: []` was recorded; no frame at all was not), in the model and
// through the data layer as the stream feeds it; rates divide by the seconds with data; each
// disk's colours scale to its own visible cells.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketCount, type Frame } from '@blkheat/shared-types';
import { buildMatrix, HeatMatrix } from '../src/model/heatmatrix.ts';
import { columnRecording, NOTHING_KNOWN, recordedSecondsIn, unrecordedRuns, unrecordedSeconds } from '../src/model/gaps.ts';
import { allInLowestBucket } from '../src/model/percentiles.ts';
import { colourDomain, CountScale } from '../src/model/colour.ts';
import { liveView } from '../src/model/view.ts';
import { type DataHarness, dataHarness, LOOP0, SDA, snapshotOf } from './fixtures/dataLayer.ts';

const ROWS = bucketCount();
const T0 = 1_700_000_000;

/** A second with I/O on `dev` (n I/Os in bucket b), an idle recorded second, or nothing. */
function io(ts: number, dev = '7:0', n = 5, b = 40): Frame {
  return { ts, step: 1, disks: [{ dev, cls: [{ c: 'Read', n, d: [b, n], q: [0, n] }] }] };
}
function idle(ts: number): Frame {
  return { ts, step: 1, disks: [] };
}

/** Brute force: the seconds of [from, to) inside `known` with no frame. */
function missing(frames: readonly Frame[], from: number, to: number, known: { from: number; to: number }): number[] {
  const have = new Set(frames.map((f) => f.ts));
  const out: number[] = [];
  for (let s = Math.max(from, known.from); s < Math.min(to, known.to); s++) if (!have.has(s)) out.push(s);
  return out;
}

function expand(runs: [number, number][], step = 1): number[] {
  return runs.flatMap(([a, b]) => Array.from({ length: b - a }, (_, i) => (a + i) * step));
}

test('gaps: seconds without a frame are unrecorded, idle frames and other disks are not', () => {
  // 0-9 I/O, 10-14 idle frames, 15-19 nothing (agent down), 20-24 only another disk, 25 nothing, 26-29 I/O.
  const frames: Frame[] = [];
  for (let s = 0; s < 10; s++) frames.push(io(T0 + s));
  for (let s = 10; s < 15; s++) frames.push(idle(T0 + s));
  for (let s = 20; s < 25; s++) frames.push(io(T0 + s, '8:0'));
  for (let s = 26; s < 30; s++) frames.push(io(T0 + s));
  const m = buildMatrix(frames, { from: T0, to: T0 + 40, step: 1, rows: ROWS, filter: { dev: '7:0', kind: 'device' } });
  const known = { from: T0, to: T0 + 30 };
  const runs = unrecordedRuns(m, T0, T0 + 40, known);
  assert.deepEqual(runs, [
    [T0 + 15, T0 + 20],
    [T0 + 25, T0 + 26],
  ]);
  assert.deepEqual(expand(runs), missing(frames, T0, T0 + 40, known), 'equals the brute-force answer');
  // Idle seconds and seconds with I/O on other disks only look empty, but were recorded.
  assert.equal(m.total(T0 + 12), 0);
  assert.deepEqual(columnRecording(m, T0 + 12, known), { state: 'recorded' });
  assert.deepEqual(columnRecording(m, T0 + 22, known), { state: 'recorded' });
  assert.deepEqual(columnRecording(m, T0 + 17, known), { state: 'unrecorded' });
  // Past the known range (the live edge) nothing is claimed; nor with nothing known (a snapshot).
  assert.deepEqual(columnRecording(m, T0 + 35, known), { state: 'unknown' });
  assert.deepEqual(unrecordedRuns(m, T0, T0 + 40, NOTHING_KNOWN), []);
  assert.deepEqual(unrecordedRuns(m, T0 + 16, T0 + 18, known), [[T0 + 16, T0 + 18]], 'clipped to the asked columns');
  assert.equal(unrecordedSeconds(m, T0, T0 + 40, known), 6);
  assert.equal(recordedSecondsIn(m, T0, T0 + 40), 24);
  // A later frame fills a hole (the client fetched a missing second): no longer a gap.
  m.addFrame(idle(T0 + 25), { dev: '7:0', kind: 'device' });
  assert.deepEqual(unrecordedRuns(m, T0, T0 + 40, known), [[T0 + 15, T0 + 20]]);
});

test('gaps: random frames, every window, equal the brute force; coarse columns are partial', () => {
  let seed = 7;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let round = 0; round < 50; round++) {
    const frames: Frame[] = [];
    for (let s = 0; s < 120; s++) {
      const r = rnd();
      if (r < 0.2) continue; // not recorded
      frames.push(r < 0.5 ? idle(T0 + s) : io(T0 + s, rnd() < 0.5 ? '7:0' : '8:0'));
    }
    const known = { from: T0 + Math.floor(rnd() * 20), to: T0 + 100 + Math.floor(rnd() * 20) };
    const m = buildMatrix(frames, { from: T0, to: T0 + 120, step: 1, rows: ROWS, filter: { dev: '7:0', kind: 'device' } });
    assert.deepEqual(expand(unrecordedRuns(m, T0, T0 + 120, known)), missing(frames, T0, T0 + 120, known));
    assert.equal(unrecordedSeconds(m, T0, T0 + 120, known), missing(frames, T0, T0 + 120, known).length);
    assert.equal(recordedSecondsIn(m, T0, T0 + 120), frames.length);
    // 10 s columns over the same 1 s frames: a column is unrecorded only if all 10 are missing.
    const c = buildMatrix(frames, { from: T0, to: T0 + 120, step: 10, rows: ROWS, filter: { dev: '7:0', kind: 'device' } });
    const k10 = { from: Math.ceil(known.from / 10) * 10, to: Math.floor(known.to / 10) * 10 };
    for (let col = T0 / 10; col < (T0 + 120) / 10; col++) {
      const gone = missing(frames, col * 10, col * 10 + 10, { from: -Infinity, to: Infinity }).length;
      const inside = col * 10 >= k10.from && col * 10 + 10 <= k10.to;
      const want = !inside ? undefined : gone === 10 ? 'unrecorded' : gone > 0 ? 'partial' : 'recorded';
      const got = columnRecording(c, col, known);
      if (want) assert.equal(got.state, want, `column ${col * 10}`);
      if (got.state === 'partial') assert.equal(got.missing, gone);
    }
  }
});

test('gaps: the ring forgets what it recorded when a slot is reused', () => {
  const m = new HeatMatrix(ROWS, 1, 4, T0);
  for (let s = 0; s < 4; s++) m.addFrame(idle(T0 + s), { dev: '7:0', kind: 'device' });
  m.ensure(T0 + 7); // columns 4..7 reuse the slots of 0..3: nothing recorded in them yet
  const known = { from: T0, to: T0 + 8 };
  assert.deepEqual(unrecordedRuns(m, T0, T0 + 8, known), [[T0 + 4, T0 + 8]]);
});

test('queue hint: all in the lowest bucket', () => {
  const h = new Float64Array(ROWS);
  assert.equal(allInLowestBucket(h), false, 'no I/O: no hint');
  h[0] = 40;
  assert.equal(allInLowestBucket(h), true);
  h[3] = 1;
  assert.equal(allInLowestBucket(h), false);
});

test('colour domain: 1-2-5 steps, widening only while live', () => {
  assert.equal(colourDomain(40), 50);
  assert.equal(colourDomain(40, 5000, true), 5000);
  assert.equal(colourDomain(6000, 5000, true), 10000);
  assert.equal(colourDomain(40, 5000, false), 50);
  // A 40 I/O cell on its own scale is near the top of the palette; on a shared one it is dim.
  assert.ok(new CountScale('log', colourDomain(40)).index(40) >= 240);
  assert.ok(new CountScale('log', colourDomain(8000)).index(40) < 120);
});

/** A data layer fed like the stream feeds it (no agent connection: the live buffer answers). */
async function feed(frames: readonly Frame[], covered: [number, number]): Promise<DataHarness> {
  const h = dataHarness({ disks: [LOOP0, SDA] });
  h.ui.setState({ view: liveView(covered[1], 60) });
  h.dm.onFrames(frames);
  h.dm.onCovered(covered[0], covered[1]);
  h.ui.setState({ view: liveView(h.dm.edge(), 60) });
  h.dm.refresh();
  await new Promise((r) => setTimeout(r, 0));
  return h;
}

test('data layer: an outage in the stream draws as no data, idle seconds do not; rates skip it', async () => {
  // loop0: 40 I/Os a second in one 20 ms-ish bucket; sda: 5000 a second. Seconds 20-27 the
  // agent was down (no frame); 28-29 idle frames.
  const frames: Frame[] = [];
  for (let s = 0; s < 40; s++) {
    if (s >= 20 && s < 28) continue;
    if (s === 28 || s === 29) frames.push(idle(T0 + s));
    else frames.push({ ts: T0 + s, step: 1, disks: [io(T0 + s, '7:0', 40, 70).disks[0]!, io(T0 + s, '8:0', 5000, 40).disks[0]!] });
  }
  const h = await feed(frames, [T0, T0 + 40]);
  const dm = h.dm;
  const cur = h.window();
  assert.ok(cur, 'a data window');
  assert.equal(cur.step, 1);
  const m = cur.matrices.get('7:0');
  assert.ok(m);
  assert.deepEqual(unrecordedRuns(m, T0, T0 + 40, h.known()), [[T0 + 20, T0 + 28]]);
  const sum = dm.freshSummary();
  assert.ok(sum);
  assert.equal(sum.unrecorded, 8);
  assert.equal(sum.windowSeconds, 32, 'rates divide by the 40 s the source can speak for less the 8 s outage, not the 60 s view');
  assert.equal(sum.disks.get('7:0')?.n, 30 * 40);
  // Each disk's colours scale to its own visible cells; shared, to the busiest.
  assert.equal(h.scaleFor('7:0')?.max, 50);
  assert.equal(h.scaleFor('8:0')?.max, 5000);
  h.ui.setState({ norm: 'shared' });
  assert.equal(h.scaleFor('7:0')?.max, 5000);
  h.ui.setState({ norm: 'disk' });

  // The agent comes back: the reconnect backfill brings 45..49 (40..44 not recorded), then
  // says [50, 53) is complete without sending a frame for it.
  const back = [45, 46, 47, 48, 49].map((s) => io(T0 + s, '7:0', 40, 70));
  dm.onFrames(back);
  dm.onCovered(T0 + 40, T0 + 50);
  dm.onCovered(T0 + 50, T0 + 53);
  assert.deepEqual(unrecordedRuns(m, T0, T0 + 60, h.known()), [
    [T0 + 20, T0 + 28],
    [T0 + 40, T0 + 45],
    [T0 + 50, T0 + 53],
  ]);
  // A missing second fetched later (a gap fill) is drawn with its data.
  dm.onFrames([io(T0 + 42, '7:0', 3, 70)]);
  const again = h.window();
  assert.ok(again);
  const m2 = again.matrices.get('7:0');
  assert.ok(m2);
  assert.equal(m2.count(T0 + 42, 70), 3, 'the filled second is counted');
  assert.deepEqual(unrecordedRuns(m2, T0, T0 + 60, h.known()), [
    [T0 + 20, T0 + 28],
    [T0 + 40, T0 + 42],
    [T0 + 43, T0 + 45],
    [T0 + 50, T0 + 53],
  ]);
});

test('data layer: a snapshot (idle steps left out) shows no gaps; its rate is over its range', async () => {
  const frames: Frame[] = [];
  for (let s = 0; s < 30; s++) if (s % 3 !== 0) frames.push(io(T0 + s, '7:0', 10, 50));
  const snapshot = snapshotOf(frames, { from: T0, to: T0 + 30 });
  const h = dataHarness();
  h.openSnapshot(snapshot, 'test.json');
  // A snapshot's window is built over a few tasks after the one that loaded it (one per disk).
  for (let i = 0; i < 10 && !h.window(); i++) await new Promise((r) => setTimeout(r, 0));
  const m = h.window()?.matrices.get('7:0');
  assert.ok(m);
  assert.deepEqual(unrecordedRuns(m, T0, T0 + 30, h.known()), []);
  const sum = h.dm.freshSummary();
  assert.equal(sum?.windowSeconds, 30, 'over the whole range, idle steps (left out of the file) too');
  assert.equal(sum?.unrecorded, 0);
});

test("a known range reaching back to the agent's oldest second makes everything before it unrecorded", () => {
  const m = new HeatMatrix(ROWS, 1, 16, T0);
  for (let c = T0; c <= T0 + 10; c++) m.ensure(c); // the window's columns, as the window loader lays them out
  for (const s of [5, 6]) m.addFrame(idle(T0 + s), { dev: '7:0', kind: 'device' });
  const everything = { from: -Infinity, to: T0 + 7 };
  assert.deepEqual(columnRecording(m, T0 + 1, everything), { state: 'unrecorded' });
  assert.deepEqual(columnRecording(m, T0 + 5, everything), { state: 'recorded' });
  assert.deepEqual(columnRecording(m, T0 + 1, { from: T0 + 4, to: T0 + 7 }), { state: 'unknown' });
  assert.deepEqual(unrecordedRuns(m, T0, T0 + 7, everything), [[T0, T0 + 5]]);
});

test('data layer: the live view of a young agent draws the seconds before its first one as no data, and fetches nothing for them', async () => {
  // The agent started at T0 (its oldest second: historyFrom) and has run 60 s; the live view
  // shows the last 5 minutes, 4 of them before the agent existed.
  const start = T0;
  const frames: Frame[] = [];
  for (let s = 0; s < 60; s++) frames.push(s % 2 === 0 ? io(start + s) : idle(start + s));
  let asked = 0;
  // Connected, as far as the data layer can tell: a fetch would be counted (and fail).
  const h = dataHarness({
    disks: [LOOP0],
    client: {
      connected: true,
      hello: undefined,
      request: (): Promise<never> => {
        asked++;
        return Promise.reject(new Error('no agent here'));
      },
    },
  });
  const dm = h.dm;
  h.ui.setState({
    agent: { version: 'test', protocol: 3, host: { hostname: 'h', kernel: 'k' }, tiers: [1, 10, 60], historyFrom: start },
    view: liveView(start + 60, 300),
  });
  // What the client does with the first backfill page: the frames, then what they cover.
  dm.onFrames(frames);
  dm.onCovered(start, start + 60);
  dm.refresh();
  await new Promise((r) => setTimeout(r, 0));
  const cur = h.window();
  assert.ok(cur, 'a data window');
  assert.equal(cur.step, 1);
  const m = cur.matrices.get('7:0');
  assert.ok(m);
  const view = liveView(dm.edge(), 300);
  assert.ok(cur.from <= view.from, `the window (from ${cur.from - start}) holds the whole view (from ${view.from - start})`);
  assert.deepEqual(unrecordedRuns(m, view.from, view.to, h.known()), [[view.from, start]], 'before the first second: no data');
  assert.deepEqual(columnRecording(m, start - 1, h.known()), { state: 'unrecorded' });
  assert.deepEqual(columnRecording(m, start + 1, h.known()), { state: 'recorded' }, 'an idle second stays a quiet one');
  assert.equal(dm.freshSummary()?.unrecorded, start - view.from);
  assert.equal(asked, 0, 'nothing fetched for seconds before the agent’s oldest');
});

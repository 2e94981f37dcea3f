// The host's I/O pressure on a frame (`psi`, added in protocol 4 and snapshot 4): whole µs, each
// at most the step, accepted as written and refused naming the field otherwise; coarse steps sum
// it over their seconds; filtering by disk or class keeps it (it is no disk's).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  coarsenFrames,
  filterFrame,
  type Frame,
  frameSchema,
  maxStallMicros,
  mergeFrames,
  parseSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type Snapshot,
} from '../src/index.js';

const T0 = 1795290000;
const disk = { dev: '7:0', cls: [{ c: 'Read', n: 4, d: [40, 4], q: [0, 4] }] };
const frame = (ts: number, psi?: { some_us: number; full_us: number }, step = 1): Frame => ({
  ts,
  step,
  disks: [disk],
  ...(psi ? { psi } : {}),
});

test('psi: whole µs from 0 up to the step, accepted; a frame without it still is', () => {
  assert.equal(maxStallMicros(1), 1_000_000);
  assert.equal(maxStallMicros(60), 60_000_000);
  for (const f of [
    frame(T0),
    frame(T0, { some_us: 0, full_us: 0 }),
    frame(T0, { some_us: 1_000_000, full_us: 1_000_000 }),
    frame(T0, { some_us: 42_000_000, full_us: 10_000_000 }, 60),
    { ts: T0, step: 1, disks: [], psi: { some_us: 3, full_us: 1 } },
  ]) {
    const r = frameSchema.safeParse(f);
    assert.ok(r.success, JSON.stringify(f));
    assert.deepEqual(r.data, f);
  }
});

test('psi: malformed values are refused, naming the field', () => {
  const cases: [unknown, string, RegExp][] = [
    [{ some_us: 1_000_001, full_us: 0 }, 'psi.some_us', /must not be above the step \(1000000 µs\)/],
    [{ some_us: 0, full_us: 1_000_001 }, 'psi.full_us', /must not be above the step/],
    [{ some_us: -1, full_us: 0 }, 'psi.some_us', />=0/],
    [{ some_us: 0.5, full_us: 0 }, 'psi.some_us', /int/i],
    [{ some_us: '5', full_us: 0 }, 'psi.some_us', /expected number/],
    [{ some_us: 5 }, 'psi.full_us', /expected number/],
    [{ some_us: 5, full_us: 1, avg10: 0.5 }, 'psi', /avg10|unrecognized/i],
    [[5, 1], 'psi', /expected object/],
  ];
  for (const [psi, field, message] of cases) {
    const r = frameSchema.safeParse({ ts: T0, step: 1, disks: [], psi });
    assert.equal(r.success, false, `accepted: ${JSON.stringify(psi)}`);
    const issue = r.error?.issues[0];
    assert.equal(issue?.path.join('.'), field, JSON.stringify(psi));
    assert.match(issue?.message ?? '', message);
  }
  // The bound is the frame's own step: 1.5 s of stall fits a 10 s step, not a 1 s one.
  assert.equal(frameSchema.safeParse({ ts: T0, step: 10, disks: [], psi: { some_us: 1_500_000, full_us: 0 } }).success, true);
  assert.equal(frameSchema.safeParse({ ts: T0, step: 1, disks: [], psi: { some_us: 1_500_000, full_us: 0 } }).success, false);
});

test('a snapshot 4 carries psi per frame; a bad one is refused naming frames.N.psi', () => {
  const snap: Snapshot = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    createdAt: '2026-11-27T12:00:00.000Z',
    agent: '0.5.0',
    host: { hostname: 'h', kernel: '6.18.0' },
    schema: BUCKET_SCHEMA,
    range: { from: T0, to: T0 + 2, step: 1 },
    disks: [{ dev: '7:0', name: 'loop0', kind: 'request', present: true }],
    frames: [frame(T0, { some_us: 420_000, full_us: 100_000 }), frame(T0 + 1)],
    samples: [],
  };
  const r = parseSnapshot(JSON.stringify(snap));
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.deepEqual(
    r.value.frames.map((f) => f.psi),
    [{ some_us: 420_000, full_us: 100_000 }, undefined],
  );
  const bad = parseSnapshot(JSON.stringify({ ...snap, frames: [frame(T0), frame(T0 + 1, { some_us: 2_000_000, full_us: 0 })] }));
  assert.equal(bad.ok, false);
  if (!bad.ok) assert.equal(bad.field, 'frames.1.psi.some_us', bad.message);
});

test('merging sums psi over the seconds that have it; none when no second had it', () => {
  const seconds = [
    frame(T0, { some_us: 100_000, full_us: 10_000 }),
    frame(T0 + 1), // not known (the agent's first second, say): adds nothing
    frame(T0 + 2, { some_us: 1_000_000, full_us: 250_000 }),
    { ts: T0 + 3, step: 1, disks: [], psi: { some_us: 5, full_us: 0 } }, // an idle second still had pressure
  ];
  const merged = mergeFrames(seconds, T0, 10);
  assert.deepEqual(merged.psi, { some_us: 1_100_005, full_us: 260_000 });
  assert.equal(frameSchema.safeParse(merged).success, true);
  assert.equal('psi' in mergeFrames([frame(T0), frame(T0 + 1)], T0, 10), false, 'not known: no field');
  // Two merge paths over the same seconds agree (ten-second frames summed into a minute).
  const tens = coarsenFrames(
    Array.from({ length: 60 }, (_, i) => frame(T0 + i, { some_us: 1000 * i, full_us: i })),
    10,
  );
  assert.deepEqual(
    tens.map((f) => f.psi?.some_us),
    [45_000, 145_000, 245_000, 345_000, 445_000, 545_000],
  );
  const minute = mergeFrames(tens, T0, 60);
  assert.deepEqual(minute.psi, { some_us: 1_770_000, full_us: 1770 });
  assert.deepEqual(
    minute,
    coarsenFrames(
      Array.from({ length: 60 }, (_, i) => frame(T0 + i, { some_us: 1000 * i, full_us: i })),
      60,
    )[0],
  );
});

test('filtering by disk or class keeps the host pressure, also when no disk is left', () => {
  const f = frame(T0, { some_us: 7, full_us: 3 });
  assert.deepEqual(filterFrame(f, { disks: ['8:0'] }), { ts: T0, step: 1, disks: [], psi: { some_us: 7, full_us: 3 } });
  assert.deepEqual(filterFrame(f, { classes: ['Read'] }).psi, { some_us: 7, full_us: 3 });
  assert.equal('psi' in filterFrame(frame(T0), { disks: ['7:0'] }), false);
});

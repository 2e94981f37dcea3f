// Snapshot export → import round-trips identical; hostile files give a message, never a throw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, MAX_SNAPSHOT_BYTES, MAX_SPAN_SECONDS, type Snapshot } from '@blkheat/shared-types';
import {
  checkSnapshotSize,
  exportSnapshotText,
  importSnapshotText,
  sliceSnapshot,
  snapshotFileName,
  snapshotFromFrames,
} from '../src/model/snapshot.ts';
import { matchSamples, selectionQuery } from '../src/model/samples.ts';
import { SourceActivity } from '../src/model/activity.ts';
import { SnapshotAssembler, snapshotParts } from '../src/model/snapshotParts.ts';
import { syntheticSource } from './fixtures/synthetic.ts';

const T0 = 1_700_000_000;

test('export → import round-trips identical', () => {
  const snap = syntheticSource().snapshot(T0 + 100, T0 + 160, 'spike on loop0');
  const text = exportSnapshotText(snap);
  const back = importSnapshotText(text);
  assert.ok(back.ok, back.ok ? '' : back.message);
  assert.deepEqual(back.value, snap);
  // Re-exporting what was imported gives the same bytes.
  assert.equal(exportSnapshotText(back.value), text);
  // Re-export of the full range is the snapshot itself.
  assert.equal(sliceSnapshot(back.value, T0 + 100, T0 + 160), back.value);
});

test('a slice keeps exactly the frames and samples of its range, and round-trips', () => {
  const snap = syntheticSource().snapshot(T0, T0 + 60);
  const part = sliceSnapshot(snap, T0 + 10.5, T0 + 20.2);
  assert.deepEqual(part.range, { from: T0 + 10, to: T0 + 21, step: 1 });
  assert.deepEqual(
    part.frames.map((f) => f.ts),
    snap.frames.filter((f) => f.ts >= T0 + 10 && f.ts < T0 + 21).map((f) => f.ts),
  );
  assert.ok(part.samples.every((s) => s.ts_us >= (T0 + 10) * 1e6 && s.ts_us < (T0 + 21) * 1e6));
  const back = importSnapshotText(exportSnapshotText(part));
  assert.ok(back.ok);
  assert.deepEqual(back.value, part);
});

test('snapshotFromFrames builds a valid file', () => {
  const src = syntheticSource();
  const snap = snapshotFromFrames(
    { agent: 'x', host: { hostname: 'h', kernel: 'k' }, schema: src.snapshot(T0, T0 + 1).schema, disks: src.disks },
    src.frames(T0, T0 + 30),
    src.samplesIn(T0, T0 + 30),
    { from: T0 + 5, to: T0 + 25, step: 1 },
    'built in the browser',
  );
  const back = importSnapshotText(exportSnapshotText(snap));
  assert.ok(back.ok, back.ok ? '' : back.message);
  assert.equal(back.value.frames.length, 20);
});

test('hostile and malformed files produce a clear message', () => {
  const good = syntheticSource().snapshot(T0, T0 + 3);
  const cases: [string, RegExp][] = [
    ['', /JSON/],
    ['not json at all', /not a JSON file/],
    ['[]', /not a blkheat snapshot/],
    ['null', /not a blkheat snapshot/],
    ['{"format":"blkheat-snapshot","version":99}', /version 99 is not supported/],
    [
      JSON.stringify({ ...good, frames: [{ ts: T0, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 1, d: [999, 1], q: [] }] }] }] }),
      /bucket index/,
    ],
    [JSON.stringify({ ...good, frames: [...good.frames].reverse() }), /time order/],
    [JSON.stringify({ ...good, disks: [{ dev: '../../etc', name: 'x', kind: 'request', present: true }] }), /MAJ:MIN/],
    [JSON.stringify({ ...good, __proto__: { polluted: true }, extra: 1 }), /extra|Unrecognized|unrecognized/i],
    [JSON.stringify({ ...good, schema: { scale: 3, minIndex: -1, maxIndex: 1 } }), /bucket schema/],
    ['{"format":"blkheat-snapshot","version":1,' + '"x":'.repeat(1) + '['.repeat(5000) + ']'.repeat(5000) + '}', /./],
  ];
  for (const [text, re] of cases) {
    const r = importSnapshotText(text);
    assert.equal(r.ok, false, text.slice(0, 60));
    if (!r.ok) assert.match(r.message, re, text.slice(0, 60));
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.match(checkSnapshotSize(MAX_SNAPSHOT_BYTES + 1) ?? '', /larger than/);
  assert.match(checkSnapshotSize(0) ?? '', /empty/);
  assert.equal(checkSnapshotSize(1000), undefined);
});

test('a snapshot whose frames all lie outside its range, or whose range is too long, is refused with a message that says so', () => {
  const good = syntheticSource().snapshot(T0, T0 + 30);
  assert.ok(good.frames.length > 0);
  // Every frame a day after the range: it would import as an empty snapshot.
  const shifted = { ...good, frames: good.frames.map((f) => ({ ...f, ts: f.ts + 86400 })) };
  const outside = importSnapshotText(JSON.stringify(shifted));
  assert.equal(outside.ok, false);
  if (!outside.ok) {
    assert.match(outside.message, new RegExp(`none of its ${good.frames.length} frames lies inside its range`));
    assert.match(outside.message, /2023-11-14 22:13:20 UTC – 2023-11-14 22:13:50 UTC/, 'names the range');
  }
  // Some frames outside is no reason to refuse (the dashboard shows the range); none at all is an empty snapshot.
  const partly = importSnapshotText(JSON.stringify({ ...good, frames: [...good.frames, { ...good.frames[0]!, ts: T0 + 86400 }] }));
  assert.ok(partly.ok, partly.ok ? '' : partly.message);
  const empty = importSnapshotText(JSON.stringify({ ...good, frames: [] }));
  assert.ok(empty.ok, empty.ok ? '' : empty.message);
  // The range limit is the request span limit, one second over refused, at it accepted.
  const at = importSnapshotText(JSON.stringify({ ...good, range: { ...good.range, to: T0 + MAX_SPAN_SECONDS } }));
  assert.ok(at.ok, at.ok ? '' : at.message);
  const over = importSnapshotText(JSON.stringify({ ...good, range: { ...good.range, to: T0 + MAX_SPAN_SECONDS + 86400 } }));
  assert.equal(over.ok, false);
  if (!over.ok) assert.match(over.message, /range: the snapshot covers 32 days; a snapshot covers at most 31 days/);
});

test('a snapshot cut into parts (worker → page) comes back identical, in parts of bounded size', () => {
  const snap = syntheticSource({ samplesPerClass: 2 }).snapshot(T0, T0 + 600, 'parts');
  const parts = [...snapshotParts(snap, 2000)];
  assert.equal(parts[0]?.t, 'head');
  const frameParts = parts.filter((p) => p.t === 'frames');
  const sampleParts = parts.filter((p) => p.t === 'samples');
  assert.ok(frameParts.length > 5 && sampleParts.length > 5, `cut into many parts (${frameParts.length} + ${sampleParts.length})`);
  // No part much bigger than the budget: ~2000 values is well under 100 kB of JSON.
  for (const p of parts) assert.ok(JSON.stringify(p).length < 100_000, `a part of ${JSON.stringify(p).length} bytes`);
  const back = new SnapshotAssembler();
  assert.equal(back.result(), undefined, 'nothing before the head');
  for (const p of parts) back.add(structuredClone(p));
  assert.deepEqual(back.result(), snap);
  assert.equal(exportSnapshotText(back.result()!), exportSnapshotText(snap), 'same bytes on export');
});

test('what the frames say (disks with I/O, submit timing, cgroup phases) is gathered as the parts arrive, as from the whole snapshot', () => {
  const snap = syntheticSource({ samplesPerClass: 2 }).snapshot(T0, T0 + 600, 'parts');
  // Late frames say more: a disk whose only I/O waits for a request, submit timing, a cgroup's queue phase.
  const frames = snap.frames.map((f, i) => {
    if (i < snap.frames.length - 3) return f;
    const [d0, ...rest] = f.disks;
    const cls = d0!.cls.map((c) => ({ ...c, t: c.d }));
    const frozen = { dev: '8:16', cls: [], inflight: { n: 0, oldest_ns: 0, ios: [], waiting: 2, oldest_wait_ns: 5e9 } };
    return { ...f, disks: [{ ...d0!, cls, cg: [{ g: '/a', n: 1, d: d0!.cls[0]!.d, q: d0!.cls[0]!.q }] }, ...rest, frozen] };
  });
  const late: Snapshot = { ...snap, frames };
  const whole = new SourceActivity();
  whole.note(late.frames);
  assert.ok(whole.has('8:16') && whole.devs().includes('8:16'), 'a disk with only waiting bios has I/O');
  assert.equal(whole.submitTiming, true);
  assert.deepEqual(whole.cgroupPhases, ['queue']);
  const back = new SnapshotAssembler();
  for (const p of snapshotParts(late, 2000)) back.add(structuredClone(p));
  assert.deepEqual(
    { devs: back.activity.devs(), timing: back.activity.submitTiming, phases: back.activity.cgroupPhases },
    { devs: whole.devs(), timing: true, phases: ['queue'] },
  );
  const early = new SnapshotAssembler();
  for (const p of snapshotParts(snap, 2000)) early.add(structuredClone(p));
  assert.deepEqual([early.activity.submitTiming, early.activity.cgroupPhases, early.activity.has('8:16')], [false, [], false]);
});

test('samples of a cell: every match lies in the cell; nothing outside matches', () => {
  const snap = syntheticSource({ samplesPerClass: 20 }).snapshot(T0 + 110, T0 + 140);
  const sel = {
    dev: '7:0',
    from: T0 + 125,
    to: T0 + 126,
    bucketLo: 0,
    bucketHi: 105,
    schema: BUCKET_SCHEMA,
    kind: 'device' as const,
    classes: [],
  };
  const all = matchSamples(snap.samples, selectionQuery(sel)).samples;
  assert.ok(all.length > 0);
  const buckets = new Set<number>();
  for (const s of all) {
    assert.equal(s.dev, '7:0');
    assert.ok(s.ts_us >= (T0 + 125) * 1e6 && s.ts_us < (T0 + 126) * 1e6);
  }
  const q = selectionQuery({ ...sel, bucketLo: 85, bucketHi: 85 });
  for (const s of matchSamples(snap.samples, q).samples) {
    assert.ok(s.d_ns >= q.minNs && s.d_ns <= q.maxNs);
    buckets.add(s.d_ns);
  }
  const limited = matchSamples(snap.samples, selectionQuery(sel), 2);
  assert.equal(limited.samples.length, 2);
  assert.equal(limited.truncated, true);
});

test('file names are safe', () => {
  assert.equal(snapshotFileName('web-1.example', T0), 'blkheat-web-1.example-20231114T221320Z.json');
  assert.equal(snapshotFileName('../../etc/passwd', T0, 'png'), 'blkheat-.._.._etc_passwd-20231114T221320Z.png');
});

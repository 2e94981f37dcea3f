// `blkheat record` output, from frames: interval grouping, text histograms, NDJSON lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundsMicros, bucketOfNs, type Frame, type IoSample } from '@blkheat/shared-types';
import { recordLine, triples } from '../src/record/format-json.js';
import { foldedRows, formatIntervalText } from '../src/record/format-text.js';
import { IntervalGrouper } from '../src/record/intervals.js';

const b5ms = bucketOfNs(5_000_000);
const frame = (ts: number, n: number): Frame => ({
  ts,
  step: 1,
  disks: [{ dev: '7:0', cls: [{ c: 'Read', n, d: [b5ms, n], q: [0, n] }], dropped: n - 1 }],
});
const sample = (ts: number): IoSample => ({
  ts_us: ts * 1e6 + 5,
  dev: '7:0',
  c: 'Read',
  sector: 0,
  bytes: 4096,
  q_ns: 1,
  d_ns: 5e6,
  pid: 1,
  comm: 'dd',
  cgroup: 1,
  outlier: true,
});

test('intervals are wall-clock aligned, whole, and carry their samples', () => {
  const g = new IntervalGrouper(5, 1795290003);
  const out = [];
  for (let ts = 1795290003; ts < 1795290016; ts++) {
    g.addSamples([sample(ts)]);
    const i = g.addFrame(frame(ts, 2));
    if (i) out.push(i);
  }
  assert.deepEqual(
    out.map((i) => [i.frame.ts, i.frame.step, i.frame.disks[0]?.cls[0]?.n, i.samples.length]),
    [
      [1795290005, 5, 10, 5],
      [1795290010, 5, 10, 5],
    ],
    'the partial interval before 1795290005 is not reported',
  );
});

test('NDJSON line: version, interval, per class [lower_us, upper_us, count] buckets, samples', () => {
  const names = new Map([['7:0', 'loop0']]);
  const line = recordLine(frame(1795290000, 3), names, 1, [sample(1795290000)]);
  assert.equal(line.v, 5);
  assert.equal(line.disks[0]?.name, 'loop0');
  assert.equal(line.dropped, 2);
  const [lo, hi] = boundsMicros(b5ms);
  assert.deepEqual(line.disks[0]?.classes[0]?.device, [[Math.round(lo * 1e4) / 1e4, Math.round(hi * 1e4) / 1e4, 3]]);
  assert.equal(line.samples?.length, 1);
  assert.deepEqual(triples([105, 1])[0]?.[1], null, 'overflow has no upper bound');
  assert.equal(recordLine(frame(1795290000, 3), names, 1).samples, undefined, 'no samples unless asked');
});

test('format 2: untimed, requeues, in flight, errors by status and passthrough classes, in NDJSON and text', () => {
  const f: Frame = {
    ts: 1795290000,
    step: 1,
    disks: [
      {
        dev: '7:0',
        cls: [
          { c: 'DrvIn', n: 2, d: [b5ms, 2], q: [], pt: true },
          { c: 'Read', n: 5, d: [b5ms, 5], q: [], e: { IOERR: 3 } },
        ],
        requeues: 4,
        untimed: { write: 1 },
        inflight: {
          n: 1,
          oldest_ns: 20e9,
          ios: [{ c: 'Read', pid: 7, comm: 'dd', sector: 8, bytes: 4096, age_ns: 20e9, dev_age_ns: 19e9 }],
        },
      },
    ],
  };
  const names = new Map([['7:0', 'loop0']]);
  const line = recordLine(f, names, 1);
  const disk = line.disks[0];
  assert.deepEqual(disk?.untimed, { write: 1 });
  assert.equal(disk?.requeues, 4);
  assert.equal(disk?.inflight?.ios[0]?.comm, 'dd');
  assert.deepEqual(disk?.classes[0]?.passthrough, true);
  assert.deepEqual(disk?.classes[1]?.errors, { IOERR: 3 });
  assert.equal(disk?.classes[1]?.passthrough, undefined);
  const text = formatIntervalText(f, names, 1, { queued: false });
  assert.match(text, /untimed 1 write, 4 requeued, 1 in flight, oldest 20\.0 s/);
  assert.match(text, /DrvIn \(passthrough, not in diskstats\)/);
  assert.match(text, /Read \(failed: 3 IOERR\)/);
});

test('text histograms fold to a readable height and label bounds', () => {
  const wide: number[] = [];
  for (let b = 10; b < 100; b++) wide.push(b, 1);
  const rows = foldedRows(wide, 24);
  assert.ok(rows.length <= 24);
  assert.equal(
    rows.reduce((n, r) => n + r.count, 0),
    90,
    'folding keeps every I/O',
  );
  // Two classes over other ranges fold to powers of two from aligned buckets: each bound of the
  // coarser table inside the finer one's range is one of its bounds, so the tables line up.
  const narrow: number[] = [];
  for (let b = 37; b < 70; b++) narrow.push(b, 2);
  const a = foldedRows(wide, 24);
  const b = foldedRows(narrow, 24);
  const finer = new Set(b.map((r) => r.lowerUs));
  const [bFrom, bTo] = [b[0]?.lowerUs ?? 0, b.at(-1)?.lowerUs ?? 0];
  const inside = a.map((r) => r.lowerUs).filter((lo) => lo >= bFrom && lo <= bTo);
  assert.ok(inside.length >= 4, 'the ranges overlap');
  assert.deepEqual(
    inside.filter((lo) => !finer.has(lo)),
    [],
    'bounds of the coarser table that the finer one lacks',
  );
  assert.ok(b.length <= 24 && b.reduce((n, r) => n + r.count, 0) === 66, 'the narrow one keeps every I/O');
  const text = formatIntervalText(frame(1795290000, 7), new Map([['7:0', 'loop0']]), 1, { queued: true });
  assert.match(text, /disk = loop0 \(7:0\) {2}\[6 not sampled\]/);
  assert.match(text, /Read {2}device latency {2}count 7 {2}p50 5\.\d+ ms {2}p99 5\.\d+ ms/);
  assert.match(text, /Read {2}queue latency/);
  assert.match(formatIntervalText({ ts: 1795290000, step: 1, disks: [] }, new Map(), 1, { queued: false }), /no block I\/O completed/);
});

test('format 4: submit wait, total and unseen submissions per class, causes, wbt and queue changes and waiting bios per disk, in NDJSON and text', () => {
  const b1ms = bucketOfNs(1_000_000);
  const b6ms = bucketOfNs(6_000_000);
  const b30s = bucketOfNs(30e9);
  const f: Frame = {
    ts: 1795290000,
    step: 1,
    disks: [
      {
        dev: '7:0',
        cls: [{ c: 'Read', n: 5, d: [b5ms, 5], q: [0, 5], w: [0, 1, b1ms, 3], t: [b6ms, 4], wu: 1 }],
        causes: { frozen: 3 },
        wbt: 6,
        queue_changed: ['scheduler'],
        inflight: { n: 0, oldest_ns: 0, ios: [], waiting: 7, oldest_wait_ns: 30e9, frozen: true },
      },
      { dev: '253:0', cls: [{ c: 'Write', n: 2, d: [b30s, 2], q: [] }] },
    ],
  };
  const names = new Map([
    ['7:0', 'loop0'],
    ['253:0', 'dm-0'],
  ]);
  const line = recordLine(f, names, 1);
  const [disk, bio] = line.disks;
  const read = disk?.classes[0];
  const triple = (b: number, n: number): [number, number, number] => {
    const [lo, hi] = boundsMicros(b);
    return [Math.round(lo * 1e4) / 1e4, Math.round(hi * 1e4) / 1e4, n];
  };
  assert.deepEqual(read?.submit, [triple(0, 1), triple(b1ms, 3)]);
  assert.deepEqual(read?.total, [triple(b6ms, 4)]);
  assert.equal(read?.submit_unknown, 1);
  assert.deepEqual(disk?.causes, { frozen: 3 });
  assert.equal(disk?.wbt, 6);
  assert.deepEqual(disk?.queue_changed, ['scheduler']);
  assert.deepEqual(disk?.inflight, { n: 0, oldest_ns: 0, ios: [], waiting: 7, oldest_wait_ns: 30e9, frozen: true });
  const write = bio?.classes[0];
  assert.deepEqual(
    [write?.submit, write?.total, write?.submit_unknown, bio?.causes],
    [undefined, undefined, undefined, undefined],
    'a bio-based disk has none',
  );

  const text = formatIntervalText(f, names, 1, { queued: true });
  assert.match(
    text,
    /disk = loop0 \(7:0\) {2}\[7 waiting for a request, oldest 30\.0 s, queue frozen, 3 waited on a frozen queue, wbt held writes back in 6 windows, queue\/scheduler changed\]/,
  );
  assert.match(text, /Read \(1 submission not seen\) {2}submit wait latency {2}count 4 {2}p50 \d/);
  assert.match(text, /Read \(1 submission not seen\) {2}total latency {2}count 4 {2}p50 6\.\d+ ms/);
  assert.doesNotMatch(text, /Write.*(submit wait|total) latency/, 'no submit wait or total for the bio-based disk');
  const plain = formatIntervalText(f, names, 1, { queued: false });
  assert.doesNotMatch(plain, /submit wait latency|total latency/, 'shown with the queue histograms (-Q) only');
  assert.match(plain, /Read {2}device latency {2}count 5/);
});

test('format 4: the host I/O pressure per line, summed over an interval; absent when not known', () => {
  const g = new IntervalGrouper(5, 1795290000);
  let out;
  for (let ts = 1795290000; ts < 1795290005; ts++) {
    // The first second has none (the agent's first read), the others 100 ms of some, 20 ms of full.
    const f = frame(ts, 1);
    out = g.addFrame(ts === 1795290000 ? f : { ...f, psi: { some_us: 100_000, full_us: 20_000 } });
  }
  assert.ok(out);
  const line = recordLine(out.frame, new Map(), 5);
  assert.deepEqual(line.psi, { some_us: 400_000, full_us: 80_000 });
  assert.match(JSON.stringify(line), /"dropped":0,"psi":\{"some_us":400000,"full_us":80000\}/);
  assert.equal('psi' in recordLine(frame(1795290000, 1), new Map(), 1), false, 'not known: no field');
});

// Sampled I/Os on disk (SampleArchive): the record format, answers with the same meaning as the
// in-memory ring's (checked against the ring on the same samples), paging, a restart, thinning
// with age as the history's tiers, the byte bound, and SampleSource choosing between the two.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type IoSample, sizeClassOf } from '@blkheat/shared-types';
import { ARCHIVE_CURSOR_BASE, SampleArchive, type SampleArchiveOptions } from '../src/history/sample-archive.js';
import { encodeSampleRecord, SampleRecordError, SampleRecordReader } from '../src/history/sample-record.js';
import { SampleSource } from '../src/history/sample-source.js';
import { SampleStore, type SampleQuery } from '../src/history/samples.js';
import { randomSample, rng } from './history-fixtures.js';

const T0 = 1_750_000_000;
/** Short segments (1 s tier 60 s, 10 s tier 600 s, 60 s tier 3600 s), so retention acts within a test. */
const SPANS: [number, number, number] = [60, 600, 3600];
const BUDGET = 40;

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-samples-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An archive on a clock the test moves, and a way to record `seconds` seconds of samples from `from`. */
function archiveAt(dir: string, clock: { now: number }, over: Partial<SampleArchiveOptions> = {}) {
  const archive = SampleArchive.open({
    dir,
    historySeconds: 7200,
    maxBytes: 1024 ** 3,
    budgetPerSecond: BUDGET,
    segmentSpans: SPANS,
    now: () => clock.now,
    ...over,
  });
  return archive;
}

/** Records BUDGET samples a second for [from, from + seconds) into every store given; returns them all. */
function feed(
  seed: number,
  from: number,
  seconds: number,
  clock: { now: number },
  ...sinks: { add(s: readonly IoSample[]): void; record?(ts: number): void }[]
): IoSample[] {
  const r = rng(seed);
  const all: IoSample[] = [];
  for (let ts = from; ts < from + seconds; ts++) {
    const batch = Array.from({ length: BUDGET }, (_, i) => {
      const s = randomSample(r, ts * 1e6 + i * 20_000 + Math.floor(r() * 1000));
      return i % 7 === 0 ? { ...s, cg: `/system.slice/unit-${i}.service` } : s;
    });
    all.push(...batch);
    clock.now = ts + 1;
    for (const sink of sinks) {
      sink.add(batch);
      sink.record?.(ts);
    }
  }
  return all;
}

test('a record holds every field of its samples, and a record that does not add up is refused', () => {
  const r = rng(5);
  const samples: IoSample[] = Array.from({ length: 300 }, (_, i) => randomSample(r, T0 * 1e6 + i));
  samples.push({ ...samples[0]!, sector: null, comm: 'κworker/ü:1', cg: '/a/b', w_ns: null, q_ns: null, pid: 4_294_967_295 });
  const { payload, kept, dropped } = encodeSampleRecord(samples);
  assert.equal(kept, samples.length);
  assert.equal(dropped, 0);
  const reader = new SampleRecordReader(payload);
  assert.equal(reader.count, samples.length);
  assert.deepEqual(
    Array.from({ length: reader.count }, (_, i) => reader.sample(i)),
    samples,
  );
  assert.ok(payload.length < samples.length * 80, `${payload.length} bytes for ${samples.length} samples`);

  const wrongVersion = Buffer.from(payload);
  wrongVersion[0] = 2;
  assert.throws(
    () => new SampleRecordReader(wrongVersion),
    (e) => e instanceof SampleRecordError && /version 2/.test(e.message),
  );
  assert.throws(() => new SampleRecordReader(payload.subarray(0, payload.length - 3)), SampleRecordError);
  assert.throws(() => new SampleRecordReader(payload.subarray(0, 2)), SampleRecordError);
  const badRef = Buffer.from(payload);
  badRef.writeUInt16LE(60_000, badRef.length - 9); // the last row's disk names a string the table does not have
  assert.throws(
    () => new SampleRecordReader(badRef),
    (e) => e instanceof SampleRecordError && /names string 60000/.test(e.message),
  );
});

test('the archive answers as the ring does (same samples, same spread), pages with a cursor, and again after a restart', (t) => {
  const dir = tempDir(t);
  const clock = { now: T0 - 5 };
  const archive = archiveAt(dir, clock);
  const ring = new SampleStore({ capacity: 100_000, windowSeconds: 3600, now: () => clock.now });
  // Kept since it began recording, not since its first sample: a quiet second had none taken.
  assert.deepEqual(archive.keptFor(T0 - 3), { step: 1, since: T0 - 5 });
  const all = feed(1, T0, 150, clock, archive, ring);
  const queries: SampleQuery[] = [
    { from: T0, to: T0 + 150, limit: 100_000 },
    { from: T0 + 10, to: T0 + 20, kind: 'device', minNs: 1_000_000, maxNs: 9_000_000, limit: 5000 },
    { from: T0, to: T0 + 150, kind: 'queue', maxNs: 500_000, disks: ['7:0'], limit: 5000 },
    { from: T0 + 50, to: T0 + 70, classes: ['Flush', 'Read'], disks: ['8:0', '253:0'], limit: 5000 },
    { from: T0, to: T0 + 150, kind: 'total', minNs: 4_000_000, limit: 5000 },
    { from: T0, to: T0 + 150, kind: 'submit', limit: 300, pick: 'spread' },
    { from: T0 + 30, to: T0 + 130, limit: 500, pick: 'spread', disks: ['7:1'] },
  ];
  /** `since`: when recording began (T0 - 5); after a restart, the first second on disk (T0). */
  const check = (a: SampleArchive, since: number): void => {
    for (const q of queries) {
      const want = ring.query(q);
      const got = a.query(q);
      assert.ok(want.samples.length > 20, `${want.samples.length} samples match ${JSON.stringify(q)}`);
      assert.deepEqual(got.samples, want.samples, JSON.stringify(q));
      assert.equal(got.truncated, want.truncated, JSON.stringify(q));
      assert.equal(got.matched, want.matched);
      assert.deepEqual(got.kept, { step: 1, since });
    }
    const whole = a.query({ from: T0, to: T0 + 150, limit: 100_000 }).samples;
    assert.deepEqual(whole, all);
    // Pages of 777 read through `after` are the whole answer, each once.
    const pages: IoSample[] = [];
    let after: number | undefined;
    for (let n = 0; n < 100; n++) {
      const page = a.query({ from: T0 + 3, to: T0 + 140, limit: 777, ...(after !== undefined ? { after } : {}) });
      assert.ok(page.next >= ARCHIVE_CURSOR_BASE);
      pages.push(...page.samples);
      after = page.next;
      if (!page.truncated) break;
    }
    assert.deepEqual(
      pages,
      all.filter((s) => s.ts_us >= (T0 + 3) * 1e6 && s.ts_us < (T0 + 140) * 1e6),
    );
  };
  check(archive, T0 - 5);
  archive.close();
  const reopened = archiveAt(dir, clock);
  t.after(() => reopened.close());
  check(reopened, T0);
});

test('cgroup and size class filters (protocol 5) answer exactly the matching samples, from the ring and from the disk', (t) => {
  const dir = tempDir(t);
  const clock = { now: T0 };
  const archive = archiveAt(dir, clock);
  t.after(() => archive.close());
  const ring = new SampleStore({ capacity: 100_000, windowSeconds: 3600, now: () => clock.now });
  const all = feed(9, T0, 60, clock, archive, ring);
  const cgroups = ['/system.slice/unit-0.service', '/system.slice/unit-14.service', '/none'];
  const sizeClasses = [12, 15, 16];
  const cases: [SampleQuery, (s: IoSample) => boolean][] = [
    [{ from: T0, to: T0 + 60, cgroups, limit: 100_000 }, (s) => s.cg !== undefined && cgroups.includes(s.cg)],
    [{ from: T0, to: T0 + 60, sizeClasses, limit: 100_000 }, (s) => sizeClasses.includes(sizeClassOf(s.bytes))],
    [
      { from: T0 + 10, to: T0 + 50, cgroups, sizeClasses, classes: ['Read'], limit: 100_000 },
      (s) =>
        s.c === 'Read' &&
        s.cg !== undefined &&
        cgroups.includes(s.cg) &&
        sizeClasses.includes(sizeClassOf(s.bytes)) &&
        s.ts_us >= (T0 + 10) * 1e6 &&
        s.ts_us < (T0 + 50) * 1e6,
    ],
    [{ from: T0, to: T0 + 60, cgroups: ['/nowhere'], limit: 100_000 }, () => false],
  ];
  for (const [q, keep] of cases) {
    const want = all.filter(keep);
    assert.ok(q.cgroups?.[0] === '/nowhere' || want.length > 5, `${want.length} samples match ${JSON.stringify(q)}`);
    assert.deepEqual(ring.query(q).samples, want, `ring: ${JSON.stringify(q)}`);
    assert.deepEqual(archive.query(q).samples, want, `disk: ${JSON.stringify(q)}`);
  }
});

test('older seconds are thinned as the history coarsens: outliers first, budget / step a second, kept for all of --history', (t) => {
  const dir = tempDir(t);
  const clock = { now: T0 };
  const archive = archiveAt(dir, clock, { historySeconds: 3 * 3600 });
  t.after(() => archive.close());
  const all = feed(2, T0, 300, clock, archive);
  // Two hours on: the 1 s tier's segments of those seconds are past its hour and deleted (all
  // but the one being written, as for frames).
  clock.now = T0 + 2 * 3600;
  archive.enforceBounds();
  const fineLeft = readdirSync(dir).filter((n) => n.startsWith('s1-'));
  assert.deepEqual(fineLeft, ['s1-1750000260.seg'], readdirSync(dir).join(' '));
  const answer = archive.query({ from: T0, to: T0 + 300, limit: 100_000 });
  assert.deepEqual(answer.kept, { step: 10, since: T0 });
  const byKey = new Map(all.map((s) => [`${s.ts_us}/${s.sector}`, s]));
  for (const s of answer.samples) assert.deepEqual(s, byKey.get(`${s.ts_us}/${s.sector}`), 'a kept sample is one recorded, unchanged');
  for (let ts = T0; ts < T0 + 300; ts++) {
    const inSecond = (s: IoSample): boolean => Math.floor(s.ts_us / 1e6) === ts;
    const kept = answer.samples.filter(inSecond);
    const outliers = all.filter((s) => inSecond(s) && s.outlier);
    assert.ok(kept.length <= BUDGET / 10, `second ${ts}: ${kept.length} kept`);
    // Outliers go first: all of them while they fit.
    const keptOutliers = kept.filter((s) => s.outlier).length;
    assert.equal(keptOutliers, Math.min(outliers.length, BUDGET / 10), `second ${ts}`);
  }
  assert.ok(answer.samples.length >= 300, `${answer.samples.length} samples kept of ${all.length}`);
  // Past --history (3 h) nothing of them is left in any tier.
  clock.now = T0 + 3 * 3600 + 3600 + 60;
  feed(3, clock.now, 2, clock, archive);
  archive.enforceBounds();
  const gone = archive.query({ from: T0, to: T0 + 300, limit: 100 });
  assert.equal(gone.samples.length, 0);
  assert.ok(gone.kept.since !== null && gone.kept.since > T0 + 300, `kept since ${gone.kept.since}`);
});

test('the byte bound deletes the oldest segments of the largest tier', (t) => {
  const dir = tempDir(t);
  const clock = { now: T0 };
  const maxBytes = 400_000;
  const archive = archiveAt(dir, clock, { maxBytes });
  t.after(() => archive.close());
  feed(4, T0, 600, clock, archive);
  archive.enforceBounds();
  const stats = archive.stats();
  assert.ok(stats.bytes <= maxBytes, `${stats.bytes} bytes`);
  const fine = stats.tiers.find((s) => s.step === 1);
  assert.ok(fine?.from !== undefined && fine.from > T0, `the 1 s tier starts at ${fine?.from}`);
  // What is left still answers, and says since when.
  const answer = archive.query({ from: T0, to: T0 + 600, limit: 100_000 });
  const answering = stats.tiers.find((s) => s.step === answer.kept.step);
  assert.ok(answer.kept.step > 1, 'the oldest seconds are answered from a coarser tier');
  assert.equal(answer.kept.since, answering?.from, 'and the answer says since when it holds them');
  assert.ok(answer.samples.length > 0);
});

test('a torn record at the end of a segment is cut off on open; everything before it is kept', (t) => {
  const dir = tempDir(t);
  const clock = { now: T0 };
  const archive = archiveAt(dir, clock);
  const all = feed(6, T0, 20, clock, archive);
  archive.close();
  const fine = readdirSync(dir).find((n) => n.startsWith('s1-')) as string;
  appendFileSync(join(dir, fine), Buffer.from([200, 1, 0, 0, 9, 9]));
  const logs: string[] = [];
  const reopened = archiveAt(dir, clock, { log: (l) => logs.push(l) });
  t.after(() => reopened.close());
  assert.ok(
    logs.some((l) => /dropped a torn tail of 6 bytes/.test(l)),
    logs.join('\n'),
  );
  assert.deepEqual(reopened.query({ from: T0, to: T0 + 20, limit: 100_000 }).samples, all);
});

test('SampleSource: the ring while it holds every sample of the seconds asked, the disk before that; cursors keep their source', (t) => {
  const dir = tempDir(t);
  const clock = { now: T0 };
  const archive = archiveAt(dir, clock);
  t.after(() => archive.close());
  // A ring of 2,000: it holds the last 50 seconds of the 120 recorded.
  const ring = new SampleStore({ capacity: 2000, windowSeconds: 3600, now: () => clock.now });
  const source = new SampleSource(ring, archive, BUDGET);
  const all = feed(7, T0, 120, clock, archive, ring);
  const recent = source.query({ from: T0 + 80, to: T0 + 120, limit: 100_000 });
  assert.deepEqual(
    recent.samples,
    all.filter((s) => s.ts_us >= (T0 + 80) * 1e6),
    'recent seconds: from the ring',
  );
  assert.deepEqual(recent.kept, { step: 1, since: T0, budget: BUDGET });
  const old = source.query({ from: T0, to: T0 + 120, limit: 100_000 });
  assert.deepEqual(old.samples, all, 'seconds the ring let go: from the disk, all of them');
  assert.deepEqual(old.kept, { step: 1, since: T0, budget: BUDGET });
  const first = source.query({ from: T0, to: T0 + 120, limit: 1000 });
  assert.ok(first.truncated && first.next >= ARCHIVE_CURSOR_BASE);
  const second = source.query({ from: T0, to: T0 + 120, limit: 1000, after: first.next });
  assert.deepEqual([...first.samples, ...second.samples], all.slice(0, 2000));

  // A restart: a new ring holds none of the earlier run's seconds, which come from the disk
  // even though the new ring has let nothing go; the new run's seconds from the new ring.
  const ring2 = new SampleStore({ capacity: 2000, windowSeconds: 3600, now: () => clock.now });
  const restarted = new SampleSource(ring2, archive, BUDGET);
  const later = feed(8, T0 + 130, 10, clock, ring2);
  assert.deepEqual(
    restarted.query({ from: T0 + 100, to: T0 + 120, limit: 100_000 }).samples,
    all.filter((s) => s.ts_us >= (T0 + 100) * 1e6),
  );
  assert.deepEqual(restarted.query({ from: T0 + 130, to: T0 + 140, limit: 100_000 }).samples, later, 'the new run: from its ring');

  // Without an archive (--samples-budget 0, or one that could not open) the ring says what it holds.
  const ringOnly = new SampleSource(ring, undefined, BUDGET);
  const answer = ringOnly.query({ from: T0, to: T0 + 10, limit: 10 });
  assert.equal(answer.samples.length, 0);
  assert.ok(answer.kept.since !== null && answer.kept.since > T0 + 10, `ring holds since ${answer.kept.since}`);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coarsenFrames, FINE_BUCKET_SCHEMA, sparseTotal, type Frame } from '@blkheat/shared-types';
import { HistorySchemaError, HistoryStore, tierSpecs } from '../src/history/store.js';
import { parseAll } from '../src/history/range-read.js';
import { randomFrames } from './history-fixtures.js';
import { mountTmpfs } from '@blkheat/testkit';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-history-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A clock the test moves; history's retention decisions use it. */
function clock(start: number): { now: () => number; set(v: number): void } {
  let v = start;
  return { now: () => v, set: (x) => (v = x) };
}

function open(
  dir: string,
  now: () => number,
  extra: Partial<{ historySeconds: number; maxBytes: number; log: (l: string) => void }> = {},
): HistoryStore {
  return HistoryStore.open({ dir, historySeconds: 24 * 3600, maxBytes: 1 << 30, now, ...extra });
}

function readAll(store: HistoryStore, step: number): Frame[] {
  return parseAll(store.read(step, 0, 2 ** 32));
}

const BASE = 1_750_000_000 - (1_750_000_000 % 3600); // an hour boundary

test('frames read back as written, and coarse tiers equal the exact sum of their seconds', (t) => {
  const dir = tempDir(t);
  const frames = randomFrames(1, BASE + 5, 200);
  const store = open(dir, () => BASE + 205);
  t.after(() => store.close());
  for (const f of frames) assert.equal(store.append(f), true);

  assert.deepEqual(readAll(store, 1), frames);
  assert.equal(store.newestTs, BASE + 204);
  for (const step of [10, 60]) {
    // Written buckets plus the open (partial) one, exactly as merging the seconds gives.
    assert.deepEqual(readAll(store, step), coarsenFrames(frames, step), `tier ${step} s`);
  }
  const sub = parseAll(store.read(1, BASE + 50, BASE + 60));
  assert.deepEqual(sub, frames.slice(45, 55));
});

test('protocol 4 fields (w, t, wu, causes, waiting bios) round-trip through every tier and a restart', (t) => {
  const dir = tempDir(t);
  const frames = randomFrames(11, BASE + 5, 130, { submit: true });
  const wOf = (fs: readonly Frame[]): number =>
    fs.reduce((n, f) => n + f.disks.reduce((x, d) => x + d.cls.reduce((y, c) => y + sparseTotal(c.w ?? []) + (c.wu ?? 0), 0), 0), 0);
  const first = open(dir, () => BASE + 140);
  for (const f of frames.slice(0, 70)) assert.equal(first.append(f), true);
  first.close();
  const store = open(dir, () => BASE + 140);
  t.after(() => store.close());
  for (const f of frames.slice(70)) assert.equal(store.append(f), true);
  assert.deepEqual(readAll(store, 1), frames);
  for (const step of [10, 60]) {
    const tier = readAll(store, step);
    assert.deepEqual(tier, coarsenFrames(frames, step), `tier ${step} s`);
    assert.equal(wOf(tier), wOf(frames), `tier ${step} s keeps every submit wait`);
  }
  assert.ok(wOf(frames) > 100, `${wOf(frames)} I/Os with a submit wait or an unseen submission`);
  assert.ok(
    frames.some((f) => f.disks.some((d) => d.causes && d.inflight?.waiting)),
    'causes and waiting bios are in the data',
  );
});

test('frames at or before the newest second are refused; the files stay ordered', (t) => {
  const dir = tempDir(t);
  const store = open(dir, () => BASE + 100);
  t.after(() => store.close());
  const [a, b] = randomFrames(2, BASE + 10, 2) as [Frame, Frame];
  assert.equal(store.append(b), true);
  assert.equal(store.append(a), false);
  assert.equal(store.append(b), false);
  assert.deepEqual(readAll(store, 1), [b]);
});

test('a restart serves the same history, and the coarse tiers continue exactly', (t) => {
  const dir = tempDir(t);
  const frames = randomFrames(3, BASE + 1, 150);
  const first = open(dir, () => BASE + 100);
  for (const f of frames.slice(0, 95)) first.append(f);
  first.close(); // the open 10 s / 60 s buckets are not written: rebuilt from the 1 s tier

  const second = open(dir, () => BASE + 200);
  t.after(() => second.close());
  assert.deepEqual(readAll(second, 1), frames.slice(0, 95));
  for (const f of frames.slice(95)) second.append(f);
  assert.deepEqual(readAll(second, 1), frames);
  for (const step of [10, 60]) assert.deepEqual(readAll(second, step), coarsenFrames(frames, step), `tier ${step} s after restart`);
});

test('a torn tail (crash mid-write) is cut off and nothing before it is lost', (t) => {
  const dir = tempDir(t);
  const frames = randomFrames(4, BASE, 120, { idle: 0 });
  const store = open(dir, () => BASE + 120);
  for (const f of frames) store.append(f);
  store.close();
  const seg = join(dir, `t1-${BASE}.seg`);
  const size = statSync(seg).size;
  const lastLen = Buffer.byteLength(JSON.stringify(frames[frames.length - 1])) + 12;
  // Cut in the middle of the last record, as a kill -9 during write() could.
  truncateSync(seg, size - Math.floor(lastLen / 2));

  const logs: string[] = [];
  const reopened = open(dir, () => BASE + 130, { log: (l) => logs.push(l) });
  t.after(() => reopened.close());
  assert.deepEqual(readAll(reopened, 1), frames.slice(0, -1));
  assert.ok(
    logs.some((l) => l.includes('torn tail')),
    `the recovery is reported: ${logs.join(' | ')}`,
  );
  assert.equal(statSync(seg).size, size - lastLen, 'the file is cut back to the last whole record');
  // Recording continues after the recovered tail.
  const next = randomFrames(5, BASE + 120, 3);
  for (const f of next) assert.equal(reopened.append(f), true);
  assert.deepEqual(readAll(reopened, 1), [...frames.slice(0, -1), ...next]);
});

test('garbage after the last record and a bad checksum are both detected', (t) => {
  const dir = tempDir(t);
  const frames = randomFrames(6, BASE, 60, { idle: 0 });
  const s1 = open(dir, () => BASE + 60);
  for (const f of frames) s1.append(f);
  s1.close();
  const seg = join(dir, `t1-${BASE}.seg`);
  appendFileSync(seg, Buffer.from([0x10, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
  const s2 = open(dir, () => BASE + 60);
  assert.deepEqual(readAll(s2, 1), frames);
  s2.close();

  // Flip one byte inside record 40's payload: records 40.. are dropped, 0..39 kept.
  const buf = readFileSync(seg);
  let pos = 8;
  pos += 12 + buf.readUInt32LE(pos); // header record
  for (let i = 0; i < 40; i++) pos += 12 + buf.readUInt32LE(pos);
  buf[pos + 12 + 5] = (buf[pos + 12 + 5] as number) ^ 0xff;
  writeFileSync(seg, buf);
  const logs: string[] = [];
  const s3 = open(dir, () => BASE + 60, { log: (l) => logs.push(l) });
  t.after(() => s3.close());
  assert.deepEqual(readAll(s3, 1), frames.slice(0, 40));
  assert.ok(logs.some((l) => l.includes('checksum')));
});

test('a file that is not a segment is left alone and ignored', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, `t1-${BASE}.seg`), 'not a segment at all');
  const logs: string[] = [];
  const store = open(dir, () => BASE + 10, { log: (l) => logs.push(l) });
  t.after(() => store.close());
  assert.equal(store.newestTs, undefined);
  assert.ok(logs.some((l) => l.includes('bad magic')));
  assert.equal(readFileSync(join(dir, `t1-${BASE}.seg`), 'utf8'), 'not a segment at all');
});

test('retention deletes whole old segments; the 1 s tier keeps at least an hour', (t) => {
  const dir = tempDir(t);
  const c = clock(BASE);
  const store = open(dir, c.now, { historySeconds: 3 * 3600 });
  t.after(() => store.close());
  // 4 hours of mostly idle seconds.
  const frames = randomFrames(7, BASE, 4 * 3600, { idle: 0.97 });
  for (const f of frames) {
    c.set(f.ts + 1);
    store.append(f);
  }
  store.enforceBounds();
  const now = c.now();
  const fine = store.stats().tiers.find((x) => x.step === 1);
  assert.ok(fine?.from !== undefined && fine.from <= now - 3600, `1 s tier starts at ${fine?.from}, now ${now}`);
  assert.ok(fine.from > now - 3600 - 600, '1 s tier holds no more than an hour and a segment');
  for (const step of [10, 60]) {
    const tier = store.stats().tiers.find((x) => x.step === step);
    const span = tierSpecs(3 * 3600).find((s) => s.step === step)?.span ?? 0;
    assert.ok(tier?.from !== undefined && tier.from <= now - 3 * 3600 + span, `${step} s tier covers the history window`);
  }
  const names = readdirSync(dir).filter((n) => n.startsWith('t1-'));
  assert.ok(names.length <= 7, `at most 7 segments of 10 min in the 1 s tier, found ${names.length}`);
});

test('the byte budget is kept by deleting the oldest segments of the largest tier', (t) => {
  const dir = tempDir(t);
  const c = clock(BASE);
  const maxBytes = 3 * 1024 * 1024;
  const logs: string[] = [];
  const store = open(dir, c.now, { maxBytes, log: (l) => logs.push(l) });
  t.after(() => store.close());
  const frames = randomFrames(8, BASE, 3 * 3600, { idle: 0, density: 0.2 });
  for (const f of frames) {
    c.set(f.ts + 1);
    store.append(f);
  }
  store.enforceBounds();
  const onDisk = readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  // The rule: under budget, or nothing left to delete but the segments being written.
  const tiers = store.stats().tiers;
  assert.ok(
    onDisk <= maxBytes || tiers.every((x) => x.segments === 1),
    `files take ${onDisk} bytes with a budget of ${maxBytes}: ${JSON.stringify(tiers)}`,
  );
  assert.ok(onDisk < 3 * 3600 * 2000, 'far less than everything written was kept');
  assert.equal(store.stats().bytes, onDisk, 'stats() agrees with the files');
  assert.ok(logs.some((l) => l.includes('budget')));
  assert.equal(store.newestTs, frames[frames.length - 1]?.ts, 'the newest data is always kept');
});

test('leftovers of interrupted segment creations (empty file, torn magic or header, *.seg.new) are removed at start, and those segments are written anew', (t) => {
  const dir = tempDir(t);
  const logs: string[] = [];
  // Where the first frames' segments go: an empty file (what an older version's exclusive create
  // left when it failed on a full disk; kept, it would refuse every later create), a torn header,
  // and a temp file.
  const fine = join(dir, `t1-${BASE}.seg`);
  const ten = join(dir, `t10-${BASE - (BASE % 7200)}.seg`);
  writeFileSync(fine, '');
  writeFileSync(ten, Buffer.concat([Buffer.from('BLKHIST1', 'latin1'), Buffer.from([40, 0, 0])]));
  writeFileSync(join(dir, `t60-${BASE - (BASE % 43200)}.seg.new`), 'BLK');
  // Not ours: left alone.
  writeFileSync(join(dir, `t1-${BASE - 600}.seg`), 'something else entirely');
  const store = open(dir, () => BASE + 30, { log: (l) => logs.push(l) });
  t.after(() => store.close());
  assert.deepEqual(readdirSync(dir).sort(), [`t1-${BASE - 600}.seg`], `the leftovers are gone: ${logs.join(' | ')}`);
  const frames = randomFrames(3, BASE, 20, { idle: 0 });
  for (const f of frames) assert.equal(store.append(f), true);
  assert.equal(store.health().fault, undefined);
  assert.deepEqual(readAll(store, 1), frames);
  assert.ok(statSync(fine).size > 0 && statSync(ten).size > 0);
  assert.ok(logs.some((l) => l.includes('empty')) && logs.some((l) => l.includes('torn')) && logs.some((l) => l.includes('.seg.new')));
});

test('a history that cannot be written reports the fault with the file, counts what it lost, and recovers by itself', (t) => {
  const dir = tempDir(t);
  const c = clock(BASE);
  const logs: string[] = [];
  const store = open(dir, c.now, { log: (l) => logs.push(l) });
  t.after(() => store.close());
  const frames = randomFrames(4, BASE, 40, { idle: 0 });
  for (const f of frames.slice(0, 10)) store.append(f);
  // The files become unwritable (say, a remount read-only): a segment can neither be appended
  // to nor created. Simulated by replacing the directory with a file of the same name.
  const seg = join(dir, `t1-${BASE}.seg`);
  const kept = readFileSync(seg);
  rmSync(dir, { recursive: true, force: true });
  writeFileSync(dir, 'not a directory');
  // The open segment's descriptor still writes (a deleted file); the next segment cannot be made.
  c.set(BASE + 600);
  const late = randomFrames(5, BASE + 600, 5, { idle: 0 });
  for (const f of late) assert.equal(store.append(f), false, 'not recorded');
  const h = store.health();
  assert.ok(h.fault, 'a fault is reported');
  assert.ok(h.fault.message.includes(`t1-${BASE + 600}.seg`), `names the file: ${h.fault.message}`);
  assert.equal(h.secondsNotRecorded, 5);
  assert.ok(h.writeErrors >= 5);
  assert.equal(logs.filter((l) => l.includes('cannot write')).length, 1, 'logged once, not every second');
  // The directory comes back: the next second is recorded, and the fault is over.
  rmSync(dir, { force: true });
  mkdirSync(dir);
  writeFileSync(seg, kept);
  const next = randomFrames(6, BASE + 605, 1, { idle: 0 })[0] as Frame;
  assert.equal(store.append(next), true);
  assert.equal(store.health().fault, undefined);
  assert.ok(
    logs.some((l) => l.includes('writing again') && l.includes('5 s were not recorded')),
    logs.join(' | '),
  );
});

test(
  'disk full: the oldest segment is deleted to record the newest second, once per fault episode; then the fault is reported',
  { skip: process.getuid?.() === 0 ? false : 'SKIPPED LOUDLY: needs root to mount a tmpfs' },
  (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'blkheat-fullhist-'));
    const unmount = mountTmpfs(dir, 2);
    t.after(() => {
      unmount();
      rmSync(dir, { recursive: true, force: true });
    });
    const c = clock(BASE);
    const logs: string[] = [];
    const store = HistoryStore.open({
      dir,
      historySeconds: 24 * 3600,
      maxBytes: 1 << 30,
      now: c.now,
      segmentSpans: [20, 40, 120],
      log: (l) => logs.push(l),
    });
    t.after(() => store.close());
    const frames = randomFrames(9, BASE, 200, { idle: 0, density: 0.2 });
    for (const f of frames.slice(0, 100)) {
      c.set(f.ts + 1);
      assert.equal(store.append(f), true);
    }
    const firstOf = (): string => JSON.stringify(store.stats().tiers.map((x) => x.from));
    const oldest = firstOf();
    // Something else takes every free byte, once.
    const filler = join(dir, 'filler');
    spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4k', 'status=none']);
    const next = frames[100] as Frame;
    c.set(next.ts + 1);
    assert.equal(store.append(next), true, 'the newest second is recorded');
    assert.notEqual(firstOf(), oldest, 'by deleting the oldest history of a tier');
    assert.ok(
      logs.some((l) => l.includes('disk full: deleted the oldest')),
      logs.join(' | '),
    );
    // The space is taken again at once: in the same episode nothing more is deleted, the fault shows.
    spawnSync('dd', ['if=/dev/zero', `of=${filler}-2`, 'bs=4k', 'status=none']);
    const before = firstOf();
    let lost = 0;
    for (const f of frames.slice(101, 131)) {
      c.set(f.ts + 1);
      if (!store.append(f)) lost++;
    }
    assert.equal(firstOf(), before, 'no more history deleted in the same fault episode');
    assert.ok(lost > 0 && store.health().fault?.code === 'ENOSPC', `lost ${lost}; fault ${JSON.stringify(store.health().fault)}`);
    assert.equal(store.health().secondsNotRecorded, lost);
  },
);

test('a data dir keeps history of one bucket schema: another schema refuses to open it, and nothing is touched', (t) => {
  const dir = tempDir(t);
  const frames = randomFrames(7, BASE + 5, 30);
  const coarse = open(dir, () => BASE + 40);
  for (const f of frames) coarse.append(f);
  coarse.close();
  const before = readdirSync(dir)
    .sort()
    .map((n) => [n, readFileSync(join(dir, n)).length]);
  assert.ok(before.length >= 2, 'the 1 s and 10 s tiers wrote segments');

  assert.throws(
    () => HistoryStore.open({ dir, historySeconds: 24 * 3600, maxBytes: 1 << 30, now: () => BASE + 40, schema: FINE_BUCKET_SCHEMA }),
    (e: unknown) =>
      e instanceof HistorySchemaError &&
      /recorded with bucket schema 2 \(t1-\d+\.seg\), and this agent runs schema 3\. Start it with --schema 2, or give it another --data-dir/.test(
        e.message,
      ),
  );
  assert.deepEqual(
    readdirSync(dir)
      .sort()
      .map((n) => [n, readFileSync(join(dir, n)).length]),
    before,
    'no file removed, replaced or grown',
  );

  // The same schema opens it, and a fine store writes and reads schema-3 frames in its own directory.
  const again = open(dir, () => BASE + 40);
  assert.deepEqual(readAll(again, 1), frames);
  again.close();
  const fineDir = join(dir, 'fine');
  const fine = HistoryStore.open({
    dir: fineDir,
    historySeconds: 24 * 3600,
    maxBytes: 1 << 30,
    now: () => BASE + 40,
    schema: FINE_BUCKET_SCHEMA,
  });
  const wide: Frame = { ts: BASE + 10, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 3, d: [150, 2, 200, 1], q: [] }] }] };
  fine.append(wide);
  assert.deepEqual(parseAll(fine.read(1, 0, 2 ** 32)), [wide]);
  assert.deepEqual(parseAll(fine.read(10, 0, 2 ** 32)), [{ ...wide, ts: BASE + 10, step: 10 }], 'the 10 s tier merges at schema 3');
  fine.close();
});

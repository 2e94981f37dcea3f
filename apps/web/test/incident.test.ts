// The pure parts of the cgroup and size × latency views: per-cgroup and per-size tallies of a
// range agree with brute-force sums of the fixture's frames, at 1 s and merged into coarse
// steps, and sliced or at once; the cgroup filter of a heat map matrix counts the cgroup's
// device latency only; size classes; samples kept by cgroup and size; the cgroup rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketCount,
  bucketOfSeconds,
  CGROUP_NONE,
  CGROUP_OTHER,
  coarsenFrames,
  type Frame,
  type IoSample,
} from '@blkheat/shared-types';
import { cgroupBreakdown, cgroupFilterApplies, cgroupProblem, CgroupTally } from '../src/model/cgroups.ts';
import { buildMatrix } from '../src/model/heatmatrix.ts';
import { localFilter, matchSamples, type SamplesQuery } from '../src/model/samples.ts';
import { bucketWindowOf } from '../src/model/latency.ts';
import { sizeCell, sizeClassOf, sizeLatency } from '../src/model/sizeLatency.ts';
import { BACKUP, FAST_S, LARGE_S, LOOP0, PG, pgWrites, SLOW_S, SMALL_S, VDA, withIncident, ZRAM0 } from './fixtures/incident.ts';
import { defaultDisks, syntheticSource } from './fixtures/synthetic.ts';

const T0 = 1_700_000_000;
const source = withIncident(syntheticSource({ disks: defaultDisks(T0) }));
const frames = source.frames(T0, T0 + 120);
const fast = bucketOfSeconds(FAST_S, BUCKET_SCHEMA);
const slow = bucketOfSeconds(SLOW_S, BUCKET_SCHEMA);

/** Reads and Writes of loop0 in [from, to), straight from the frames' classes. */
function loop0Classes(from: number, to: number): { reads: number; writes: number; pg: number; backup: number } {
  let reads = 0;
  let writes = 0;
  let pg = 0;
  for (const f of frames) {
    if (f.ts < from || f.ts >= to) continue;
    let r = 0;
    let w = 0;
    for (const c of f.disks.find((d) => d.dev === LOOP0)?.cls ?? []) {
      if (c.c === 'Read') r += c.n;
      else w += c.n;
    }
    reads += r;
    writes += w;
    pg += r + pgWrites(w);
  }
  return { reads, writes, pg, backup: reads + writes - pg };
}

test('cgroup breakdown: counts, shares and device latency per cgroup are the frames’ sums', () => {
  const b = cgroupBreakdown(frames, { from: T0 + 10, to: T0 + 100, kind: 'device' }, BUCKET_SCHEMA);
  const want = loop0Classes(T0 + 10, T0 + 100);
  const loop = b.get(LOOP0);
  assert.ok(loop);
  assert.deepEqual(
    loop.rows.map((r) => [r.g, r.n]),
    [
      [PG, want.pg],
      [BACKUP, want.backup],
    ],
    'busiest first',
  );
  const pg = loop.rows[0]!;
  assert.equal(pg.share, want.pg / (want.pg + want.backup));
  assert.equal(pg.hist[fast], want.reads, 'PG: every read, fast');
  assert.equal(pg.hist[slow], want.pg - want.reads, 'PG: half the writes, slow');
  assert.equal(loop.rows[1]!.hist[fast], 0);
  assert.ok(pg.quantiles.find((q) => q.label === 'p50')!.seconds < 1e-3, 'PG’s median is a fast read');
  assert.ok(loop.rows[1]!.quantiles.find((q) => q.label === 'p50')!.seconds > 10e-3, 'BACKUP’s median is a slow write');
  assert.equal(loop.framesWithCg, 90);
  assert.equal(b.get(ZRAM0)?.framesWithCg, 0, 'zram0 has no cg: the view says there is no split');
  assert.ok((b.get(ZRAM0)?.framesWithIo ?? 0) > 0);
  assert.deepEqual(
    [...(b.get(VDA)?.rows ?? [])].map((r) => r.g),
    [PG],
  );
});

test('cgroup breakdown: the same over frames merged into 10 s steps, and summed in slices', () => {
  const whole = cgroupBreakdown(frames, { from: T0, to: T0 + 120, kind: 'device' }, BUCKET_SCHEMA);
  const coarse = cgroupBreakdown(coarsenFrames(frames, 10), { from: T0, to: T0 + 120, kind: 'device' }, BUCKET_SCHEMA);
  const sliced = new CgroupTally({ from: T0, to: T0 + 120, kind: 'device' }, BUCKET_SCHEMA);
  for (let i = 0; i < frames.length; i += 7) sliced.add(frames, i, Math.min(frames.length, i + 7));
  const strip = (m: ReturnType<typeof cgroupBreakdown>) =>
    [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([dev, b]) => [dev, b.rows.map((r) => [r.g, r.n, [...r.hist]])] as const);
  assert.deepEqual(strip(coarse), strip(whole));
  assert.deepEqual(strip(sliced.result()), strip(whole));
  const want = loop0Classes(T0, T0 + 120);
  assert.deepEqual(
    whole.get(LOOP0)?.rows.map((r) => r.n),
    [want.pg, want.backup],
  );
});

test('heat matrix under a cgroup filter counts that cgroup’s device latency, per column', () => {
  const m = buildMatrix(frames, {
    from: T0,
    to: T0 + 120,
    step: 1,
    rows: bucketCount(),
    filter: { dev: LOOP0, kind: 'device', cgroup: BACKUP },
  });
  for (const ts of [T0, T0 + 33, T0 + 119]) {
    const w = loop0Classes(ts, ts + 1);
    assert.equal(m.total(ts), w.backup, `column ${ts}`);
    assert.equal(m.count(ts, slow), w.backup);
    assert.equal(m.count(ts, fast), 0);
  }
  const none = buildMatrix(frames, {
    from: T0,
    to: T0 + 120,
    step: 1,
    rows: bucketCount(),
    filter: { dev: ZRAM0, kind: 'device', cgroup: PG },
  });
  assert.equal(none.maxCell(), 0, 'no cg in the data: nothing is drawn as that cgroup’s');
  assert.equal(none.recordedSeconds(T0 + 5), 1, 'the seconds are still recorded (not "no data")');
  assert.equal(cgroupFilterApplies('device', []), true);
  assert.equal(cgroupFilterApplies('queue', []), false, 'cg before protocol 4 carries no queue latency');
  assert.equal(cgroupFilterApplies('queue', ['queue']), true, 'from protocol 4 cg carries every phase (cgroup-phases.test.ts)');
});

test('size classes: the smallest s with bytes <= 2^s', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 512, 513, 4096, 4097, 65536, 1 << 20, (1 << 20) + 1].map(sizeClassOf),
    [0, 0, 1, 2, 9, 10, 12, 13, 16, 20, 21],
  );
});

test('size × latency: cells and columns are the frames’ sums, contiguous from smallest to largest, class filter applied', () => {
  const want = loop0Classes(T0, T0 + 120);
  const m = sizeLatency(frames, { from: T0, to: T0 + 120, kind: 'device' }, BUCKET_SCHEMA).get(LOOP0);
  assert.ok(m);
  assert.deepEqual(m.sizes, [12, 13, 14, 15, 16, 17, 18, 19, 20]);
  assert.deepEqual(m.counts, [want.reads, 0, 0, 0, 0, 0, 0, 0, want.writes]);
  assert.equal(sizeCell(m, SMALL_S, fast), want.reads);
  assert.equal(sizeCell(m, LARGE_S, slow), want.writes);
  assert.equal(sizeCell(m, SMALL_S, slow), 0);
  assert.equal(sizeCell(m, 30, slow), 0, 'outside the columns');
  assert.equal(m.maxCell, Math.max(want.reads, want.writes));
  assert.deepEqual(bucketWindowOf(m.hists), [fast, slow + 1]);
  assert.deepEqual(bucketWindowOf(m.hists, [fast + 2, slow - 2]), [fast, slow + 1], 'a window is widened to hold every cell');
  assert.deepEqual(bucketWindowOf(m.hists, [fast - 8, slow + 8]), [fast - 8, slow + 8]);
  assert.equal(bucketWindowOf([new Float64Array(4)]), undefined);
  const writes = sizeLatency(frames, { from: T0, to: T0 + 120, kind: 'device', classes: new Set(['Write']) }, BUCKET_SCHEMA).get(LOOP0);
  assert.deepEqual(writes?.sizes, [LARGE_S]);
  assert.deepEqual(writes?.counts, [want.writes]);
  const coarse = sizeLatency(coarsenFrames(frames, 40), { from: T0, to: T0 + 120, kind: 'device' }, BUCKET_SCHEMA).get(LOOP0);
  assert.deepEqual(coarse?.counts, m.counts, 'merged frames: the same');
  assert.deepEqual(
    coarse?.hists.map((h) => [...h]),
    m.hists.map((h) => [...h]),
  );
  assert.equal(sizeLatency(frames, { from: T0, to: T0 + 120, kind: 'device' }, BUCKET_SCHEMA).get(VDA)?.framesWithSz, 0, 'vda has no sz');
});

test('samples: kept by cgroup path and by size class, locally and as the agent answer is filtered', () => {
  const all = source.samplesIn(T0, T0 + 30);
  const q: SamplesQuery = { from: T0, to: T0 + 30, kind: 'device', minNs: 0, maxNs: Number.MAX_SAFE_INTEGER, disks: [LOOP0] };
  const backup = matchSamples(all, { ...q, cgroup: BACKUP }).samples;
  assert.ok(backup.length > 0);
  assert.deepEqual(
    backup,
    all.filter((s) => s.dev === LOOP0 && s.cg === BACKUP),
  );
  const large = matchSamples(all, { ...q, sizeClass: LARGE_S }).samples;
  assert.deepEqual(
    large,
    all.filter((s: IoSample) => s.dev === LOOP0 && s.c === 'Write'),
  );
  assert.equal(localFilter(q), undefined, 'nothing to filter locally');
  const keep = localFilter({ ...q, cgroup: PG, sizeClass: SMALL_S });
  assert.ok(keep);
  assert.deepEqual(
    all.filter(keep),
    all.filter((s) => s.cg === PG && s.bytes === 4096),
  );
});

test('cgroup names: paths and the protocol’s names pass, anything else says why', () => {
  for (const ok of ['/', '/system.slice/postgres.service', '/a b/ü', CGROUP_NONE, CGROUP_OTHER, 'cgroup#1234'])
    assert.equal(cgroupProblem(ok), undefined, ok);
  assert.match(cgroupProblem('relative/path') ?? '', /starting with "\/"/);
  assert.match(cgroupProblem('') ?? '', /empty/);
  assert.match(cgroupProblem('/a//b') ?? '', /empty path segment/);
  assert.match(cgroupProblem('/a/') ?? '', /empty path segment/);
  assert.match(cgroupProblem('/a\nb') ?? '', /control characters/);
  assert.match(cgroupProblem(`/${'x'.repeat(5000)}`) ?? '', /longer than 4096/);
  assert.match(cgroupProblem('cgroup#x') ?? '', /starting with/);
});

test('frames the fixture builds keep the protocol’s conservation: Σ cg n = Σ n of counted classes', () => {
  for (const f of frames as Frame[])
    for (const d of f.disks) {
      if (!d.cg) continue;
      const cg = d.cg.reduce((s, g) => s + g.n, 0);
      const cls = d.cls.reduce((s, c) => s + (c.pt ? 0 : c.n), 0);
      assert.equal(cg, cls, `${d.dev} at ${f.ts}`);
    }
});

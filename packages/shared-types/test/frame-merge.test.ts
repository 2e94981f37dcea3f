import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coarsenFrames, compareDev, conservedCount, filterFrame, FrameAccumulator, mergeFrames, sortedByDev } from '../src/frame-merge.js';
import { sparseProblem, sparseTotal } from '../src/histogram.js';
import {
  CGROUP_NONE,
  CGROUP_OTHER,
  CGROUPS_LISTED,
  type ClassSeries,
  type DiskFrame,
  type Frame,
  type InflightState,
} from '../src/frame-model.js';
import { frameSchema } from '../src/schemas.js';
import { randomSparseHist, seededRandom as rng } from '@blkheat/testkit';

const DEVS = ['7:0', '7:1', '8:0', '253:0'];
const CLASSES = ['Read', 'Sync-Write', 'Flush', 'Metadata-Read'];

function randomHist(r: () => number): number[] {
  return randomSparseHist(r, 0.08, 50);
}

function randomFrame(r: () => number, ts: number, step = 1): Frame {
  const disks: DiskFrame[] = [];
  for (const dev of DEVS) {
    if (r() < 0.3) continue;
    const cls: ClassSeries[] = [];
    for (const c of CLASSES) {
      if (r() < 0.4) continue;
      const d = randomHist(r);
      const q = randomHist(r);
      const n = Math.max(sparseTotal(d), sparseTotal(q)) + Math.floor(r() * 3);
      // Protocol 4's submit wait and total on some classes (as on request-based disks).
      if (r() < 0.5) cls.push({ c, n, d, q });
      else {
        const w = randomHist(r);
        const t = randomHist(r);
        const wu = Math.floor(r() * 3);
        cls.push({ c, n: Math.max(n, sparseTotal(w) + wu, sparseTotal(t) + wu), d, q, w, t, wu });
      }
    }
    if (cls.length > 0) disks.push({ dev, cls, dropped: Math.floor(r() * 5) });
  }
  return { ts, step, disks };
}

/** Brute force: per (dev, class, kind, bucket) totals, and per (dev, class) n. */
function totals(frames: readonly Frame[]): Map<string, number> {
  const m = new Map<string, number>();
  const add = (k: string, v: number): void => {
    m.set(k, (m.get(k) ?? 0) + v);
  };
  for (const f of frames) {
    for (const d of f.disks) {
      add(`${d.dev}/dropped`, d.dropped ?? 0);
      for (const c of d.cls) {
        add(`${d.dev}/${c.c}/n`, c.n);
        for (let k = 0; k < c.d.length; k += 2) add(`${d.dev}/${c.c}/d/${c.d[k]}`, c.d[k + 1] as number);
        for (let k = 0; k < c.q.length; k += 2) add(`${d.dev}/${c.c}/q/${c.q[k]}`, c.q[k + 1] as number);
        for (const [kind, h] of [
          ['w', c.w ?? []],
          ['t', c.t ?? []],
        ] as const)
          for (let k = 0; k < h.length; k += 2) add(`${d.dev}/${c.c}/${kind}/${h[k]}`, h[k + 1] as number);
        add(`${d.dev}/${c.c}/wu`, c.wu ?? 0);
      }
    }
  }
  for (const [k, v] of m) if (v === 0) m.delete(k);
  return m;
}

test('mergeFrames sums every count and bucket exactly', () => {
  const r = rng(1);
  const frames = Array.from({ length: 60 }, (_, i) => randomFrame(r, 1_700_000_000 + i));
  const merged = mergeFrames(frames, 1_700_000_000, 60);
  assert.equal(merged.ts, 1_700_000_000);
  assert.equal(merged.step, 60);
  assert.deepEqual(totals([merged]), totals(frames));
  for (const d of merged.disks)
    for (const c of d.cls)
      assert.equal(sparseProblem(c.d) ?? sparseProblem(c.q) ?? sparseProblem(c.w ?? []) ?? sparseProblem(c.t ?? []), undefined);
  assert.ok(
    [...totals([merged]).keys()].some((k) => k.includes('/w/')) && [...totals([merged]).keys()].some((k) => k.includes('/t/')),
    'the random frames have submit wait and total buckets',
  );
  assert.ok(frameSchema.safeParse(merged).success, 'a merged frame is a valid wire frame');
});

test('merge is canonical: different merge paths over the same seconds are deep-equal', () => {
  const r = rng(2);
  const ones = Array.from({ length: 60 }, (_, i) => randomFrame(r, 1_700_000_040 + i));
  const direct = coarsenFrames(ones, 60);
  const viaTens = coarsenFrames(coarsenFrames(ones, 10), 60);
  assert.deepEqual(viaTens, direct);
  const shuffled = mergeFrames([...ones].reverse(), direct[0]?.ts ?? 0, 60);
  assert.deepEqual(shuffled, direct[0]);
});

test('coarsenFrames groups by aligned step and leaves unrecorded steps absent', () => {
  const r = rng(3);
  const base = 1_700_000_000; // a multiple of 10
  const ts = [base + 1, base + 2, base + 9, base + 10, base + 35, base + 39];
  const frames = ts.map((t) => randomFrame(r, t));
  const out = coarsenFrames(frames, 10);
  assert.deepEqual(
    out.map((f) => f.ts),
    [base, base + 10, base + 30],
  );
  assert.deepEqual(totals([out[0] as Frame]), totals(frames.slice(0, 3)));
  assert.deepEqual(totals([out[2] as Frame]), totals(frames.slice(4)));
});

test('coarsenFrames keeps recorded idle steps as empty frames', () => {
  const out = coarsenFrames(
    [
      { ts: 1_700_000_000, step: 1, disks: [] },
      { ts: 1_700_000_001, step: 1, disks: [] },
    ],
    10,
  );
  assert.deepEqual(out, [{ ts: 1_700_000_000, step: 10, disks: [] }]);
});

test('coarsenFrames refuses frames that straddle output steps or go back in time', () => {
  assert.throws(() => coarsenFrames([{ ts: 1_700_000_005, step: 10, disks: [] }], 60), /does not fit/);
  assert.throws(() => coarsenFrames([{ ts: 1_700_000_000, step: 10, disks: [] }], 15), /does not fit/);
  assert.throws(
    () =>
      coarsenFrames(
        [
          { ts: 1_700_000_020, step: 1, disks: [] },
          { ts: 1_700_000_001, step: 1, disks: [] },
        ],
        10,
      ),
    /out of time order/,
  );
});

test('filterFrame keeps only the named disks and classes, and always keeps the frame', () => {
  const r = rng(4);
  const f = randomFrame(r, 1_700_000_000);
  assert.equal(filterFrame(f, {}), f, 'pass-through filter returns the same object');
  const onlyRead = filterFrame(f, { classes: ['Read'] });
  for (const d of onlyRead.disks) {
    assert.ok(d.cls.length > 0);
    for (const c of d.cls) assert.equal(c.c, 'Read');
  }
  const expectReads = f.disks.filter((d) => d.cls.some((c) => c.c === 'Read')).length;
  assert.equal(onlyRead.disks.length, expectReads);
  const none = filterFrame(f, { disks: ['1:1'] });
  assert.deepEqual(none, { ts: f.ts, step: f.step, disks: [] });
});

test('FrameAccumulator reset starts over and counts frames', () => {
  const acc = new FrameAccumulator();
  const r = rng(5);
  acc.add(randomFrame(r, 1_700_000_000));
  acc.add(randomFrame(r, 1_700_000_001));
  assert.equal(acc.count, 2);
  acc.reset();
  assert.equal(acc.count, 0);
  assert.deepEqual(acc.toFrame(1_700_000_000, 10), { ts: 1_700_000_000, step: 10, disks: [] });
});

test('sortedByDev orders items as compareDev orders their device numbers, and leaves its input as it was', () => {
  const devs = ['8:10', 'fleet', '253:0', '8:2', '7:0', '501:12', '501:2', 'b', 'a', '8:2'];
  const items = devs.map((dev, i) => ({ dev, i }));
  const sorted = sortedByDev(items, (d) => d.dev);
  assert.deepEqual(
    sorted.map((d) => d.dev),
    [...devs].sort(compareDev),
  );
  assert.deepEqual(sorted.map((d) => d.dev).slice(0, 7), ['7:0', '8:2', '8:2', '8:10', '253:0', '501:2', '501:12']);
  assert.deepEqual(
    items.map((d) => d.dev),
    devs,
    'the input is not reordered',
  );
});

test('compareDev orders device numbers numerically', () => {
  assert.deepEqual(['8:10', '253:0', '8:2', '7:0'].sort(compareDev), ['7:0', '8:2', '8:10', '253:0']);
});

test('protocol 2 fields merge exactly: errors, passthrough, sizes, requeues and untimed add; in flight keeps the worst second', () => {
  const second = (ts: number, k: number): Frame => ({
    ts,
    step: 1,
    disks: [
      {
        dev: '7:0',
        cls: [
          { c: 'DrvIn', n: 1, d: [40, 1], q: [], pt: true, sz: [{ s: 9, n: 1, d: [40, 1] }] },
          {
            c: 'Read',
            n: 3 * k,
            d: [30, 2 * k, 50, k],
            q: [],
            e: { IOERR: k },
            sz: [
              { s: 12, n: 2 * k, d: [30, 2 * k] },
              { s: 20, n: k, d: [50, k] },
            ],
          },
        ],
        requeues: k,
        untimed: { write: k },
        inflight: { n: k, oldest_ns: k * 1e9, ios: [] },
      },
    ],
  });
  const merged = mergeFrames([second(1795290000, 1), second(1795290001, 3), second(1795290002, 2)], 1795290000, 3);
  const disk = merged.disks[0] as DiskFrame;
  assert.equal(frameSchema.safeParse(merged).success, true, 'a merged frame is a valid frame');
  assert.deepEqual(disk.cls[0], { c: 'DrvIn', n: 3, d: [40, 3], q: [], pt: true, sz: [{ s: 9, n: 3, d: [40, 3] }] });
  assert.deepEqual(disk.cls[1], {
    c: 'Read',
    n: 18,
    d: [30, 12, 50, 6],
    q: [],
    e: { IOERR: 6 },
    sz: [
      { s: 12, n: 12, d: [30, 12] },
      { s: 20, n: 6, d: [50, 6] },
    ],
  });
  assert.equal(disk.requeues, 6);
  assert.deepEqual(disk.untimed, { write: 6 });
  assert.deepEqual(disk.inflight, { n: 3, oldest_ns: 3e9, ios: [] }, 'the oldest in-flight state of the three seconds');
  // Conserved: passthrough out, untimed in.
  assert.equal(conservedCount(disk), 18 + 6);
});

test('protocol 3 cgroups merge exactly, and past CGROUPS_LISTED the rest are summed as (other) with Σ n kept', () => {
  const frame = (ts: number, cgroups: [string, number][]): Frame => ({
    ts,
    step: 1,
    disks: [{ dev: '7:0', cls: [], cg: cgroups.map(([g, n]) => ({ g, n, d: [40, n] })) }],
  });
  const merged = mergeFrames(
    [
      frame(1795290000, [
        ['/a', 5],
        ['/b', 1],
      ]),
      frame(1795290001, [
        ['/b', 7],
        [CGROUP_NONE, 2],
      ]),
    ],
    1795290000,
    2,
  );
  assert.deepEqual(merged.disks[0]?.cg, [
    { g: '/b', n: 8, d: [40, 8] },
    { g: '/a', n: 5, d: [40, 5] },
    { g: CGROUP_NONE, n: 2, d: [40, 2] },
  ]);
  // Many cgroups over the step (e.g. short-lived containers): bounded, nothing lost.
  const many = Array.from({ length: CGROUPS_LISTED + 10 }, (_, i): [string, number] => [`/c${i}`, i + 1]);
  const capped = mergeFrames([frame(1795290000, many.slice(0, 40)), frame(1795290001, many.slice(40))], 1795290000, 2);
  const cg = capped.disks[0]?.cg ?? [];
  assert.equal(cg.length, CGROUPS_LISTED);
  assert.equal(cg.at(-1)?.g, CGROUP_OTHER);
  assert.equal(cg[0]?.g, `/c${CGROUPS_LISTED + 9}`, 'busiest first');
  const total = many.reduce((n, [, v]) => n + v, 0);
  assert.equal(
    cg.reduce((n, g) => n + g.n, 0),
    total,
  );
  assert.equal(
    cg.reduce((n, g) => n + sparseTotal(g.d), 0),
    total,
  );
  assert.equal(frameSchema.safeParse(capped).success, true);
});

test('protocol 4 fields merge exactly: w and t add bucket by bucket, wu and causes add, absent stays absent', () => {
  const frame = (ts: number, cls: ClassSeries[], causes?: DiskFrame['causes']): Frame => ({
    ts,
    step: 1,
    disks: [
      { dev: '7:0', cls, ...(causes ? { causes } : {}) },
      { dev: '253:0', cls: [{ c: 'Read', n: 2, d: [40, 2], q: [] }] },
    ],
  });
  const merged = mergeFrames(
    [
      frame(1795290000, [{ c: 'Read', n: 6, d: [40, 6], q: [0, 6], w: [0, 3, 20, 2], t: [40, 4, 41, 1], wu: 1 }], { frozen: 2 }),
      frame(1795290001, [{ c: 'Read', n: 5, d: [40, 5], q: [0, 5], w: [20, 1, 33, 4], t: [41, 3, 45, 2], wu: 0 }]),
      frame(1795290002, [{ c: 'Read', n: 1, d: [40, 1], q: [0, 1] }], { frozen: 3 }),
    ],
    1795290000,
    3,
  );
  assert.equal(frameSchema.safeParse(merged).success, true);
  assert.deepEqual(merged.disks[0], {
    dev: '7:0',
    cls: [{ c: 'Read', n: 12, d: [40, 12], q: [0, 12], w: [0, 3, 20, 3, 33, 4], t: [40, 4, 41, 4, 45, 2], wu: 1 }],
    causes: { frozen: 5 },
  });
  assert.deepEqual(merged.disks[1], { dev: '253:0', cls: [{ c: 'Read', n: 6, d: [40, 6], q: [] }] }, 'no w, t, wu or causes made up');
  // Present but empty stays present (a request-based class whose I/Os all had unseen submissions).
  const empty = mergeFrames([frame(1795290000, [{ c: 'Read', n: 2, d: [40, 2], q: [], w: [], t: [], wu: 2 }])], 1795290000, 1);
  assert.deepEqual(empty.disks[0]?.cls[0], { c: 'Read', n: 2, d: [40, 2], q: [], w: [], t: [], wu: 2 });
});

test('disk marks merge exactly: wbt windows and tags_full seconds add, changed queue settings join in QUEUE_SETTINGS order, absent stays absent', () => {
  const frame = (ts: number, marks: Pick<DiskFrame, 'wbt' | 'queue_changed' | 'tags_full'>): Frame => ({
    ts,
    step: 1,
    disks: [{ dev: '7:0', cls: [], ...marks }],
  });
  const merged = mergeFrames(
    [
      frame(1795290000, { wbt: 3, queue_changed: ['nr_requests'], tags_full: 1 }),
      frame(1795290001, { tags_full: 1 }),
      frame(1795290002, { wbt: 2, queue_changed: ['scheduler', 'nr_requests'] }),
    ],
    1795290000,
    3,
  );
  assert.equal(frameSchema.safeParse(merged).success, true);
  assert.deepEqual(merged.disks[0], { dev: '7:0', cls: [], wbt: 5, tags_full: 2, queue_changed: ['scheduler', 'nr_requests'] });
  assert.deepEqual(
    mergeFrames([frame(1795290001, {})], 1795290000, 3).disks[0],
    { dev: '7:0', cls: [] },
    'no wbt, tags_full or queue_changed made up',
  );
});

test('in flight with waiting bios (protocol 4): a coarse step keeps its worst second whole, the oldest outstanding I/O', () => {
  const second = (ts: number, inflight: InflightState): Frame => ({ ts, step: 1, disks: [{ dev: '7:0', cls: [], inflight }] });
  const busy: InflightState = { n: 4, oldest_ns: 1e9, ios: [], waiting: 1, oldest_wait_ns: 1e6 };
  // A frozen queue: nothing with the driver, bios waiting 5 s for a request.
  const frozen: InflightState = { n: 0, oldest_ns: 0, ios: [], waiting: 9, oldest_wait_ns: 5e9, frozen: true };
  const quiet: InflightState = { n: 0, oldest_ns: 0, ios: [] };
  for (const order of [
    [busy, frozen, quiet],
    [quiet, frozen, busy],
  ]) {
    const merged = mergeFrames(
      order.map((s, i) => second(1795290000 + i, s)),
      1795290000,
      3,
    );
    assert.deepEqual(merged.disks[0]?.inflight, frozen, 'the frozen second, its waiting, oldest_wait_ns and frozen together');
  }
  // Without waiting bios the rule is protocol 2's: the oldest with the driver, then the most.
  const old = mergeFrames([second(1795290000, busy), second(1795290001, { n: 1, oldest_ns: 2e9, ios: [] })], 1795290000, 2);
  assert.deepEqual(old.disks[0]?.inflight, { n: 1, oldest_ns: 2e9, ios: [] });
  // The same oldest outstanding age: the state whose age is with the driver wins, its waiting kept as it was.
  const tie = mergeFrames(
    [
      second(1795290000, { n: 0, oldest_ns: 0, ios: [], waiting: 2, oldest_wait_ns: 3e9 }),
      second(1795290001, { n: 1, oldest_ns: 3e9, ios: [] }),
    ],
    1795290000,
    2,
  );
  assert.deepEqual(tie.disks[0]?.inflight, { n: 1, oldest_ns: 3e9, ios: [] });
});

// The collector's pure parts, without the kernel: binary layouts, class names, frame building
// (over a fake sysfs tree) and sample budgets. Disks and the disk scope: collector-units-disks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, bucketCount, FINE_BUCKET_SCHEMA, sparseTotal, type IoSample } from '@blkheat/shared-types';
import { ClassNamer } from '../src/collector/decode/classes.js';
import { statusName } from '../src/collector/abi/block-status.js';
import { DeviceRegistry } from '../src/collector/host/devices.js';
import { buildFrame } from '../src/collector/decode/frame-builder.js';
import { addPerCpuHist, decodeSample, devString, emptyHistValue, parseDevString } from '../src/collector/abi/layout.js';
import { defaultObjectPath } from '../src/collector/loader.js';
import { ABI, ABI_S3 } from './lib/abi.js';
import { SampleBudget, SampleLedger } from '../src/collector/decode/sampling.js';
import { fakeSysfs } from './lib/fake-sysfs.js';

const REQ_OPS = new Map([
  ['REQ_OP_READ', 0],
  ['REQ_OP_WRITE', 1],
  ['REQ_OP_FLUSH', 2],
  ['REQ_OP_DISCARD', 3],
  ['REQ_OP_WRITE_ZEROES', 9],
  ['REQ_OP_LAST', 36],
]);

const CLS_FLAG_BITS = ABI.classBits.flags;
const CLS_NOSTAT = ABI.classBits.nostat;

test('class codes become biolatency -F names, ops resolved from the kernel enum', () => {
  const namer = new ClassNamer(REQ_OPS, ABI.classBits);
  assert.equal(namer.name(0), 'Read');
  assert.equal(namer.name(1 | CLS_FLAG_BITS.Sync), 'Sync-Write');
  assert.equal(namer.name(0 | CLS_FLAG_BITS.Metadata | CLS_FLAG_BITS.Priority), 'Priority-Metadata-Read');
  assert.equal(namer.name(2 | CLS_FLAG_BITS.Preflush), 'Flush', 'a flush always carries REQ_PREFLUSH; not repeated');
  assert.equal(namer.name(1 | CLS_FLAG_BITS.Preflush | CLS_FLAG_BITS.ForcedUnitAccess), 'Preflush-ForcedUnitAccess-Write');
  assert.equal(namer.name(9), 'WriteZeroes');
  assert.equal(namer.name(77), 'Op77');
});

test('class codes map to the /proc/diskstats op groups; passthrough and unaccounted I/O to none', () => {
  const namer = new ClassNamer(REQ_OPS, ABI.classBits);
  assert.equal(namer.group(0 | CLS_FLAG_BITS.ReadAhead), 'read');
  assert.equal(namer.group(1 | CLS_FLAG_BITS.Sync), 'write');
  assert.equal(namer.group(2 | CLS_FLAG_BITS.Preflush), 'flush');
  assert.equal(namer.group(3), 'discard');
  assert.equal(namer.group(9), 'write', 'WriteZeroes is odd: op_is_write');
  assert.equal(namer.group(34 | CLS_NOSTAT), undefined, 'DrvIn is passthrough');
  assert.equal(namer.notCounted(34 | CLS_NOSTAT), true);
  assert.equal(namer.group(0 | CLS_NOSTAT), undefined, 'a read on a queue with iostats off');
  assert.equal(statusName(10), 'IOERR');
  assert.equal(statusName(17), 'STATUS17', 'renumbered across kernels: not named');
});

const NR_BUCKETS = ABI.nrBuckets;
const HIST = ABI.records.bh_hist;
const HIST_VALUE_SIZE = HIST.size;

test('kernel objects per bucket schema: each object holds every dense bucket of its schema', () => {
  assert.match(defaultObjectPath(BUCKET_SCHEMA), /\/blkheat\.bpf\.o$/);
  assert.match(defaultObjectPath(FINE_BUCKET_SCHEMA), /\/blkheat_s3\.bpf\.o$/);
  assert.ok(ABI.nrBuckets >= bucketCount(), 'schema 2 fits');
  assert.ok(ABI_S3.nrBuckets >= bucketCount(FINE_BUCKET_SCHEMA), 'schema 3 fits');
  assert.ok(ABI_S3.maxBounds > bucketCount(FINE_BUCKET_SCHEMA) - 1, 'schema 3 bounds fit');
  // 8 counters, max_bucket_plus1 and pad, 20 statuses, and four phases (device, queue, submit, total).
  assert.equal(ABI_S3.records.bh_hist.size, 72 + 20 * 8 + 4 * 216 * 8, 'sizeof(struct bh_hist) with BH_SCHEMA=3');
  assert.throws(() => defaultObjectPath({ ...BUCKET_SCHEMA, scale: 4 }), /no kernel object for bucket schema scale 4/);
});

test('per-CPU histogram values of a schema-3 object are summed with its longer arrays', () => {
  const { nrBuckets } = ABI_S3;
  const hist = ABI_S3.records.bh_hist;
  const histValueSize = hist.size;
  const buf = Buffer.alloc(histValueSize * 2);
  for (let c = 0; c < 2; c++) {
    buf.writeBigUInt64LE(1n, c * histValueSize);
    buf.writeBigUInt64LE(7n, c * histValueSize + hist.at.device + 200 * 8); // device[200]
    buf.writeBigUInt64LE(3n, c * histValueSize + hist.at.queue + 150 * 8); // queue[150]
  }
  assert.equal(hist.at.queue, hist.at.device + nrBuckets * 8, 'queue[] follows device[]');
  const v = emptyHistValue(ABI_S3);
  addPerCpuHist(hist, v, buf, 0, histValueSize, 2);
  assert.equal(v.count, 2);
  assert.equal(v.device[200], 14);
  assert.equal(v.queue[150], 6);
  assert.equal(
    v.device.reduce((a, b) => a + b, 0),
    14,
    'nothing read from the wrong offsets',
  );
});

test('per-CPU histogram values are summed over CPUs; samples decode field by field', () => {
  const cpus = 3;
  const buf = Buffer.alloc(HIST_VALUE_SIZE * cpus);
  for (let c = 0; c < cpus; c++) {
    const base = c * HIST_VALUE_SIZE;
    buf.writeBigUInt64LE(BigInt(10 + c), base); // count
    buf.writeBigUInt64LE(2n, base + 8); // dropped
    buf.writeBigUInt64LE(1n, base + 16); // missed
    buf.writeBigUInt64LE(BigInt(c), base + HIST.at.requeues); // requeues
    buf.writeBigUInt64LE(BigInt(4096 * (10 + c)), base + HIST.at.bytes); // bytes
    buf.writeBigUInt64LE(4n, base + HIST.at.errors + 10 * 8); // errors[BLK_STS_IOERR]
    buf.writeBigUInt64LE(BigInt(c + 1), base + HIST.at.device + 40 * 8); // device[40]
    buf.writeBigUInt64LE(5n, base + HIST.at.queue + 3 * 8); // queue[3]
    buf.writeBigUInt64LE(BigInt(c), base + HIST.at.submit + 60 * 8); // submit[60]
    buf.writeBigUInt64LE(1n, base + HIST.at.total + 70 * 8); // total[70]
    buf.writeBigUInt64LE(1n, base + HIST.at.submit_unknown);
    buf.writeBigUInt64LE(BigInt(c), base + HIST.at.frozen);
    buf.writeBigUInt64LE(2n, base + HIST.at.refused);
  }
  const v = emptyHistValue(ABI);
  addPerCpuHist(HIST, v, buf, 0, HIST_VALUE_SIZE, cpus);
  assert.equal(v.count, 33);
  assert.equal(v.dropped, 6);
  assert.equal(v.missed, 3);
  assert.equal(v.requeues, 3);
  assert.equal(v.bytes, 4096 * 33);
  assert.deepEqual(
    [...v.errors.entries()].filter(([, n]) => n > 0),
    [[10, 12]],
  );
  assert.equal(v.device[40], 6);
  assert.equal(v.queue[3], 15);
  assert.equal(v.submit[60], 3);
  assert.equal(v.total[70], 3);
  assert.equal(v.submitUnknown, 3);
  assert.deepEqual(v.causes, { frozen: 3, refused: 6 }, 'each cause read from its own field');
  for (const phase of ['device', 'queue', 'submit', 'total'] as const) {
    const found = v[phase].reduce((a, b) => a + b, 0);
    assert.equal(found, { device: 6, queue: 15, submit: 3, total: 3 }[phase], `${phase}: nothing read from another phase's offsets`);
  }

  // Written where the object's BTF puts each field (collector-layouts.test.ts holds those places).
  const sample = ABI.records.bh_sample;
  const s = Buffer.alloc(sample.size);
  s.writeBigUInt64LE(123456789n, sample.at.ts_ns);
  s.writeBigUInt64LE(2048n, sample.at.sector);
  s.writeBigUInt64LE(500n, sample.at.queue_ns);
  s.writeBigUInt64LE(5_000_000n, sample.at.device_ns);
  s.writeBigUInt64LE(42n, sample.at.cgroup_id);
  s.writeUInt32LE((7 << 20) | 3, sample.at.dev);
  s.writeUInt32LE(4096, sample.at.bytes);
  s.writeUInt32LE(4242, sample.at.pid);
  s.writeUInt16LE(1 | CLS_FLAG_BITS.Sync, sample.at.cls);
  s.writeUInt16LE(3, sample.at.flags);
  s.writeBigUInt64LE(7_000_000n, sample.at.submit_ns);
  s.write('dd', sample.at.comm);
  s.writeUInt32LE(1795290000, sample.at.slot);
  assert.deepEqual(decodeSample(sample, s), {
    tsNs: 123456789n,
    sector: 2048,
    queueNs: 500,
    deviceNs: 5_000_000,
    submitNs: 7_000_000,
    cgroupId: 42n,
    dev: (7 << 20) | 3,
    bytes: 4096,
    pid: 4242,
    cls: 1 | CLS_FLAG_BITS.Sync,
    flags: 3,
    comm: 'dd',
    slot: 1795290000,
  });
  assert.throws(() => decodeSample(sample, Buffer.alloc(10)), RangeError);
  const noSector = Buffer.from(s);
  noSector.writeBigUInt64LE(0xffffffffffffffffn, sample.at.sector);
  noSector.fill('x', sample.at.comm, sample.at.comm + sample.len.comm);
  assert.equal(decodeSample(sample, noSector).sector, null, 'sector_t -1 (flushes): no sector');
  assert.equal(decodeSample(sample, noSector).comm, 'x'.repeat(sample.len.comm), 'a comm that fills its array has no NUL');
  assert.equal(devString((259 << 20) | 65537), '259:65537');
  assert.equal(parseDevString('259:65537'), ((259 << 20) | 65537) >>> 0);
  assert.equal(parseDevString('../x'), undefined);
});

test('frames say what the in-flight scan found: n 0 on a disk it found idle, nothing without a scan', (t) => {
  const root = fakeSysfs(t);
  const reg = new DeviceRegistry(root);
  const namer = new ClassNamer(REQ_OPS, ABI.classBits);
  const v = emptyHistValue(ABI);
  v.count = 4;
  v.device[40] = 4;
  const entries = [{ dev: (254 << 20) | 0, cls: 0, size: 12, cgroup: '/', value: v }];
  const held = { n: 1, oldest_ns: 20e9, ios: [] };
  const scanned = buildFrame(1795290000, entries, reg, namer, { partitions: false }, { inflight: new Map([[(7 << 20) | 3, held]]) });
  assert.deepEqual(
    scanned.disks.map((d) => [d.dev, d.inflight]),
    [
      ['7:3', held], // no I/O completed this second, one in flight: listed for it
      ['254:0', { n: 0, oldest_ns: 0, ios: [] }], // I/Os completed, none in flight
    ],
  );
  const idle = buildFrame(1795290000, [], reg, namer, { partitions: false }, { inflight: new Map() });
  assert.deepEqual(idle.disks, [], 'a disk with nothing done and nothing in flight is left out, as before');
  const unscanned = buildFrame(1795290000, entries, reg, namer, { partitions: false });
  assert.equal(unscanned.disks[0]?.inflight, undefined, 'a second closed without a scan: not known');
});

test('tags_full: a second whose scan found tasks asleep for a tag of the disk is marked once; none found, or no scan, no mark', (t) => {
  const reg = new DeviceRegistry(fakeSysfs(t));
  const namer = new ClassNamer(REQ_OPS, ABI.classBits);
  const loop3 = (7 << 20) | 3;
  const waiting = { n: 4, oldest_ns: 1e6, ios: [], waiting: 12, oldest_wait_ns: 2e6 };
  const tagsFull = (sleepers: ReadonlyMap<number, number> | undefined): number | undefined =>
    buildFrame(1795290000, [], reg, namer, { partitions: false }, { inflight: new Map([[loop3, waiting]]), tagSleepers: sleepers }).disks[0]
      ?.tags_full;
  assert.equal(tagsFull(new Map([[loop3, 11]])), 1, 'eleven tasks asleep for a tag: the second is marked (a mark, not a count)');
  assert.equal(tagsFull(new Map()), undefined, 'bios waiting, nobody asleep for a tag: not this cause');
  assert.equal(tagsFull(undefined), undefined, 'no scan: not known, not made up');
  const idle = buildFrame(1795290000, [], reg, namer, { partitions: false }, { tagSleepers: new Map([[loop3, 2]]) });
  assert.equal(idle.disks[0]?.tags_full, 1, 'a disk with only the mark is listed for it');
});

test('frames roll partitions up into their disk unless asked, and keep counts exact', (t) => {
  const root = fakeSysfs(t);
  const reg = new DeviceRegistry(root);
  const namer = new ClassNamer(REQ_OPS, ABI.classBits);
  const value = (count: number, bucket: number): ReturnType<typeof emptyHistValue> => {
    const v = emptyHistValue(ABI);
    v.count = count;
    v.dropped = count - 1;
    v.device[bucket] = count;
    v.queue[0] = count;
    return v;
  };
  const entries = [
    { dev: (254 << 20) | 0, cls: 0, size: 12, cgroup: '/a', value: value(5, 40) },
    { dev: (254 << 20) | 1, cls: 0, size: 20, cgroup: '/b', value: value(3, 41) },
    { dev: (254 << 20) | 1, cls: 1 | CLS_FLAG_BITS.Sync, size: 12, cgroup: '/a', value: value(2, 50) },
    { dev: (7 << 20) | 3, cls: 0, size: 12, cgroup: '/', value: value(1, 45) },
    // Beyond the schema's overflow bucket: folded into overflow, never lost.
    { dev: (7 << 20) | 3, cls: 0, size: 12, cgroup: '/', value: value(1, NR_BUCKETS - 1) },
  ];
  const rolled = buildFrame(1795290000, entries, reg, namer, { partitions: false });
  assert.deepEqual(
    rolled.disks.map((d) => [d.dev, d.cls.map((c) => [c.c, c.n, sparseTotal(c.d)])]),
    [
      ['7:3', [['Read', 2, 2]]],
      [
        '254:0',
        [
          ['Read', 8, 8],
          ['Sync-Write', 2, 2],
        ],
      ],
    ],
  );
  assert.equal(rolled.disks[1]?.dropped, 4 + 2 + 1);
  // Sizes: the 4 KiB and 1 MiB reads of 254:0 (partition rolled up) stay apart, with their latencies.
  assert.deepEqual(rolled.disks[1]?.cls[0]?.sz, [
    { s: 12, n: 5, d: [40, 5], q: [0, 5] },
    { s: 20, n: 3, d: [41, 3], q: [0, 3] },
  ]);
  // Cgroups: across classes and partitions of the disk, busiest first, with their latencies.
  assert.deepEqual(rolled.disks[1]?.cg, [
    { g: '/a', n: 7, d: [40, 5, 50, 2], q: [0, 7] },
    { g: '/b', n: 3, d: [41, 3], q: [0, 3] },
  ]);
  assert.deepEqual(rolled.disks[0]?.cg, [{ g: '/', n: 2, d: [45, 1, bucketCount() - 1, 1], q: [0, 2] }]);
  const split = buildFrame(1795290000, entries, reg, namer, { partitions: true });
  assert.deepEqual(
    split.disks.map((d) => d.dev),
    ['7:3', '254:0', '254:1'],
  );
  const only = buildFrame(1795290000, entries, reg, namer, { partitions: false, only: new Set([(7 << 20) | 3]) });
  assert.deepEqual(
    only.disks.map((d) => d.dev),
    ['7:3'],
  );
  assert.deepEqual(buildFrame(1795290001, [], reg, namer, { partitions: false }), { ts: 1795290001, step: 1, disks: [] });

  // A schema-3 object's entries: dense buckets past schema 2's range stay where they are, and
  // the kernel's tail past schema 3's overflow folds into it.
  const fine = (count: number, bucket: number): ReturnType<typeof emptyHistValue> => {
    const v = emptyHistValue(ABI_S3);
    v.count = count;
    v.device[bucket] = count;
    return v;
  };
  const fineFrame = buildFrame(
    1795290002,
    [
      { dev: (7 << 20) | 3, cls: 0, size: 12, cgroup: '/', value: fine(4, 180) },
      { dev: (7 << 20) | 3, cls: 0, size: 12, cgroup: '/', value: fine(1, ABI_S3.nrBuckets - 1) },
    ],
    reg,
    namer,
    { partitions: false, schema: FINE_BUCKET_SCHEMA },
  );
  assert.deepEqual(fineFrame.disks[0]?.cls[0]?.d, [180, 4, bucketCount(FINE_BUCKET_SCHEMA) - 1, 1]);
});

test('sizes and cgroups carry every phase their class does: each summed over them is the class’s (protocol 4)', (t) => {
  const reg = new DeviceRegistry(fakeSysfs(t));
  const namer = new ClassNamer(REQ_OPS, ABI.classBits);
  const value = (count: number, wait: number, unknown: number): ReturnType<typeof emptyHistValue> => {
    const v = emptyHistValue(ABI);
    v.count = count;
    v.device[40] = count;
    v.queue[2] = count;
    v.submit[wait] = count - unknown;
    v.total[wait + 1] = count - unknown;
    v.submitUnknown = unknown;
    return v;
  };
  const entries = [
    { dev: (254 << 20) | 0, cls: 0, size: 12, cgroup: '/a', value: value(5, 30, 0) },
    { dev: (254 << 20) | 1, cls: 0, size: 20, cgroup: '/a', value: value(3, 60, 1) },
    { dev: (254 << 20) | 0, cls: 0, size: 12, cgroup: '/b', value: value(2, 61, 0) },
  ];
  const disk = buildFrame(1795290000, entries, reg, namer, { partitions: false, submitPhase: true }).disks[0];
  const read = disk?.cls[0];
  assert.ok(read?.t && read.w, 'a request-based disk’s class carries the submit phase');
  assert.deepEqual(read.sz, [
    { s: 12, n: 7, d: [40, 7], q: [2, 7], w: [30, 5, 61, 2], t: [31, 5, 62, 2] },
    { s: 20, n: 3, d: [40, 3], q: [2, 3], w: [60, 2], t: [61, 2], wu: 1 },
  ]);
  assert.deepEqual(disk?.cg, [
    { g: '/a', n: 8, d: [40, 8], q: [2, 8], w: [30, 5, 60, 2], t: [31, 5, 61, 2], wu: 1 },
    { g: '/b', n: 2, d: [40, 2], q: [2, 2], w: [61, 2], t: [62, 2] },
  ]);
  for (const key of ['d', 'q', 'w', 't'] as const) {
    const sum = (hs: readonly (readonly number[] | undefined)[]): number => hs.reduce((n, h) => n + sparseTotal(h ?? []), 0);
    assert.equal(sum(read.sz?.map((z) => z[key]) ?? []), sparseTotal(read[key] ?? []), `sizes, ${key}`);
    assert.equal(sum(disk?.cg?.map((g) => g[key]) ?? []), sparseTotal(read[key] ?? []), `cgroups, ${key}`);
  }
  // A bio-based disk (zram0) has no submit phase: its sizes and cgroups carry none either.
  const bio = buildFrame(1795290000, [{ dev: 253 << 20, cls: 0, size: 12, cgroup: '/', value: value(2, 30, 0) }], reg, namer, {
    partitions: false,
    submitPhase: true,
  }).disks[0];
  assert.deepEqual([bio?.cls[0]?.t, bio?.cls[0]?.sz?.[0]?.t, bio?.cg?.[0]?.w], [undefined, undefined, undefined]);
});

test('sample budget: a quarter reserved for the slowest, the rest paced by the expected rate', () => {
  const b = new SampleBudget(2000);
  assert.equal(b.outlierBudget, 500);
  assert.equal(b.fairBudget, 1500);
  assert.equal(b.fairThreshold(1000), 0xffffffff, 'fewer I/Os than budget: keep all');
  assert.equal(b.fairThreshold(3000), Math.floor(0.5 * 0xffffffff));
  assert.equal(new SampleBudget(0).fairThreshold(10), 0);
  assert.throws(() => new SampleBudget(-1), RangeError);
});

test('sample ledger: at most the budget per second is kept, the rest counted per disk; release hands out seconds in order', () => {
  const ledger = new SampleLedger(2);
  const made: number[] = [];
  const sample =
    (ts: number): (() => IoSample) =>
    () => {
      made.push(ts);
      return {
        ts_us: ts * 1e6,
        dev: '7:0',
        c: 'Read',
        sector: 0,
        bytes: 4096,
        q_ns: null,
        d_ns: 1000,
        pid: 1,
        comm: 'x',
        cgroup: 0,
        cg: '/',
        outlier: false,
      };
    };
  ledger.offer(11, 7, sample(11));
  ledger.offer(10, 7, sample(10));
  ledger.offer(10, 7, sample(10));
  ledger.offer(10, 8, sample(10)); // over second 10's budget of 2
  ledger.offer(10, 7, sample(10)); // and again
  assert.deepEqual(made, [11, 10, 10], 'records over the budget are not even built');
  assert.deepEqual(
    [...(ledger.refusedIn(10) ?? [])],
    [
      [8, 1],
      [7, 1],
    ],
  );
  assert.equal(ledger.refusedIn(11), undefined);
  assert.deepEqual(
    ledger.release(10).map((list) => list.map((x) => x.ts_us / 1e6)),
    [[10, 10]],
  );
  assert.equal(ledger.refusedIn(10), undefined, 'a released second is forgotten');
  assert.deepEqual(
    ledger.release(12).map((list) => list.length),
    [1],
    'second 11 left behind by a clock step goes out with 12',
  );
  assert.deepEqual(ledger.release(12), []);
});

// The untimed-I/O books (collector/decode/untimed.ts) against scripted /proc/diskstats readings:
// the estimate only ever finds I/Os diskstats counted and we did not, never counts one twice,
// survives a device being made again, and subtracts partitions from their disk when they are shown
// on their own. The real-kernel side is in collector-conservation.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClassNamer } from '../src/collector/decode/classes.js';
import { decodeDiskCounts } from '../src/collector/abi/layout.js';
import { ABI } from './lib/abi.js';
import { opGroupTable } from '../src/collector/loader.js';
import { readDiskstats, UntimedMeter, zeroGroups, type GroupCounts } from '../src/collector/decode/untimed.js';
import { UntimedTracker } from '../src/collector/decode/untimed-tracker.js';

const DISK = (7 << 20) | 0;
const PART = (7 << 20) | 1;

function counts(c: Partial<GroupCounts>): GroupCounts {
  return { ...zeroGroups(), ...c };
}

/** A diskstats source whose next reading the test sets. */
function scripted(first: Map<number, GroupCounts>): { read: () => Map<number, GroupCounts>; set(m: Map<number, GroupCounts>): void } {
  let now = first;
  return { read: () => now, set: (m) => (now = m) };
}

test('untimed = diskstats - start - ours, found once, and never negative', () => {
  const src = scripted(new Map([[DISK, counts({ read: 100, write: 50 })]]));
  const meter = new UntimedMeter(src.read);
  // 10 reads and 5 writes later, all seen by the probes: nothing untimed.
  src.set(new Map([[DISK, counts({ read: 110, write: 55 })]]));
  meter.addCounted(DISK, 'read', 10);
  meter.addCounted(DISK, 'write', 5);
  assert.deepEqual([...meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK])], []);
  // Two writes and a flush the probes never saw.
  src.set(new Map([[DISK, counts({ read: 120, write: 62, flush: 1 })]]));
  meter.addCounted(DISK, 'read', 10);
  meter.addCounted(DISK, 'write', 5);
  assert.deepEqual(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK]).get(DISK), { write: 2, flush: 1 });
  // Measured again with nothing new: not found twice.
  assert.equal(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK]).size, 0);
  // Our count of the still-open second ran ahead of diskstats (counted before the kernel does): no negative untimed.
  assert.equal(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map([[DISK, counts({ read: 3 })]])), [DISK]).size, 0);
  assert.deepEqual(meter.total(DISK), counts({ write: 2, flush: 1 }));
});

test('I/Os of the open second count as ours; a disk made after start begins at zero', () => {
  const NEW = (7 << 20) | 9;
  const src = scripted(new Map([[DISK, counts({ read: 5 })]]));
  const meter = new UntimedMeter(src.read);
  src.set(
    new Map([
      [DISK, counts({ read: 9 })],
      [NEW, counts({ write: 4 })],
    ]),
  );
  const found = meter.measure(
    meter.snapshot(),
    meter.harvestedPlus(
      new Map([
        [DISK, counts({ read: 4 })],
        [NEW, counts({ write: 3 })],
      ]),
    ),
    [DISK, NEW],
  );
  assert.equal(found.get(DISK), undefined);
  assert.deepEqual(found.get(NEW), { write: 1 });
});

test('a device made again (its counters restart) starts new books instead of a negative estimate', () => {
  const src = scripted(new Map([[DISK, counts({ read: 1000 })]]));
  const meter = new UntimedMeter(src.read);
  src.set(new Map([[DISK, counts({ read: 1010 })]]));
  meter.addCounted(DISK, 'read', 10);
  assert.equal(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK]).size, 0);
  src.set(new Map([[DISK, counts({ read: 2 })]])); // removed, made again, 2 reads since
  meter.addCounted(DISK, 'read', 2);
  assert.equal(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK]).size, 0);
  src.set(new Map([[DISK, counts({ read: 5 })]]));
  meter.addCounted(DISK, 'read', 2);
  assert.deepEqual(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK]).get(DISK), { read: 1 });
});

test('with partitions shown on their own, the whole disk is measured without them', () => {
  const src = scripted(
    new Map([
      [DISK, counts({ write: 100, flush: 10 })],
      [PART, counts({ write: 80 })],
    ]),
  );
  const meter = new UntimedMeter(src.read, (dev) => (dev === DISK ? [PART] : []));
  src.set(
    new Map([
      [DISK, counts({ write: 130, flush: 12 })],
      [PART, counts({ write: 105 })],
    ]),
  );
  meter.addCounted(PART, 'write', 25);
  meter.addCounted(DISK, 'write', 5);
  meter.addCounted(DISK, 'flush', 1);
  const found = meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK, PART]);
  assert.deepEqual(found.get(DISK), { flush: 1 });
  assert.equal(found.get(PART), undefined);
});

test('a partition I/O completing between the reads of the disk line and the partition line is no reset and no untimed I/O', () => {
  const src = scripted(
    new Map([
      [DISK, counts({ write: 100 })],
      [PART, counts({ write: 80 })],
    ]),
  );
  const meter = new UntimedMeter(src.read, (dev) => (dev === DISK ? [PART] : []));
  // /proc/diskstats prints the disk's line first: a partition write completing in between is in
  // the partition's line only, so the disk's own count (line minus partitions) dips by one.
  src.set(
    new Map([
      [DISK, counts({ write: 110 })],
      [PART, counts({ write: 91 })],
    ]),
  );
  meter.addCounted(PART, 'write', 11);
  assert.equal(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK, PART]).size, 0);
  // The next reading is consistent again: the dip found nothing, and must leave nothing behind.
  src.set(
    new Map([
      [DISK, counts({ write: 111 })],
      [PART, counts({ write: 91 })],
    ]),
  );
  assert.equal(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK, PART]).size, 0);
  assert.deepEqual(meter.total(DISK), zeroGroups());
  // A partition made again (its line restarts) does start the disk's books anew.
  src.set(
    new Map([
      [DISK, counts({ write: 115 })],
      [PART, counts({ write: 3 })],
    ]),
  );
  meter.addCounted(PART, 'write', 3);
  assert.equal(meter.measure(meter.snapshot(), meter.harvestedPlus(new Map()), [DISK, PART]).get(DISK), undefined);
});

test('measured against running counts given whole (the kernel per-disk table): nothing is added to them', () => {
  const src = scripted(new Map([[DISK, counts({ read: 100, write: 50 })]]));
  const meter = new UntimedMeter(src.read);
  // Harvested counts are not ours here: only what measure() is given is.
  meter.addCounted(DISK, 'read', 1000);
  src.set(new Map([[DISK, counts({ read: 130, write: 50, flush: 2 })]]));
  assert.deepEqual(meter.measure(meter.snapshot(), new Map([[DISK, counts({ read: 28, flush: 2 })]]), [DISK]).get(DISK), { read: 2 });
  // The table ran ahead (I/Os counted by us, not yet by the kernel): a low estimate, nothing found, nothing taken back.
  src.set(new Map([[DISK, counts({ read: 131, write: 50, flush: 2 })]]));
  assert.equal(meter.measure(meter.snapshot(), new Map([[DISK, counts({ read: 33, flush: 2 })]]), [DISK]).size, 0);
  // Once the kernel caught up, exactly the rest: 140 - 100 - 37 = 3, of which 2 were found already.
  src.set(new Map([[DISK, counts({ read: 140, write: 50, flush: 2 })]]));
  assert.deepEqual(meter.measure(meter.snapshot(), new Map([[DISK, counts({ read: 37, flush: 2 })]]), [DISK]).get(DISK), { read: 1 });
  // In all: 3 untimed reads, each found once.
  assert.deepEqual(meter.total(DISK), counts({ read: 3 }));
});

test('/proc/diskstats is read per op group, by dev_t', () => {
  const stats = readDiskstats();
  assert.ok(stats.size > 0, '/proc/diskstats lists no device');
  for (const c of stats.values()) for (const v of Object.values(c)) assert.ok(Number.isInteger(v) && v >= 0);
});

test('the kernel per-disk table is summed over CPUs by dev_t, free entries skipped', () => {
  const cpus = 2;
  const table = ABI.records.bh_disk_counts;
  const entry = ABI.records.bh_disk_count;
  const buf = Buffer.alloc(table.size * cpus);
  const put = (cpu: number, slot: number, dev: number, n: readonly number[]): void => {
    const at = cpu * table.size + table.at.e + slot * entry.size;
    buf.writeUInt32LE(dev, at + entry.at.dev);
    buf.writeUInt32LE(1, at + entry.at.used);
    n.forEach((v, g) => buf.writeBigUInt64LE(BigInt(v), at + entry.at.n + g * 8));
  };
  put(0, 3, DISK, [10, 20, 30, 40]);
  put(1, 4, DISK, [1, 2, 3, 4]); // another slot on the other CPU (probed past a taken one)
  put(1, ABI.diskCountSlots - 1, PART, [0, 7, 0, 0]);
  // A free entry's dev is not a disk, whatever it holds.
  buf.writeUInt32LE(PART, table.at.e + entry.at.dev);
  buf.writeBigUInt64LE(99n, table.at.e + entry.at.n);
  const out = decodeDiskCounts(ABI, buf, table.size, cpus);
  assert.deepEqual(out.get(DISK), { read: 11, write: 22, discard: 33, flush: 44 });
  assert.deepEqual(out.get(PART), counts({ write: 7 }));
  assert.equal(out.size, 2);
});

test("the kernel's op -> group table is the namer's rule", () => {
  const ops = new Map([
    ['REQ_OP_READ', 0],
    ['REQ_OP_WRITE', 1],
    ['REQ_OP_FLUSH', 2],
    ['REQ_OP_DISCARD', 3],
    ['REQ_OP_WRITE_ZEROES', 9],
    ['REQ_OP_DRV_IN', 34],
  ]);
  const namer = new ClassNamer(ops, ABI.classBits);
  const table = opGroupTable(namer, ABI.opGroupTableSize);
  assert.equal(table.length, 64, 'op_group[64] in blkheat.bpf.c');
  // OP_GROUPS order: read, write, discard, flush (the kernel indexes bh_disk_count.n with these).
  assert.deepEqual([table[0], table[1], table[2], table[3], table[9], table[34]], [0, 1, 3, 2, 1, 0]);
  // DRV_IN is even, so a read by parity, as op_stat_group() would have it; diskstats never counts
  // it because passthrough classes carry BH_CLS_NOSTAT, which the namer (and count_disk()) check first.
  assert.equal(namer.group(34 | ABI.classBits.nostat), undefined);
});

test('untimed I/Os keep the second they were measured after, however late their frames leave', () => {
  const src = scripted(new Map([[DISK, counts({ read: 100 })]]));
  let ours = counts({});
  const warnings: string[] = [];
  const tracker = new UntimedTracker({
    meter: new UntimedMeter(src.read),
    controls: { readDiskCounts: () => new Map([[DISK, ours]]), readCounters: () => undefined },
    scope: { shownDev: (dev) => dev, measuredDisks: () => [DISK] },
    disks: () => [],
    warn: (m) => warnings.push(m),
    diskCountSlots: ABI.diskCountSlots,
  });
  // Second 100: 10 reads, 3 of them unseen; second 101: 5 reads, 2 unseen. Both measured on time.
  src.set(new Map([[DISK, counts({ read: 110 })]]));
  ours = counts({ read: 7 });
  tracker.measureNow(100);
  src.set(new Map([[DISK, counts({ read: 115 })]]));
  ours = counts({ read: 10 });
  tracker.measureNow(101);
  // The harvest ran late and emits both seconds at once: each frame carries its own.
  assert.deepEqual(tracker.found(100).get(DISK), { read: 3 });
  tracker.emitted(100);
  assert.deepEqual(tracker.found(101).get(DISK), { read: 2 });
  tracker.emitted(101);
  assert.equal(tracker.found(101).size, 0, 'emitted untimed I/Os are not carried twice');
  // Found for a second whose frame already left: it goes with the next frame, not lost.
  src.set(new Map([[DISK, counts({ read: 116 })]]));
  tracker.measureNow(101);
  assert.deepEqual(tracker.found(102).get(DISK), { read: 1 });
  assert.deepEqual(warnings, []);
});

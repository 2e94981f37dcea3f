// The untimed-I/O books (collector/untimed.ts) against scripted /proc/diskstats readings: the
// estimate only ever finds I/Os diskstats counted and we did not, never counts one twice,
// survives a device being made again, and subtracts partitions from their disk when they are
// shown on their own. The real-kernel side is in collector-conservation.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readDiskstats, UntimedMeter, zeroGroups, type GroupCounts } from '../src/collector/untimed.js';

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
  assert.deepEqual([...meter.measure(meter.snapshot(), new Map(), [DISK])], []);
  // Two writes and a flush the probes never saw.
  src.set(new Map([[DISK, counts({ read: 120, write: 62, flush: 1 })]]));
  meter.addCounted(DISK, 'read', 10);
  meter.addCounted(DISK, 'write', 5);
  assert.deepEqual(meter.measure(meter.snapshot(), new Map(), [DISK]).get(DISK), { write: 2, flush: 1 });
  // Measured again with nothing new: not found twice.
  assert.equal(meter.measure(meter.snapshot(), new Map(), [DISK]).size, 0);
  // Our count of the still-open second ran ahead of diskstats (counted before the kernel does): no negative untimed.
  assert.equal(meter.measure(meter.snapshot(), new Map([[DISK, counts({ read: 3 })]]), [DISK]).size, 0);
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
    new Map([
      [DISK, counts({ read: 4 })],
      [NEW, counts({ write: 3 })],
    ]),
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
  assert.equal(meter.measure(meter.snapshot(), new Map(), [DISK]).size, 0);
  src.set(new Map([[DISK, counts({ read: 2 })]])); // removed, made again, 2 reads since
  meter.addCounted(DISK, 'read', 2);
  assert.equal(meter.measure(meter.snapshot(), new Map(), [DISK]).size, 0);
  src.set(new Map([[DISK, counts({ read: 5 })]]));
  meter.addCounted(DISK, 'read', 2);
  assert.deepEqual(meter.measure(meter.snapshot(), new Map(), [DISK]).get(DISK), { read: 1 });
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
  const found = meter.measure(meter.snapshot(), new Map(), [DISK, PART]);
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
  assert.equal(meter.measure(meter.snapshot(), new Map(), [DISK, PART]).size, 0);
  // The next reading is consistent again: the dip found nothing, and must leave nothing behind.
  src.set(
    new Map([
      [DISK, counts({ write: 111 })],
      [PART, counts({ write: 91 })],
    ]),
  );
  assert.equal(meter.measure(meter.snapshot(), new Map(), [DISK, PART]).size, 0);
  assert.deepEqual(meter.total(DISK), zeroGroups());
  // A partition made again (its line restarts) does start the disk's books anew.
  src.set(
    new Map([
      [DISK, counts({ write: 115 })],
      [PART, counts({ write: 3 })],
    ]),
  );
  meter.addCounted(PART, 'write', 3);
  assert.equal(meter.measure(meter.snapshot(), new Map(), [DISK, PART]).get(DISK), undefined);
});

test('/proc/diskstats is read per op group, by dev_t', () => {
  const stats = readDiskstats();
  assert.ok(stats.size > 0, '/proc/diskstats lists no device');
  for (const c of stats.values()) for (const v of Object.values(c)) assert.ok(Number.isInteger(v) && v >= 0);
});

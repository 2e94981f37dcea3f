// Map operations on a loaded object, without tracing: the test writes the maps itself.
import assert from 'node:assert/strict';
import { before, after, test } from 'node:test';
import { openObject, possibleCpus, type BpfObject } from '../src/index.js';
import { expectBpfError, objectPath, readU64, u32, u64 } from './helpers.js';

let obj: BpfObject;

before(async () => {
  obj = openObject(objectPath());
  await obj.load();
});

after(() => obj.close());

test('map info: type names, sizes, per-CPU value buffer size, max entries', () => {
  const info = (name: string) => {
    const m = obj.map(name);
    return {
      name: m.name,
      type: m.type,
      keySize: m.keySize,
      valueSize: m.valueSize,
      valueBufferSize: m.valueBufferSize,
      maxEntries: m.maxEntries,
    };
  };
  assert.deepEqual(info('scratch'), { name: 'scratch', type: 'hash', keySize: 4, valueSize: 8, valueBufferSize: 8, maxEntries: 1024 });
  assert.deepEqual(info('percpu_events'), {
    name: 'percpu_events',
    type: 'percpu_array',
    keySize: 4,
    valueSize: 8,
    valueBufferSize: 8 * possibleCpus(),
    maxEntries: 1,
  });
  assert.deepEqual(info('events'), {
    name: 'events',
    type: 'ringbuf',
    keySize: 0,
    valueSize: 0,
    valueBufferSize: 0,
    maxEntries: 256 * 1024,
  });
  // Internal maps are reachable by their ELF section name too.
  assert.equal(obj.map('.rodata').type, 'array');
  assert.equal(obj.map('.bss').valueSize, 16);
  assert.ok(obj.map('scratch').fd > 0);
});

test('update flags, lookup, delete', () => {
  const m = obj.map('scratch');
  assert.equal(m.lookup(u32(7)), undefined);
  assert.equal(m.delete(u32(7)), false);
  expectBpfError(() => m.update(u32(7), u64(1), 'exist'), 'ENOENT', /map 'scratch' update/);
  m.update(u32(7), u64(1), 'noexist');
  expectBpfError(() => m.update(u32(7), u64(2), 'noexist'), 'EEXIST');
  m.update(u32(7), u64(3), 'exist');
  assert.deepEqual(m.lookup(u32(7)), u64(3));
  m.update(u32(7), u64(4));
  assert.deepEqual(m.lookup(u32(7)), u64(4));
  assert.equal(m.delete(u32(7)), true);
  assert.equal(m.lookup(u32(7)), undefined);
});

test('keys, lookupBatch and lookupAndDeleteBatch over a full hash map', () => {
  const m = obj.map('scratch');
  for (let k = 0; k < 1024; k++) m.update(u32(k), u64(k * 3 + 1), 'noexist');
  expectBpfError(() => m.update(u32(5000), u64(0), 'noexist'), 'E2BIG');

  const keys = m.keys().map((k) => k.readUInt32LE(0));
  assert.equal(keys.length, 1024);
  assert.deepEqual(
    [...keys].sort((a, b) => a - b),
    Array.from({ length: 1024 }, (_, i) => i),
  );

  assert.equal(m.supportsBatch(), true);
  const all = m.lookupBatch();
  assert.equal(all.count, 1024);
  assert.equal(all.keys.length, 1024 * 4);
  assert.equal(all.values.length, 1024 * 8);
  const seen = new Set<number>();
  for (let i = 0; i < all.count; i++) {
    const k = all.keys.readUInt32LE(i * 4);
    assert.equal(readU64(all.values, i * 8), k * 3 + 1, `value of key ${k}`);
    seen.add(k);
  }
  assert.equal(seen.size, 1024);
  assert.equal(m.keys().length, 1024, 'lookupBatch leaves the map alone');

  const taken = m.lookupAndDeleteBatch();
  assert.equal(taken.count, 1024);
  for (let i = 0; i < taken.count; i++) assert.equal(readU64(taken.values, i * 8), taken.keys.readUInt32LE(i * 4) * 3 + 1);
  assert.deepEqual(m.keys(), []);
  const empty = m.lookupAndDeleteBatch();
  assert.deepEqual([empty.count, empty.keys.length, empty.values.length], [0, 0, 0]);
});

test('per-CPU array: one roundUp(valueSize, 8) slot per possible CPU, batch lookup works, delete does not', () => {
  const m = obj.map('percpu_events');
  const cpus = possibleCpus();
  const value = Buffer.alloc(m.valueBufferSize);
  for (let cpu = 0; cpu < cpus; cpu++) value.writeBigUInt64LE(BigInt(100 + cpu), cpu * 8);
  m.update(u32(0), value);
  assert.deepEqual(m.lookup(u32(0)), value);
  expectBpfError(() => m.update(u32(0), u64(1)), 'EINVAL', new RegExp(`value is 8 bytes, expected ${8 * cpus} \\(valueBufferSize\\)`));
  assert.deepEqual(
    m.keys().map((k) => k.readUInt32LE(0)),
    [0],
  );
  const batch = m.lookupBatch();
  assert.equal(batch.count, 1);
  assert.deepEqual(batch.values, value);
  expectBpfError(() => m.delete(u32(0)), 'EINVAL', /percpu_array maps may not support this operation/);
  assert.equal(m.supportsBatch(), true, 'arrays support batch lookups...');
  const err = expectBpfError(() => m.lookupAndDeleteBatch(), 'ENOTSUPP', /percpu_array maps may not support this operation/);
  assert.equal(err.op, 'map.lookupAndDeleteBatch', '...but not batch deletes');
  assert.equal(m.lookup(u32(1)), undefined, 'out-of-range array index reads as absent');
});

test('ring buffer maps support no element or batch operations', () => {
  const m = obj.map('events');
  assert.equal(m.supportsBatch(), false);
  const err = expectBpfError(() => m.lookupBatch(), 'ENOTSUPP');
  assert.equal(err.op, 'map.lookupBatch');
  expectBpfError(() => m.keys(), 'ENOTSUPP', /map 'events' get_next_key/);
  expectBpfError(() => m.lookup(Buffer.alloc(0)), 'ENOTSUPP', /map 'events' lookup/);
});

test('frozen .rodata: readable, and updates fail with EPERM naming the cause', () => {
  const rodata = obj.map('.rodata');
  assert.deepEqual(rodata.lookup(u32(0)), Buffer.alloc(8), 'both knobs default to 0');
  const err = expectBpfError(() => rodata.update(u32(0), Buffer.alloc(8)), 'EPERM', /read-only from user space/);
  assert.equal(err.op, 'map.update');
  assert.doesNotMatch(err.message, /needs root/, 'root is not the problem here');
});

test('.bss/.data maps are plain arrays readable after load', () => {
  const bss = obj.map('.bss');
  const value = bss.lookup(u32(0));
  assert.ok(value);
  assert.equal(value.length, 16);
  assert.deepEqual(value.subarray(0, 8), obj.getGlobal('total_events'));
  assert.deepEqual(obj.map('.data').lookup(u32(0)), u32(1), 'enabled = 1');
});

// Real block I/O on loop devices, counted by loader_test.bpf.o and checked against the kernel's
// own accounting (/proc/diskstats): maps, globals, ring buffers (both delivery paths). Each
// measured window runs under ftrace's completion witness (witness.ts): on a kernel that runs no
// BPF program on top of pid 1's threads, the program's counts may be short of dd's and
// diskstats' by exactly the completions the witness saw run there, and by no more.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { completedRequests, createLoopDevice, diskstatsDelta, readDiskstats, waitFor } from '@blkheat/testkit';
import { openObject, possibleCpus, type BpfObject } from '../src/index.js';
import { EVENT_SIZE, counter, decodeEvent, directReads, kernelDev, objectPath, readU64, u32 } from './helpers.js';
import { assertSeenOf, readsUntilOneSeen, witnessedReads } from './witness.js';

async function loaded(
  t: { after(fn: () => void): void },
  knobs: { targetDev?: number; noWakeup?: boolean; raw?: boolean } = {},
): Promise<BpfObject> {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  if (knobs.targetDev !== undefined) obj.setGlobal('target_dev', u32(knobs.targetDev));
  if (knobs.noWakeup) obj.setGlobal('no_wakeup', u32(1));
  if (knobs.raw) {
    obj.setAutoload('count_complete', false);
    obj.setAutoload('count_complete_raw', true);
  }
  await obj.load();
  return obj;
}

test('per-disk completion counts equal the /proc/diskstats delta exactly (tp_btf)', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 16, t });
  const obj = await loaded(t);
  const counts = obj.map('dev_counts');
  const key = u32(kernelDev(loop.major, loop.minor));
  const link = obj.attach('count_complete');
  assert.equal(link.program, 'count_complete');

  const bpfBefore = counter(counts, key);
  const before = readDiskstats();
  const seen = await witnessedReads(t, loop, 300);
  const after = readDiskstats();
  const bpfAfter = counter(counts, key);

  const delta = diskstatsDelta(before, after).get(loop.name);
  assert.ok(delta, `${loop.name} is in /proc/diskstats`);
  // diskstats counts every completion, wherever it ran.
  assert.equal(delta.reads, 300, 'dd iflag=direct bs=4096 count=300 completes 300 read requests');
  assert.equal(bpfAfter - bpfBefore, completedRequests(delta) - seen.hiddenFromBpf, seen.text);
  assert.equal(bpfAfter - bpfBefore, delta.reads - seen.hiddenFromBpf, seen.text);
  link.close();
});

test('the raw_tp variant counts the same requests after toggling autoload', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 8, t });
  const dev = kernelDev(loop.major, loop.minor);
  const obj = await loaded(t, { raw: true, targetDev: dev });
  assert.deepEqual(
    obj.programs().map((p) => [p.name, p.autoload]),
    [
      ['count_complete', false],
      ['count_complete_raw', true],
      ['rejected_by_verifier', false],
    ],
  );
  assert.throws(() => obj.attach('count_complete'), /was not loaded/);
  obj.attach('count_complete_raw');
  const before = readDiskstats();
  const seen = await witnessedReads(t, loop, 120);
  const delta = diskstatsDelta(before, readDiskstats()).get(loop.name);
  assert.ok(delta);
  assert.equal(delta.reads, 120);
  // raw_tp programs run through bpf_trace_run3() too: the same rule.
  assert.equal(counter(obj.map('dev_counts'), u32(dev)), 120 - seen.hiddenFromBpf, seen.text);
});

test('target_dev knob (setGlobal before load) filters to one disk; .bss, .data and per-CPU values agree', async (t) => {
  const a = createLoopDevice({ sizeMiB: 8, t });
  const b = createLoopDevice({ sizeMiB: 8, t });
  const devA = kernelDev(a.major, a.minor);
  const devB = kernelDev(b.major, b.minor);
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  obj.setGlobal('target_dev', u32(devA));
  assert.deepEqual(obj.getGlobal('target_dev'), u32(devA), 'getGlobal reads back the initial value before load');
  await obj.load();
  assert.deepEqual(obj.getGlobal('target_dev'), u32(devA), 'and the kernel value after load');
  obj.attach('count_complete');

  const seenA = await witnessedReads(t, a, 50);
  await directReads(b.path, 70); // filtered out: nothing of B is counted, seen or not
  const counted = 50 - seenA.hiddenFromBpf;
  const counts = obj.map('dev_counts');
  assert.equal(counter(counts, u32(devA)), counted, seenA.text);
  assert.equal(counts.lookup(u32(devB)), undefined, 'disk B is filtered out');
  assert.deepEqual(
    counts.keys().map((k) => k.readUInt32LE(0)),
    counted > 0 ? [devA] : [],
  );
  assert.equal(readU64(obj.getGlobal('total_events')), counted, `.bss counter (${seenA.text})`);

  // Per-CPU array: one 8-byte slot per possible CPU, summing to the total.
  const percpu = obj.map('percpu_events');
  assert.equal(percpu.valueBufferSize, 8 * possibleCpus());
  const slots = percpu.lookup(u32(0));
  assert.ok(slots);
  assert.equal(slots.length, percpu.valueBufferSize);
  let sum = 0;
  for (let cpu = 0; cpu < possibleCpus(); cpu++) sum += readU64(slots, cpu * 8);
  assert.equal(sum, counted);

  // .data is writable after load: switching 'enabled' off stops counting.
  obj.setGlobal('enabled', u32(0));
  assert.deepEqual(obj.getGlobal('enabled'), u32(0));
  await directReads(a.path, 30);
  // No witness: nothing may be counted while disabled, whether the program ran or not.
  assert.equal(counter(counts, u32(devA)), counted, 'nothing counted while disabled');
  obj.setGlobal('enabled', u32(1));
  const seenAgain = await witnessedReads(t, a, 10);
  assert.equal(counter(counts, u32(devA)), counted + 10 - seenAgain.hiddenFromBpf, seenAgain.text);
});

test('lookupAndDeleteBatch returns the per-disk counts and empties the map', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 8, t });
  const dev = kernelDev(loop.major, loop.minor);
  const obj = await loaded(t, { targetDev: dev });
  obj.attach('count_complete');
  const seen = await readsUntilOneSeen(t, loop, 40);
  const first = seen.reads - seen.hidden;
  const counts = obj.map('dev_counts');
  assert.equal(counts.supportsBatch(), true);

  const peek = counts.lookupBatch();
  assert.equal(peek.count, 1);
  assert.equal(peek.keys.readUInt32LE(0), dev);
  assert.equal(readU64(peek.values), first, `${seen.hidden} of ${seen.reads} completions hidden from BPF`);

  const taken = counts.lookupAndDeleteBatch();
  assert.equal(taken.count, 1);
  assert.equal(taken.keys.length, 4);
  assert.equal(taken.values.length, 8);
  assert.equal(taken.keys.readUInt32LE(0), dev);
  assert.equal(readU64(taken.values), first);
  assert.deepEqual(counts.keys(), [], 'the batch deleted the entry');

  const again = await readsUntilOneSeen(t, loop, 5);
  const next = counts.lookupAndDeleteBatch();
  assert.equal(next.count, 1);
  assert.equal(
    readU64(next.values),
    again.reads - again.hidden,
    `counting restarts from zero: nothing lost or counted twice (${again.hidden} of ${again.reads} completions hidden from BPF)`,
  );
});

test('ring buffer: consume() drains one record per I/O submitted with BPF_RB_NO_WAKEUP', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 8, t });
  const dev = kernelDev(loop.major, loop.minor);
  const obj = await loaded(t, { targetDev: dev, noWakeup: true });
  const rb = obj.openRingBuffer('events');
  t.after(() => rb.close());
  obj.attach('count_complete');
  assert.deepEqual(rb.consume(), [], 'nothing before I/O');

  const seen = await witnessedReads(t, loop, 64);
  const events = rb.consume().map(decodeEvent);
  assert.equal(events.length, 64 - seen.hiddenFromBpf, seen.text);
  for (const e of events) {
    assert.equal(e.dev, dev);
    assert.equal(e.nrBytes, 4096);
  }
  assertSeenOf(
    events.map((e) => e.sector),
    Array.from({ length: 64 }, (_, i) => i * 8),
    seen.hiddenFromBpf,
    `sequential 4 KiB reads: 8 sectors apart, in completion order (${seen.text})`,
  );
  for (let i = 1; i < events.length; i++) assert.ok(events[i]!.ts >= events[i - 1]!.ts, 'timestamps are monotonic');
  assert.deepEqual(rb.consume(), [], 'a second consume() finds nothing new');
  assert.equal(rb.dropped, 0);
  assert.equal(readU64(obj.getGlobal('ringbuf_drops')), 0);
});

test('ring buffer: onRecords delivers every record via uv_poll wakeups, without a busy loop', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 8, t });
  const dev = kernelDev(loop.major, loop.minor);
  const obj = await loaded(t, { targetDev: dev });
  const received: Buffer[] = [];
  let batches = 0;
  const rb = obj.openRingBuffer('events', {
    onRecords(records) {
      batches++;
      received.push(...records);
    },
  });
  t.after(() => rb.close());
  obj.attach('count_complete');

  // Idle with an active poller: the process must not spin.
  const cpuBefore = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, 300));
  const cpu = process.cpuUsage(cpuBefore);
  assert.ok(cpu.user + cpu.system < 100_000, `idle CPU with a ring buffer open: ${(cpu.user + cpu.system) / 1000} ms in 300 ms`);

  const seen = await witnessedReads(t, loop, 100);
  const records = 100 - seen.hiddenFromBpf;
  await waitFor(() => received.length >= records, 5000, `${records} records through onRecords (${seen.text})`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(received.length, records, `exactly one record per I/O a BPF program could see (${seen.text})`);
  assert.equal(batches >= 1, records > 0, `${batches} deliveries of ${records} records`);
  const sectors = received.map(decodeEvent).map((e) => {
    assert.equal(e.dev, dev);
    return e.sector;
  });
  assertSeenOf(
    sectors,
    Array.from({ length: 100 }, (_, i) => i * 8),
    seen.hiddenFromBpf,
    `sequential 4 KiB reads, in completion order (${seen.text})`,
  );
  assert.deepEqual(rb.consume(), [], 'onRecords already drained everything');

  // And idle again after wakeups: the drained epoll fd must not stay readable.
  const cpuAfter = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, 300));
  const cpuIdle = process.cpuUsage(cpuAfter);
  assert.ok(cpuIdle.user + cpuIdle.system < 100_000, `idle CPU after deliveries: ${(cpuIdle.user + cpuIdle.system) / 1000} ms in 300 ms`);
  assert.equal(received.length, records);
});

test('ring buffer: maxQueued bounds one drain and counts the rest as dropped', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 8, t });
  const obj = await loaded(t, { targetDev: kernelDev(loop.major, loop.minor), noWakeup: true });
  const rb = obj.openRingBuffer('events', { maxQueued: 10 });
  t.after(() => rb.close());
  obj.attach('count_complete');
  const seen = await witnessedReads(t, loop, 25);
  const submitted = 25 - seen.hiddenFromBpf;
  const records = rb.consume();
  assert.equal(records.length, Math.min(10, submitted), seen.text);
  assert.equal(rb.dropped, submitted - records.length, `records + dropped = the ${submitted} records submitted (${seen.text})`);
  assert.equal(
    records.every((r) => r.length === EVENT_SIZE),
    true,
  );
  assert.deepEqual(rb.consume(), []);
});

test('ring buffer: close() inside onRecords stops delivery at once and is safe', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 8, t });
  const obj = await loaded(t, { targetDev: kernelDev(loop.major, loop.minor) });
  let calls = 0;
  const rb = obj.openRingBuffer('events', {
    onRecords() {
      calls++;
      rb.close();
      rb.close();
    },
  });
  obj.attach('count_complete');
  // One read (again, should its completion be hidden from BPF: it then gives no record).
  const first = await readsUntilOneSeen(t, loop, 1);
  await waitFor(() => calls > 0, 5000, 'the first onRecords call');
  const later = await witnessedReads(t, loop, 50);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(calls, 1, 'no delivery after close()');
  assert.throws(() => rb.consume(), /is closed \(EBADF\)/);
  // The object still works and counted everything a BPF program could see.
  assert.equal(
    readU64(obj.getGlobal('total_events')),
    first.reads - first.hidden + 50 - later.hiddenFromBpf,
    `${first.reads} + 50 reads, ${first.hidden} and ${later.hiddenFromBpf} of them hidden from BPF (${later.text})`,
  );
});

test('closing the object from inside onRecords closes its ring buffers and links', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 8, t });
  const dev = kernelDev(loop.major, loop.minor);
  const obj = await loaded(t, { targetDev: dev });
  let calls = 0;
  const rb = obj.openRingBuffer('events', {
    onRecords() {
      calls++;
      obj.close();
    },
  });
  const link = obj.attach('count_complete');
  await readsUntilOneSeen(t, loop, 3); // a record needs a completion a BPF program could see
  await waitFor(() => calls > 0, 5000, 'onRecords');
  await directReads(loop.path, 20); // No witness: after close() nothing may be delivered, seen or not.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(calls, 1);
  assert.equal(obj.loaded, false);
  assert.throws(() => rb.consume(), /EBADF/);
  link.close(); // idempotent after the object closed it
});

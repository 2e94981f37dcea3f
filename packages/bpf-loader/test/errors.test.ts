// Bad inputs: each one a BpfError with errno, code and a message naming the problem; never a crash.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BpfError, openObject } from '../src/index.js';
import { expectBpfError, expectBpfRejection, objectPath, u32, u64 } from './helpers.js';

function scratchDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'bpf-loader-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('opening a missing, empty, text or random file fails with errno and libbpf message', (t) => {
  const dir = scratchDir(t);
  const missing = expectBpfError(() => openObject(join(dir, 'nope.bpf.o')), 'ENOENT', /open .*nope\.bpf\.o: No such file or directory/);
  assert.equal(missing.errno, 2);
  assert.equal(missing.op, 'openObject');
  assert.match(missing.libbpfLog, /failed to open/);

  const text = join(dir, 'text.bpf.o');
  writeFileSync(text, 'this is not an ELF file\n');
  const notElf = expectBpfError(() => openObject(text), 'LIBBPF_ERRNO__FORMAT', /not a BPF ELF object/);
  assert.equal(notElf.errno, 4001);
  assert.match(notElf.libbpfLog, /not a proper ELF object/);

  const random = join(dir, 'random.bpf.o');
  writeFileSync(random, randomBytes(4096));
  expectBpfError(() => openObject(random), 'LIBBPF_ERRNO__FORMAT');

  const empty = join(dir, 'empty.bpf.o');
  writeFileSync(empty, '');
  expectBpfError(() => openObject(empty), 'LIBBPF_ERRNO__FORMAT');

  // An ELF file that is not a BPF object (this very Node binary).
  const wrongElf = expectBpfError(() => openObject(process.execPath), 'LIBBPF_ERRNO__FORMAT');
  assert.ok(wrongElf.libbpfLog.length > 0);

  expectBpfError(() => openObject(''), 'EINVAL', /path must not be empty/);
  expectBpfError(() => openObject(42 as unknown as string), 'EINVAL', /path must be a string/);
  expectBpfError(() => openObject(objectPath(), { logLevel: 'loud' as unknown as 'warn' }), 'EINVAL', /logLevel must be/);
  expectBpfError(() => openObject(objectPath(), { onLog: 'x' as unknown as () => void }), 'EINVAL', /onLog must be a function/);
});

test('unknown program, map and global names list what exists', async (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  expectBpfError(
    () => obj.setAutoload('nope', true),
    'ENOENT',
    /no program 'nope' \(programs: count_complete, count_complete_raw, rejected_by_verifier\)/,
  );
  expectBpfError(() => obj.setMaxEntries('nope', 4), 'ENOENT', /no map 'nope' \(maps: .*dev_counts.*loader_t\.rodata/);
  expectBpfError(() => obj.setGlobal('nope', u32(1)), 'ENOENT', /no global variable 'nope' \(globals: .*target_dev/);
  expectBpfError(() => obj.getGlobal('nope'), 'ENOENT');
  await obj.load();
  expectBpfError(() => obj.attach('nope'), 'ENOENT', /no program 'nope'/);
  expectBpfError(() => obj.program('nope'), 'ENOENT', /no program 'nope'/);
  expectBpfError(() => obj.map('nope'), 'ENOENT', /no map 'nope'/);
  expectBpfError(() => obj.openRingBuffer('nope'), 'ENOENT', /no map 'nope'/);
});

test('every key and value length is checked against the map', async (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  await obj.load();
  const m = obj.map('scratch');
  expectBpfError(() => m.lookup(Buffer.alloc(3)), 'EINVAL', /map\.lookup: key is 3 bytes, expected 4 \(keySize\)/);
  expectBpfError(() => m.lookup(Buffer.alloc(5)), 'EINVAL', /key is 5 bytes/);
  expectBpfError(() => m.delete(Buffer.alloc(0)), 'EINVAL', /map\.delete: key is 0 bytes/);
  expectBpfError(() => m.update(u32(1), Buffer.alloc(7)), 'EINVAL', /map\.update: value is 7 bytes, expected 8 \(valueBufferSize\)/);
  expectBpfError(() => m.update(Buffer.alloc(2), u64(1)), 'EINVAL', /key is 2 bytes/);
  expectBpfError(() => m.lookup('abcd' as unknown as Buffer), 'EINVAL', /key must be a Buffer/);
  expectBpfError(() => m.update(u32(1), new Uint16Array(4) as unknown as Buffer), 'EINVAL', /value must be a Buffer/);
  expectBpfError(() => m.update(u32(1), u64(1), 'sometimes' as unknown as 'any'), 'EINVAL', /flag must be 'any', 'noexist' or 'exist'/);
  // A Uint8Array is as good as a Buffer.
  m.update(new Uint8Array(4) as unknown as Buffer, new Uint8Array(8) as unknown as Buffer);
  assert.deepEqual(m.lookup(Buffer.alloc(4)), Buffer.alloc(8));
  expectBpfError(() => obj.setGlobal('enabled', u64(1)), 'EINVAL', /value for 'enabled' is 8 bytes, expected 4/);
  expectBpfError(() => obj.openRingBuffer('scratch'), 'EINVAL', /is a hash map, not a ringbuf/);
  expectBpfError(() => obj.openRingBuffer('events', { maxQueued: 0 }), 'EINVAL', /maxQueued must be an integer/);
  expectBpfError(() => obj.openRingBuffer('events', { maxQueued: 1.5 }), 'EINVAL', /maxQueued must be an integer/);
});

test('wrong phase: before load, after load, load twice', async (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  expectBpfError(() => obj.map('scratch'), 'EINVAL', /not loaded yet/);
  expectBpfError(() => obj.attach('count_complete'), 'EINVAL', /not loaded yet/);
  expectBpfError(() => obj.openRingBuffer('events'), 'EINVAL', /not loaded yet/);
  expectBpfError(() => obj.setMaxEntries('scratch', 0), 'EINVAL', /maxEntries must be an integer in \[1, 4294967295\]/);
  expectBpfError(() => obj.setAutoload('count_complete', 1 as unknown as boolean), 'EINVAL', /autoload must be a boolean/);

  const loading = obj.load();
  expectBpfError(() => obj.programs(), 'EBUSY', /being loaded/);
  expectBpfError(() => obj.setGlobal('enabled', u32(0)), 'EBUSY', /being loaded/);
  await loading;
  assert.equal(obj.loaded, true);

  await expectBpfRejection(
    Promise.resolve().then(() => obj.load()),
    'EBUSY',
    /already loaded/,
  );
  expectBpfError(() => obj.setAutoload('count_complete_raw', true), 'EBUSY', /set autoload before load/);
  expectBpfError(() => obj.setMaxEntries('scratch', 8), 'EBUSY', /set max entries before load/);
  const frozen = expectBpfError(() => obj.setGlobal('target_dev', u32(1)), 'EBUSY', /'target_dev' is in \.rodata, which is frozen/);
  assert.equal(frozen.op, 'setGlobal');
  assert.deepEqual(obj.getGlobal('target_dev'), u32(0), 'the knob kept its load-time value');
});

test('verifier rejection: EACCES with the verdict in the message and the verifier log attached', async (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  obj.setAutoload('rejected_by_verifier', true);
  const err = await expectBpfRejection(
    obj.load(),
    'EACCES',
    /the BPF verifier rejected program 'rejected_by_verifier': R0 invalid mem access 'map_value_or_null'/,
  );
  assert.equal(err.op, 'load');
  assert.doesNotMatch(err.message, /needs root/, 'root is not the problem here');
  assert.match(err.libbpfLog, /-- BEGIN PROG LOAD LOG --/);
  assert.match(err.libbpfLog, /invalid mem access/);
  assert.equal(obj.loaded, false);
  await expectBpfRejection(
    Promise.resolve().then(() => obj.load()),
    'EINVAL',
    /libbpf cannot retry/,
  );
  expectBpfError(() => obj.map('scratch'), 'EINVAL', /failed to load/);
});

test('each failing call carries its own log, even with concurrent loads on other threads', async (t) => {
  const lines: { level: string; line: string }[] = [];
  const bad = openObject(objectPath(), { objectName: 'alpha', logLevel: 'debug', onLog: (level, line) => lines.push({ level, line }) });
  const good = openObject(objectPath(), { objectName: 'beta', logLevel: 'debug' });
  t.after(() => bad.close());
  t.after(() => good.close());
  bad.setAutoload('rejected_by_verifier', true);
  const [badResult, goodResult] = await Promise.allSettled([bad.load(), good.load()]);
  assert.equal(goodResult.status, 'fulfilled');
  assert.equal(badResult.status, 'rejected');
  const err = badResult.reason;
  assert.ok(err instanceof BpfError);
  assert.match(err.libbpfLog, /alpha/);
  assert.doesNotMatch(err.libbpfLog, /beta/, "the other object's log lines stay out");
  assert.ok(
    lines.some((l) => l.level === 'debug'),
    'debug lines reach onLog at logLevel debug',
  );
  assert.ok(lines.some((l) => l.level === 'warn' && /BPF program load failed/.test(l.line)));
  assert.ok(lines.every((l) => !/beta/.test(l.line)));
});

test('quiet by default; onLog without a level gets warnings only', async (t) => {
  const warnings: string[] = [];
  const levels = new Set<string>();
  const obj = openObject(objectPath(), {
    onLog: (level, line) => {
      levels.add(level);
      warnings.push(line);
    },
  });
  t.after(() => obj.close());
  obj.setAutoload('rejected_by_verifier', true);
  await expectBpfRejection(obj.load(), 'EACCES');
  assert.deepEqual([...levels], ['warn']);
  assert.ok(warnings.some((l) => /invalid mem access/.test(l)));

  const quiet = openObject(objectPath(), { logLevel: 'quiet', onLog: () => assert.fail('quiet delivers nothing') });
  t.after(() => quiet.close());
  quiet.setAutoload('rejected_by_verifier', true);
  const err = await expectBpfRejection(quiet.load(), 'EACCES');
  assert.match(err.libbpfLog, /invalid mem access/, 'the error still carries the log');
});

test('closed handles throw EBADF; close() is idempotent everywhere', async (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  await obj.load();
  const map = obj.map('scratch');
  const prog = obj.program('count_complete');
  const link = obj.attach('count_complete');
  const rb = obj.openRingBuffer('events');
  rb.close();
  rb.close();
  expectBpfError(() => rb.consume(), 'EBADF', /ring buffer 'events' is closed/);
  link.close();
  link.close();

  obj.close();
  obj.close();
  assert.equal(obj.loaded, false);
  for (const use of [
    () => obj.programs(),
    () => obj.maps(),
    () => obj.globals(),
    () => obj.map('scratch'),
    () => obj.attach('count_complete'),
    () => obj.setGlobal('enabled', u32(1)),
    () => obj.getGlobal('enabled'),
    () => map.lookup(u32(1)),
    () => map.update(u32(1), u64(1)),
    () => map.keys(),
    () => map.lookupBatch(),
    () => prog.stats(),
  ]) {
    expectBpfError(use, 'EBADF', /is closed/);
  }
  await expectBpfRejection(
    Promise.resolve().then(() => obj.load()),
    'EBADF',
  );
  assert.equal(map.fd, -1);
  assert.equal(prog.fd, -1);
  link.close();
});

test('close() while load() runs: the load is cancelled and everything freed', async () => {
  const obj = openObject(objectPath());
  const loading = obj.load();
  obj.close();
  obj.close();
  expectBpfError(() => obj.maps(), 'EBADF');
  await expectBpfRejection(loading, 'ECANCELED', /closed while loading/);
  assert.equal(obj.loaded, false);
});

test('wrapped classes cannot be constructed from JS', async (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  await obj.load();
  expectBpfError(() => Reflect.construct(obj.constructor, []), 'EINVAL', /use openObject\(\)/);
  expectBpfError(() => Reflect.construct(obj.map('scratch').constructor, []), 'EINVAL', /use BpfObject\.map\(\)/);
});

// Opening and inspecting an object, configuring it before load.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { libbpfVersion, openObject, possibleCpus } from '../src/index.js';
import { expectBpfError, objectPath, u32, u64 } from './helpers.js';

function possibleFromSysfs(): number {
  // e.g. "0-1" or "0,2-3"
  const text = readFileSync('/sys/devices/system/cpu/possible', 'utf8').trim();
  let count = 0;
  for (const part of text.split(',')) {
    const [a, b] = part.split('-').map(Number);
    count += b === undefined ? 1 : b - (a ?? 0) + 1;
  }
  return count;
}

test('libbpf version and possible CPUs', () => {
  assert.equal(libbpfVersion(), '1.1', 'the addon links Debian libbpf 1.1 statically');
  assert.equal(possibleCpus(), possibleFromSysfs());
});

test('programs, maps and globals of an opened (not loaded) object', (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  assert.equal(obj.path, objectPath());
  assert.equal(obj.loaded, false);
  assert.deepEqual(obj.programs(), [
    { name: 'count_complete', section: 'tp_btf/block_rq_complete', type: 'tracing', autoload: true },
    { name: 'count_complete_raw', section: 'raw_tp/block_rq_complete', type: 'raw_tracepoint', autoload: false },
    { name: 'rejected_by_verifier', section: 'raw_tp/block_rq_complete', type: 'raw_tracepoint', autoload: false },
  ]);
  const maps = new Map(obj.maps().map((m) => [m.name, m]));
  assert.deepEqual(maps.get('dev_counts'), { name: 'dev_counts', type: 'hash', keySize: 4, valueSize: 8, maxEntries: 64 });
  assert.deepEqual(maps.get('percpu_events'), { name: 'percpu_events', type: 'percpu_array', keySize: 4, valueSize: 8, maxEntries: 1 });
  assert.deepEqual(maps.get('scratch'), { name: 'scratch', type: 'hash', keySize: 4, valueSize: 8, maxEntries: 1024 });
  assert.deepEqual(maps.get('events'), { name: 'events', type: 'ringbuf', keySize: 0, valueSize: 0, maxEntries: 262144 });
  assert.deepEqual(maps.get('loader_t.rodata'), { name: 'loader_t.rodata', type: 'array', keySize: 4, valueSize: 8, maxEntries: 1 });
  assert.equal(maps.size, 7);

  const globals = [...obj.globals()].sort((a, b) => a.name.localeCompare(b.name));
  assert.deepEqual(globals, [
    { name: 'enabled', section: '.data', offset: 0, size: 4, readOnly: false },
    { name: 'no_wakeup', section: '.rodata', offset: 4, size: 4, readOnly: true },
    { name: 'ringbuf_drops', section: '.bss', offset: 8, size: 8, readOnly: false },
    { name: 'target_dev', section: '.rodata', offset: 0, size: 4, readOnly: true },
    { name: 'total_events', section: '.bss', offset: 0, size: 8, readOnly: false },
  ]);
  assert.deepEqual(obj.getGlobal('enabled'), u32(1), 'initial value from the ELF file');
  assert.deepEqual(obj.getGlobal('total_events'), u64(0));
});

test('setGlobal writes only its own bytes of the section', (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  obj.setGlobal('no_wakeup', u32(0xaabbccdd));
  assert.deepEqual(obj.getGlobal('no_wakeup'), u32(0xaabbccdd));
  assert.deepEqual(obj.getGlobal('target_dev'), u32(0), 'the neighbour in .rodata is untouched');
  obj.setGlobal('target_dev', u32(7));
  assert.deepEqual(obj.getGlobal('no_wakeup'), u32(0xaabbccdd));
});

test('objectName names the internal maps; setMaxEntries applies at load', async (t) => {
  const obj = openObject(objectPath(), { objectName: 'knobs' });
  t.after(() => obj.close());
  assert.ok(obj.maps().some((m) => m.name === 'knobs.rodata'));
  obj.setMaxEntries('scratch', 16);
  assert.equal(obj.maps().find((m) => m.name === 'scratch')?.maxEntries, 16);
  await obj.load();
  assert.equal(obj.loaded, true);
  const scratch = obj.map('scratch');
  assert.equal(scratch.maxEntries, 16);
  for (let k = 0; k < 16; k++) scratch.update(u32(k), u64(k), 'noexist');
  expectBpfError(() => scratch.update(u32(99), u64(1), 'noexist'), 'E2BIG');
  assert.equal(scratch.lookupBatch().count, 16);
  assert.ok(obj.program('count_complete').fd > 0);
  const stats = obj.program('count_complete').stats();
  assert.deepEqual(Object.keys(stats).sort(), ['recursionMisses', 'runCount', 'runTimeNs']);
});

// Kernel BTF queries and BPF run-time statistics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLoopDevice } from '@blkheat/testkit';
import { enableStats, loadKernelBtf, openObject } from '../src/index.js';
import { expectBpfError, kernelDev, objectPath, u32 } from './helpers.js';
import { witnessedReads } from './witness.js';

test('kernel BTF: enums, enumerators, struct fields (anonymous members too), tracepoint prototypes', (t) => {
  const btf = loadKernelBtf();
  t.after(() => btf.close());
  const ops = btf.enumValues('req_op');
  assert.ok(ops instanceof Map);
  assert.equal(ops.get('REQ_OP_READ'), 0);
  assert.equal(ops.get('REQ_OP_WRITE'), 1);
  assert.equal(ops.get('REQ_OP_FLUSH'), 2);
  assert.equal(ops.get('REQ_OP_DISCARD'), 3);
  assert.equal(btf.enumValues('no_such_enum_blkheat'), undefined);

  const sync = btf.enumeratorValue('__REQ_SYNC');
  assert.equal(typeof sync, 'number');
  assert.equal(sync, btf.enumValues('req_flag_bits')?.get('__REQ_SYNC'));
  assert.equal(btf.enumeratorValue('REQ_OP_WRITE'), 1);
  assert.equal(btf.enumeratorValue('NO_SUCH_ENUMERATOR_BLKHEAT'), undefined);

  assert.equal(btf.hasField('request', '__sector'), true);
  assert.equal(btf.hasField('request', 'queuelist'), true, 'member of an anonymous union');
  assert.equal(btf.hasField('request', 'icq'), false, 'member of a named struct member is not a field');
  assert.equal(btf.hasField('request', 'no_such_field'), false);
  assert.equal(btf.hasField('gendisk', 'first_minor'), true);
  assert.equal(btf.hasField('no_such_struct_blkheat', 'x'), false);

  assert.deepEqual(btf.funcProtoParams('btf_trace_block_rq_complete'), ['void *', 'struct request *', 'blk_status_t', 'unsigned int']);
  assert.deepEqual(btf.funcProtoParams('btf_trace_block_rq_issue'), ['void *', 'struct request *']);
  assert.equal(btf.funcProtoParams('btf_trace_no_such_tracepoint'), undefined);
  assert.equal(btf.funcProtoParams('u64'), undefined, 'a typedef that is not a function pointer');
});

test('BTF from a file; missing file; closed handle', () => {
  const btf = loadKernelBtf('/sys/kernel/btf/vmlinux');
  assert.equal(btf.hasField('request', 'start_time_ns'), true);
  btf.close();
  btf.close();
  expectBpfError(() => btf.hasField('request', '__sector'), 'EBADF', /is closed/);
  expectBpfError(() => btf.enumValues('req_op'), 'EBADF');
  const missing = expectBpfError(() => loadKernelBtf('/nonexistent/vmlinux'), 'ENOENT', /parse BTF from \/nonexistent\/vmlinux/);
  assert.equal(missing.op, 'loadKernelBtf');
});

test('enableStats: run count and time accumulate while the handle is open', async (t) => {
  const loop = createLoopDevice({ sizeMiB: 8, t });
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  obj.setGlobal('target_dev', u32(kernelDev(loop.major, loop.minor)));
  await obj.load();
  const prog = obj.program('count_complete');

  // (The kernel.bpf_stats_enabled sysctl shows only what was written to it, not fd holders, so
  // the effect is checked on the counters themselves.)
  const stats = enableStats();
  t.after(() => stats.close());
  obj.attach('count_complete');
  const start = prog.stats();
  const seen = await witnessedReads(t, loop, 40);
  const end = prog.stats();
  // The program runs for every completion on any disk; at least for our 40, less those that ran
  // where this kernel runs no BPF program (on top of pid 1's threads), as ftrace witnessed.
  const runs = end.runCount - start.runCount;
  assert.ok(runs >= 40 - seen.hiddenFromBpf, `run count grew by ${runs} (${seen.text})`);
  if (runs > 0) assert.ok(end.runTimeNs > start.runTimeNs);
  assert.equal(end.recursionMisses, 0);
  stats.close();
  stats.close();
});

// Resource lifecycle: repeated load/attach/close cycles, GC of dropped handles (in a child
// process with --expose-gc), children outliving their object.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScript } from '@blkheat/testkit';
import { openObject } from '../src/index.js';
import { objectPath, openFdCount, u32, u64 } from './helpers.js';

async function cycle(): Promise<number> {
  const obj = openObject(objectPath());
  obj.setGlobal('no_wakeup', u32(1));
  await obj.load();
  const link = obj.attach('count_complete');
  obj.attach('count_complete'); // a second link on the same program, closed by obj.close()
  const rb = obj.openRingBuffer('events', { onRecords: () => undefined });
  obj.openRingBuffer('events').consume();
  obj.map('scratch').update(u32(1), u64(1));
  obj.program('count_complete').stats();
  const whileOpen = openFdCount();
  link.close();
  rb.close();
  obj.close();
  return whileOpen;
}

test('50 open/load/attach/close cycles return the fd count to its start value', async () => {
  await cycle(); // warm-up: libuv thread pool, lazily opened files
  const start = openFdCount();
  let peak = 0;
  for (let i = 0; i < 50; i++) peak = Math.max(peak, await cycle());
  assert.ok(peak > start + 5, `a loaded object holds fds (start ${start}, while open ${peak})`);
  assert.equal(openFdCount(), start);
});

test('handles dropped without close() are freed by GC (child process, --expose-gc)', async () => {
  const result = await runScript(new URL('./fixtures/gc-churn.ts', import.meta.url), { execArgv: ['--expose-gc'], timeoutMs: 120_000 });
  assert.equal(result.code, 0, `child failed (signal ${result.signal}):\n${result.stderr}`);
  const report: unknown = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '');
  assert.ok(typeof report === 'object' && report !== null);
  const r = report as {
    start: number;
    leakedBeforeGc: number;
    afterGc: number;
    closedHeld: number;
    afterClosed: number;
    childKeptObject: boolean;
    afterChild: number;
  };
  assert.ok(r.leakedBeforeGc >= 20 * 5, `reachable handles hold fds (${r.leakedBeforeGc} for 20 objects)`);
  assert.equal(r.closedHeld, 0, 'closed handles hold no fds even while reachable');
  assert.equal(r.afterGc, r.start, 'GC freed every dropped object, link and ring buffer');
  assert.equal(r.afterClosed, r.start, 'finalizers of closed handles are harmless');
  assert.equal(r.childKeptObject, true, 'a map handle keeps its object alive');
  assert.equal(r.afterChild, r.start);
});

test('links and programs stay usable while the object is open; closing the object detaches', async (t) => {
  const obj = openObject(objectPath());
  t.after(() => obj.close());
  await obj.load();
  const prog = obj.program('count_complete');
  assert.equal(prog.name, 'count_complete');
  assert.equal(prog.section, 'tp_btf/block_rq_complete');
  assert.ok(prog.fd > 0);
  const link = obj.attach('count_complete');
  assert.equal(link.program, 'count_complete');
  link.close();
  const again = obj.attach('count_complete');
  obj.close();
  again.close();
  assert.equal(prog.fd, -1);
});

test('worker threads terminated with open handles neither crash nor leak fds (child process)', async () => {
  const result = await runScript(new URL('./fixtures/worker-exit.ts', import.meta.url), { timeoutMs: 120_000 });
  assert.equal(result.code, 0, `child failed (signal ${result.signal}):\n${result.stderr}`);
  const report = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as { start: number; end: number };
  assert.equal(report.end, report.start);
});

test('an exception from onRecords reaches uncaughtException and delivery goes on (child process)', async () => {
  const result = await runScript(new URL('./fixtures/throwing-callback.ts', import.meta.url), { timeoutMs: 120_000 });
  assert.equal(result.code, 0, `child failed (signal ${result.signal}):\n${result.stderr}`);
  const report = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as { caught: string[]; batches: number; records: number };
  assert.deepEqual(report.caught, ['thrown from onRecords']);
  assert.ok(report.batches >= 2);
  assert.equal(report.records, 11);
});

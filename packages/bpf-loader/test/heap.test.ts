// releaseFreeHeap(): the C heap's free pages go back to the kernel (glibc malloc_trim).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { releaseFreeHeap } from '../src/index.js';

const MiB = 1024 * 1024;

function fullCollection(): void {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  assert.equal(typeof gc, 'function', 'gc is exposed at run time');
  (gc as () => void)();
}

test('freed Buffers in the middle of the C heap go back to the system only when asked', async () => {
  // 64 KiB Buffers are malloc'd from the heap (under glibc's mmap threshold). Keeping one in 16
  // alive leaves the freed ones as holes that free() cannot return by trimming the heap's top:
  // the pages stay with the process until malloc_trim(0) gives them back.
  let buffers: Buffer[] = [];
  for (let i = 0; i < 3200; i++) buffers.push(Buffer.alloc(64 * 1024, i & 0xff));
  buffers = buffers.filter((_, i) => i % 16 === 0);
  fullCollection();
  // V8 frees the backing stores of collected ArrayBuffers on a thread of its own, a little later.
  for (let waited = 0; process.memoryUsage().arrayBuffers > 64 * MiB; waited += 50) {
    assert.ok(waited < 10_000, `the collected Buffers were not freed in 10 s (${process.memoryUsage().arrayBuffers} bytes)`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const before = process.memoryUsage.rss();
  assert.equal(releaseFreeHeap(), true, 'malloc_trim(0) says memory went back');
  const after = process.memoryUsage.rss();
  const released = (before - after) / MiB;
  assert.ok(
    released >= 100,
    `RSS ${(before / MiB).toFixed(0)} -> ${(after / MiB).toFixed(0)} MiB: only ${released.toFixed(0)} MiB of ~187 went back`,
  );
  assert.equal(buffers.length, 200, 'the kept Buffers are still alive');
  assert.equal(buffers[199]?.[0], (199 * 16) & 0xff, 'and unchanged');
});

// Known latency: loop devices over FUSE files whose daemon sleeps D ms per read. At least 95%
// of each disk's read I/Os must land in buckets overlapping [D, 1.25 D).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classOp, lowerBoundSeconds, upperBoundSeconds, denseTotal } from '@blkheat/shared-types';
import { createDelayedLoopDevice, fuseUnavailable, runDd } from '@blkheat/testkit';
import { record, classTotals } from './lib/collect.js';

const fuseMissing = fuseUnavailable();

test(
  'known latency: FUSE-delayed loop devices at 5 ms and 20 ms land in their buckets',
  { timeout: 120_000, skip: fuseMissing ? `SKIPPED LOUDLY: ${fuseMissing}` : false },
  async (t) => {
    const disks = await Promise.all([
      createDelayedLoopDevice({ delayMs: 5, sizeMiB: 32, t }).then((d) => ({ d, delayMs: 5, reads: 300 })),
      createDelayedLoopDevice({ delayMs: 20, sizeMiB: 32, t }).then((d) => ({ d, delayMs: 20, reads: 100 })),
    ]);
    const rec = await record(t);
    const from = Math.floor(Date.now() / 1000) + 1;
    await new Promise((r) => setTimeout(r, from * 1000 - Date.now() + 5));
    await Promise.all(disks.map(({ d, reads }) => runDd({ if: d.path, of: '/dev/null', bs: '4k', count: reads, iflag: 'direct' })));
    const to = Math.floor(Date.now() / 1000) + 1;
    await rec.waitForSecond(to);

    for (const { d, delayMs, reads } of disks) {
      const lo = delayMs / 1000;
      const hi = 1.25 * lo;
      let total = 0;
      let inside = 0;
      for (const [cls, acc] of classTotals(rec.frames, d.dev, from, to + 1)) {
        if (classOp(cls) !== 'Read') continue;
        total += denseTotal(acc.d);
        acc.d.forEach((count, bucket) => {
          if (count > 0 && upperBoundSeconds(bucket) > lo && lowerBoundSeconds(bucket) < hi) inside += count;
        });
      }
      assert.ok(total >= reads, `${d.name}: ${total} reads recorded, expected at least the ${reads} dd issued`);
      const share = inside / total;
      t.diagnostic(
        `${d.name} at ${delayMs} ms: ${inside} of ${total} reads (${(share * 100).toFixed(1)}%) in buckets overlapping [${delayMs}, ${1.25 * delayMs}) ms`,
      );
      assert.ok(
        share >= 0.95,
        `${d.name} (${delayMs} ms): only ${(share * 100).toFixed(1)}% of ${total} reads in buckets overlapping [${delayMs}, ${1.25 * delayMs}) ms`,
      );
    }
  },
);

// Per-cgroup latency histograms on /metrics (serve --metrics-cgroups N, issue 30, 4): off by
// default; with N, each disk's N busiest cgroups since start get a device latency histogram and
// the rest one "(other)", so a disk's cgroup histograms add up to its I/Os, bucket for bucket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Frame } from '@blkheat/shared-types';
import { parseServeArgs } from '../src/service/options.js';
import { nowS, startTestAgent } from './server-fixtures.js';

/** A second of reads on 7:0 charged to four cgroups: /a 10 at bucket 40, /b 5 at 42, /c 3 and /d 1 at 44. */
function second(ts: number): Frame {
  return {
    ts,
    step: 1,
    disks: [
      {
        dev: '7:0',
        cls: [{ c: 'Read', n: 19, d: [40, 10, 42, 5, 44, 4], q: [10, 19] }],
        cg: [
          { g: '/a', n: 10, d: [40, 10] },
          { g: '/b', n: 5, d: [42, 5] },
          { g: '/c', n: 3, d: [44, 3] },
          { g: '/d', n: 1, d: [44, 1] },
        ],
      },
    ],
  };
}

/** `<name>_count` per cgroup label, from the text format. */
function counts(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}_count\\{[^}]*cgroup="([^"]*)"[^}]*\\} (\\S+)$`, 'gm')))
    out.set(m[1] as string, Number(m[2]));
  return out;
}

test('--metrics-cgroups N: the N busiest cgroups per disk get a latency histogram, the rest "(other)"; none by default', async (t) => {
  const start = nowS() - 100;
  const off = await startTestAgent(t);
  for (let i = 0; i < 3; i++) off.collector.emit(second(start + i));
  const plain = await (await fetch(`${off.base}/metrics`)).text();
  assert.match(plain, /^blkheat_cgroup_ios_total\{/m, 'the cgroup I/O counts are there');
  assert.doesNotMatch(plain, /blkheat_cgroup_device_latency_seconds/, 'no cgroup histograms unless asked');

  const on = await startTestAgent(t, { metricsCgroups: 2 });
  for (let i = 0; i < 3; i++) on.collector.emit(second(start + i));
  const text = await (await fetch(`${on.base}/metrics`)).text();
  assert.deepEqual([...counts(text, 'blkheat_cgroup_device_latency_seconds')].sort(), [
    ['(other)', 12],
    ['/a', 30],
    ['/b', 15],
  ]);
  // The buckets of "(other)": /c and /d's reads, all at bucket 44, so every le from 44's bound up.
  const other = [...text.matchAll(/^blkheat_cgroup_device_latency_seconds_bucket\{[^}]*cgroup="\(other\)"[^}]*le="([^"]+)"\} (\S+)$/gm)];
  assert.ok(other.length > 10);
  assert.equal(Number(other.at(-1)?.[2]), 12, '+Inf holds them all');

  assert.equal((parseServeArgs(['--metrics-cgroups', '5']) as { metricsCgroups?: number }).metricsCgroups, 5);
  assert.throws(() => parseServeArgs(['--metrics-cgroups', '64']), /--metrics-cgroups: .*0\.\.63/);
  assert.throws(() => parseServeArgs(['--metrics-cgroups', 'lots']), /--metrics-cgroups/);
});

// The kernel ABI comes from the object, not from copies: the agent reads every record's layout,
// the array lengths and blkheat.h's enums from the built objects' BTF. Here: both objects read as
// the agent needs them; a header whose bh_sample fields moved is decoded right on the real
// kernel; one whose field the agent cannot read is refused before anything loads, naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUCKET_SCHEMA, bucketCount, CLASS_FLAGS, FINE_BUCKET_SCHEMA } from '@blkheat/shared-types';
import { createLoopDevice, runCommand } from '@blkheat/testkit';
import { CollectorError, createCollector } from '../src/collector/index.js';
import { readKernelAbi, resolveRecord } from '../src/collector/abi/kernel-abi.js';
import { ABI, ABI_S3 } from './lib/abi.js';
import { record } from './lib/collect.js';

const BPF_DIR = fileURLToPath(new URL('../../../bpf/', import.meta.url));

test('both kernel objects give the agent every record, array length and enum it reads', () => {
  for (const [abi, schema] of [
    [ABI, BUCKET_SCHEMA],
    [ABI_S3, FINE_BUCKET_SCHEMA],
  ] as const) {
    assert.ok(abi.nrBuckets >= bucketCount(schema), `${abi.path}: ${abi.nrBuckets} buckets hold schema ${schema.scale}`);
    assert.ok(abi.maxBounds >= bucketCount(schema), `${abi.path}: bounds_ns holds every bound`);
    assert.equal(abi.records.bh_sample.len.comm, 16, 'TASK_COMM_LEN');
    assert.equal(abi.nrStatus, abi.records.bh_hist.len.errors / 8);
    assert.equal(abi.diskCountSlots * abi.records.bh_disk_count.size, abi.records.bh_disk_counts.size);
    // The class code: the op below opMask, then one distinct bit per flag, and nostat apart.
    const bits = [...CLASS_FLAGS.map((f) => abi.classBits.flags[f]), abi.classBits.nostat];
    for (const bit of bits) assert.ok(bit > abi.classBits.opMask && (bit & (bit - 1)) === 0, `class bit ${bit} is one bit above the op`);
    assert.equal(new Set(bits).size, bits.length, 'class bits are distinct');
    assert.ok(
      bits.every((b) => b < 1 << 16),
      'class codes fit bh_hist_key.cls (u16)',
    );
    assert.equal(abi.noOp, 0xffffffff, 'BH_NO_OP read unsigned');
  }
  // Only the bucket arrays differ between the two objects.
  // (device, queue, submit and total: four of them.)
  assert.equal(ABI_S3.records.bh_hist.size - ABI.records.bh_hist.size, 4 * (ABI_S3.nrBuckets - ABI.nrBuckets) * 8);
  assert.deepEqual(ABI_S3.records.bh_sample, ABI.records.bh_sample);
});

test('a record the agent cannot read is named: missing struct, missing field, another width, no fixed place', () => {
  const problems: string[] = [];
  const budget = { slot: 'u64', outliers: 'u64' } as const;
  assert.equal(resolveRecord('bh_budget', budget, undefined, problems), undefined);
  assert.equal(resolveRecord('bh_budget', budget, { size: 24, members: [{ name: 'slot', offset: 0, size: 8 }] }, problems), undefined);
  const narrow = {
    size: 24,
    members: [
      { name: 'slot', offset: 0, size: 8 },
      { name: 'outliers', offset: 8, size: 4 },
    ],
  };
  assert.equal(resolveRecord('bh_budget', budget, narrow, problems), undefined);
  const loose = {
    size: 24,
    members: [
      { name: 'slot', offset: 0, size: 8 },
      { name: 'outliers', offset: -1, size: 8 },
    ],
  };
  assert.equal(resolveRecord('bh_budget', budget, loose, problems), undefined);
  assert.deepEqual(problems, [
    'struct bh_budget is missing',
    'struct bh_budget has no field outliers',
    'struct bh_budget field outliers is 4 bytes; the agent reads it as u64 (8 bytes)',
    'struct bh_budget field outliers has no fixed place in the struct',
  ]);
  const moved = {
    size: 24,
    members: [
      { name: 'outliers', offset: 0, size: 8 },
      { name: 'slot', offset: 16, size: 8 },
    ],
  };
  assert.deepEqual(
    resolveRecord('bh_budget', budget, moved, problems)?.at,
    { slot: 16, outliers: 0 },
    'moved fields are found where they are',
  );
});

/** Builds blkheat.bpf.o from a copy of bpf/ whose blkheat.h `edit` changed; returns the object's path. */
async function buildWithHeader(t: { after(fn: () => void): void }, edit: (header: string) => string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-abi-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const part of ['Makefile', 'blkheat.bpf.c', 'include']) cpSync(join(BPF_DIR, part), join(dir, part), { recursive: true });
  cpSync(join(BPF_DIR, 'build', 'vmlinux.h'), join(dir, 'build', 'vmlinux.h'));
  const headerPath = join(dir, 'include', 'blkheat.h');
  const header = readFileSync(headerPath, 'utf8');
  const changed = edit(header);
  assert.notEqual(changed, header, 'the edit changed the header');
  writeFileSync(headerPath, changed);
  await runCommand('make', ['-C', dir, 'build/blkheat.bpf.o'], { timeoutMs: 120_000 });
  return join(dir, 'build', 'blkheat.bpf.o');
}

/** The collector on BLKHEAT_BPF_OBJECT=path for the test's length. */
function useObject(t: { after(fn: () => void): void }, path: string): void {
  const before = process.env.BLKHEAT_BPF_OBJECT;
  t.after(() => {
    if (before === undefined) delete process.env.BLKHEAT_BPF_OBJECT;
    else process.env.BLKHEAT_BPF_OBJECT = before;
  });
  process.env.BLKHEAT_BPF_OBJECT = path;
}

test('bh_sample with its fields moved in blkheat.h alone: the agent reads them where they now are', { timeout: 180_000 }, async (t) => {
  // pid first, dev last: every u32 of the record at another offset.
  const path = await buildWithHeader(t, (h) =>
    h.replace(
      "\t__u32 dev;\n\t__u32 bytes;\n\t__u32 pid;       /* submitter's tgid */",
      "\t__u32 pid;       /* submitter's tgid */\n\t__u32 bytes;\n\t__u32 dev;",
    ),
  );
  const abi = readKernelAbi(path);
  assert.deepEqual(
    [abi.records.bh_sample.at.pid, abi.records.bh_sample.at.dev],
    [ABI.records.bh_sample.at.dev, ABI.records.bh_sample.at.pid],
  );
  useObject(t, path);
  const loop = createLoopDevice({ sizeMiB: 16, t });
  const rec = await record(t, { disks: [loop.name], samples: { budgetPerSecond: 1000 } });
  await runCommand('dd', [`if=${loop.path}`, 'of=/dev/null', 'bs=4k', 'count=64', 'iflag=direct']);
  await rec.waitForSecond(Math.floor(Date.now() / 1000) + 1);
  const mine = rec.samples.filter((s) => s.comm === 'dd');
  assert.ok(mine.length > 0, `no sample of dd among ${rec.samples.length}: ${JSON.stringify(rec.samples.slice(0, 3))}`);
  for (const s of mine) {
    assert.equal(s.dev, loop.dev, 'dev read from its new place');
    assert.equal(s.bytes, 4096, 'bytes read from its place');
    assert.ok(s.pid > 1, `pid read from its new place (${s.pid})`);
  }
});

test(
  'bh_sample.bytes widened to u64 in blkheat.h alone: refused before anything loads, naming the field',
  { timeout: 120_000 },
  async (t) => {
    const path = await buildWithHeader(t, (h) => h.replace('\t__u32 bytes;\n\t__u32 pid;', '\t__u64 bytes;\n\t__u32 pid;'));
    useObject(t, path);
    await assert.rejects(
      createCollector({ bpfStats: false }),
      (e: unknown) =>
        e instanceof CollectorError &&
        /does not lay out its records as this agent reads them: struct bh_sample field bytes is 8 bytes; the agent reads it as u32 \(4 bytes\).*Rebuild bpf\/ and the agent together/.test(
          e.message,
        ),
    );
  },
);

test('an object whose histograms cannot hold the schema is refused, naming the field', async (t) => {
  // The scale-2 object (112 buckets) for schema 3 (211 buckets).
  useObject(t, ABI.path);
  await assert.rejects(
    createCollector({ bpfStats: false, schema: FINE_BUCKET_SCHEMA }),
    (e: unknown) =>
      e instanceof CollectorError &&
      /bucket schema scale 3 has 2\d\d (bounds|buckets); the kernel object (holds|'s histograms hold) \d+/.test(e.message),
  );
});

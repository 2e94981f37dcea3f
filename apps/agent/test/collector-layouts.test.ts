// The kernel records as the agent reads them, checked against the objects' own BTF (no kernel
// load needed: the BTF is read from the object files), and a mismatched object refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadKernelBtf } from '@blkheat/bpf-loader';
import { createCollector, CollectorError } from '../src/collector/index.js';
import { schemaLayout } from '../src/collector/layout.js';
import { expectedRecords, recordMismatches } from '../src/collector/record-layouts.js';

test('record layouts: both kernel objects lay out every record as the agent reads it; a mismatch names the struct and field', () => {
  for (const scale of [2, 3]) {
    const layout = schemaLayout(scale);
    const btf = loadKernelBtf(fileURLToPath(new URL(`../../../bpf/build/${layout.objectFile}`, import.meta.url)));
    try {
      assert.deepEqual(
        recordMismatches(expectedRecords(layout), (s) => btf.structLayout(s)),
        [],
        `${layout.objectFile}`,
      );
      // The schema-2 decoder against this object: only the schema-sized struct differs.
      const other = schemaLayout(scale === 2 ? 3 : 2);
      const problems = recordMismatches(expectedRecords(other), (s) => btf.structLayout(s));
      assert.deepEqual(
        problems,
        [
          `struct bh_hist is ${layout.histValueSize} bytes, expected ${other.histValueSize}`,
          `struct bh_hist field device is at byte 208, ${layout.nrBuckets * 8} bytes; expected byte 208, ${other.nrBuckets * 8} bytes`,
          `struct bh_hist field queue is at byte ${208 + layout.nrBuckets * 8}, ${layout.nrBuckets * 8} bytes; expected byte ${208 + other.nrBuckets * 8}, ${other.nrBuckets * 8} bytes`,
        ],
        `${layout.objectFile} read with schema ${other.nrBuckets}-bucket records`,
      );
    } finally {
      btf.close();
    }
  }
  const renamed = new Map([['bh_budget', { size: 24, fields: [['slot', 0, 8] as const, ['spent', 8, 8] as const] }]]);
  assert.deepEqual(
    recordMismatches(renamed, (s) => (s === 'bh_budget' ? { size: 24, members: [{ name: 'slot', offset: 0, size: 8 }] } : undefined)),
    ['struct bh_budget has no field spent'],
  );
  assert.deepEqual(
    recordMismatches(renamed, () => undefined),
    ['struct bh_budget is missing'],
  );
});

test('a kernel object built for another schema is refused before anything is loaded, naming the record', async (t) => {
  const before = process.env.BLKHEAT_BPF_OBJECT;
  t.after(() => {
    if (before === undefined) delete process.env.BLKHEAT_BPF_OBJECT;
    else process.env.BLKHEAT_BPF_OBJECT = before;
  });
  process.env.BLKHEAT_BPF_OBJECT = fileURLToPath(new URL(`../../../bpf/build/${schemaLayout(3).objectFile}`, import.meta.url));
  await assert.rejects(
    createCollector({ bpfStats: false }),
    (e: unknown) =>
      e instanceof CollectorError &&
      /does not lay out its records as this agent reads them: struct bh_hist is 3664 bytes, expected 2000; .*Rebuild bpf\/ and the agent together/.test(
        e.message,
      ),
  );
});

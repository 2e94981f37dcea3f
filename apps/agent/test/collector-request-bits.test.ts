// The kernel programs' request-bit knobs (collector/abi/request-bits.ts): built from the running
// kernel's BTF, each request flag a class names lands on its class flag and nothing else does; a
// kernel whose flags the table cannot cover is refused with the bits named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kernelFactsOf, KernelSupportError } from '../src/collector/host/kernel-facts.js';
import { decodeRequestBits, requestBitsKnobs, type RequestBits } from '../src/collector/abi/request-bits.js';
import { ABI } from './lib/abi.js';

const facts = kernelFactsOf(undefined);
const CLS_FLAG_BITS = ABI.classBits.flags;
const CLS_FLAG_TABLE_BITS = ABI.clsFlagTableBits;

function reqBits(knobs: ReturnType<typeof requestBitsKnobs>): RequestBits {
  return decodeRequestBits(ABI.records.bh_request_bits, knobs.reqBits);
}

/** What the kernel program computes: the class flag bits of request flags `cmd`. */
function classFlagsOf(knobs: ReturnType<typeof requestBitsKnobs>, cmd: number): number {
  const index = (cmd >>> reqBits(knobs).cls_shift) & ((1 << CLS_FLAG_TABLE_BITS) - 1);
  return knobs.clsFlagTable.readUInt16LE(2 * index);
}

test('request bits of this kernel: each flag a class names gives its class flag, others none', () => {
  const knobs = requestBitsKnobs(facts, ABI);
  const bits = reqBits(knobs);
  const flag = (name: string): number => 2 ** (facts.reqFlagBits.get(name) ?? assert.fail(`no ${name} in this kernel's BTF`));
  assert.equal(bits.op_mask, flag('__REQ_FAILFAST_DEV') - 1, 'op bits end where the first flag begins');
  assert.equal(bits.op_flush, facts.reqOps.get('REQ_OP_FLUSH'));
  assert.equal(bits.op_drv_in, facts.reqOps.get('REQ_OP_DRV_IN'));
  assert.equal(bits.op_drv_out, facts.reqOps.get('REQ_OP_DRV_OUT'));
  for (const [field, name] of [
    ['rqf_flush_seq', '__RQF_FLUSH_SEQ'],
    ['rqf_stats', '__RQF_STATS'],
    ['rqf_io_stat', '__RQF_IO_STAT'],
  ] as const) {
    const bit = facts.rqfFlagBits?.get(name) ?? assert.fail(`no ${name} in this kernel's BTF (6.9+)`);
    assert.equal(bits[field], 2 ** bit, field);
  }

  const named: [string, number][] = [
    ['__REQ_SYNC', CLS_FLAG_BITS.Sync],
    ['__REQ_META', CLS_FLAG_BITS.Metadata],
    ['__REQ_FUA', CLS_FLAG_BITS.ForcedUnitAccess],
    ['__REQ_PRIO', CLS_FLAG_BITS.Priority],
    ['__REQ_RAHEAD', CLS_FLAG_BITS.ReadAhead],
    ['__REQ_BACKGROUND', CLS_FLAG_BITS.Background],
    ['__REQ_PREFLUSH', CLS_FLAG_BITS.Preflush],
  ];
  const write = facts.reqOps.get('REQ_OP_WRITE') ?? assert.fail('no REQ_OP_WRITE');
  for (const [name, classBit] of named) {
    // The op value in the low bits never reaches the table.
    assert.equal(classFlagsOf(knobs, flag(name) | write), classBit, name);
  }
  const all = named.reduce((cmd, [name]) => cmd | flag(name), 0);
  assert.equal(
    classFlagsOf(knobs, all),
    named.reduce((cls, [, bit]) => cls | bit, 0),
    'every flag at once',
  );
  for (const name of ['__REQ_NOMERGE', '__REQ_IDLE', '__REQ_FAILFAST_DRIVER', '__REQ_NOWAIT']) {
    const bit = facts.reqFlagBits.get(name);
    if (bit !== undefined) assert.equal(classFlagsOf(knobs, (2 ** bit) | all), classFlagsOf(knobs, all), `${name} names no class`);
  }
});

test('request bits: flags beyond the table are refused by name; no rqf_flags enum gives 0 masks; no passthrough ops never match', () => {
  const spread = new Map(facts.reqFlagBits);
  spread.set('__REQ_BACKGROUND', (facts.reqFlagBits.get('__REQ_SYNC') ?? 0) + CLS_FLAG_TABLE_BITS);
  assert.throws(
    () => requestBitsKnobs({ ...facts, reqFlagBits: spread }, ABI),
    (err: unknown) => err instanceof KernelSupportError && /lie in bits \d+\.\.\d+; blkheat's class table covers 12 bits/.test(err.message),
  );

  const reqOps = new Map([...facts.reqOps].filter(([name]) => !name.startsWith('REQ_OP_DRV')));
  const bits = reqBits(requestBitsKnobs({ ...facts, reqOps, rqfFlagBits: undefined }, ABI));
  assert.deepEqual([bits.rqf_flush_seq, bits.rqf_stats, bits.rqf_io_stat], [0, 0, 0]);
  // No op value (below 256) equals it.
  assert.deepEqual([bits.op_drv_in, bits.op_drv_out], [0xffffffff, 0xffffffff]);
});

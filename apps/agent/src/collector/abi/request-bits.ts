/**
 * The kernel programs' knobs req_bits and cls_flag_table (struct bh_request_bits in blkheat.h):
 * the request op and flag values they test, from the running kernel's BTF enums. The agent reads
 * them once here instead of the programs relocating each enum value (CO-RE) on every I/O: see
 * blkheat.h for what that cost.
 */
import type { ClassFlag } from '@blkheat/shared-types';
import { KernelSupportError, type KernelFacts } from '../host/kernel-facts.js';
import { BLK_STS_AGAIN } from './block-status.js';
import { REQUEST_BITS_FIELDS, type KernelAbi, type KernelRecords } from './kernel-abi.js';

/** The request flags each class flag names (a class's "Sync-", "Metadata-", ... part). */
const CLASS_FLAG_OF_REQ_FLAG: Readonly<Record<string, ClassFlag>> = {
  __REQ_SYNC: 'Sync',
  __REQ_META: 'Metadata',
  __REQ_FUA: 'ForcedUnitAccess',
  __REQ_PRIO: 'Priority',
  __REQ_RAHEAD: 'ReadAhead',
  __REQ_BACKGROUND: 'Background',
  __REQ_PREFLUSH: 'Preflush',
};
export type RequestBits = Record<(typeof REQUEST_BITS_FIELDS)[number], number>;

export function encodeRequestBits(l: KernelRecords['bh_request_bits'], bits: RequestBits): Buffer {
  const buf = Buffer.alloc(l.size);
  for (const name of REQUEST_BITS_FIELDS) buf.writeUInt32LE(bits[name] >>> 0, l.at[name]);
  return buf;
}

export function decodeRequestBits(l: KernelRecords['bh_request_bits'], buf: Buffer): RequestBits {
  if (buf.length !== l.size) throw new RangeError(`struct bh_request_bits is ${l.size} bytes, not ${buf.length}`);
  return Object.fromEntries(REQUEST_BITS_FIELDS.map((name) => [name, buf.readUInt32LE(l.at[name])])) as RequestBits;
}

export interface RequestBitsKnobs {
  /** struct bh_request_bits. */
  readonly reqBits: Buffer;
  /** u16 cls_flag_table[1 << abi.clsFlagTableBits]. */
  readonly clsFlagTable: Buffer;
}

export function requestBitsKnobs(
  facts: Pick<KernelFacts, 'reqOps' | 'reqFlagBits' | 'rqfFlagBits' | 'bioTraceCompletionBit' | 'wbtLatExceeded'>,
  abi: Pick<KernelAbi, 'records' | 'classBits' | 'clsFlagTableBits' | 'noOp'>,
): RequestBitsKnobs {
  const tableBits = abi.clsFlagTableBits;
  const opBits = facts.reqFlagBits.get('__REQ_FAILFAST_DEV');
  const flush = facts.reqOps.get('REQ_OP_FLUSH');
  if (opBits === undefined || flush === undefined) {
    throw new KernelSupportError('kernel BTF lacks __REQ_FAILFAST_DEV or REQ_OP_FLUSH: this kernel is too old for blkheat');
  }
  const named: [number, number][] = [];
  for (const [reqFlag, classFlag] of Object.entries(CLASS_FLAG_OF_REQ_FLAG)) {
    const bit = facts.reqFlagBits.get(reqFlag);
    if (bit !== undefined) named.push([bit, abi.classBits.flags[classFlag]]);
  }
  const shift = Math.min(...named.map(([bit]) => bit));
  const top = Math.max(...named.map(([bit]) => bit));
  if (named.length === 0 || top - shift >= tableBits || top > 31) {
    // With none named, shift is Infinity: refused the same way, never an empty table.
    throw new KernelSupportError(
      `the kernel's request flags that name classes lie in bits ${shift}..${top}; blkheat's class table covers ${tableBits} bits below 32`,
    );
  }
  const clsFlagTable = Buffer.alloc(2 << tableBits);
  for (let i = 0; i < 1 << tableBits; i++) {
    let cls = 0;
    for (const [bit, classBit] of named) if (i & (1 << (bit - shift))) cls |= classBit;
    clsFlagTable.writeUInt16LE(cls, 2 * i);
  }
  const rqf = (name: string): number => {
    const bit = facts.rqfFlagBits?.get(name);
    if (bit !== undefined && bit > 31) throw new KernelSupportError(`kernel's ${name} is bit ${bit}: rq_flags is 32 bits`);
    return bit === undefined ? 0 : 2 ** bit;
  };
  const reqBits = encodeRequestBits(abi.records.bh_request_bits, {
    op_mask: 2 ** opBits - 1,
    op_flush: flush,
    op_drv_in: facts.reqOps.get('REQ_OP_DRV_IN') ?? abi.noOp,
    op_drv_out: facts.reqOps.get('REQ_OP_DRV_OUT') ?? abi.noOp,
    rqf_flush_seq: rqf('__RQF_FLUSH_SEQ'),
    rqf_stats: rqf('__RQF_STATS'),
    rqf_io_stat: rqf('__RQF_IO_STAT'),
    cls_shift: shift,
    // Unnamed or past bit 15 (bi_flags is 16 bits): the in-flight scan trusts a waiting bio's slot alone.
    bio_in_flight: facts.bioTraceCompletionBit !== undefined && facts.bioTraceCompletionBit < 16 ? 2 ** facts.bioTraceCompletionBit : 0,
    sts_again: BLK_STS_AGAIN,
    // wbt_timer's status for reads over target (an anonymous enum of blk-wbt.c); 0: only a scaled-down step marks wbt.
    wbt_lat_exceeded: facts.wbtLatExceeded ?? 0,
  });
  return { reqBits, clsFlagTable };
}

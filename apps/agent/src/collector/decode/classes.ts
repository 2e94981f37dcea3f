/**
 * Class codes from the kernel programs (op value | flag bits: the object's enum bh_cls_bits) to the class
 * names of the wire and the CLI ("Read", "Sync-Write", "Priority-Metadata-Read", "Flush").
 * Op values come from the running kernel's BTF (enum req_op), never from a table of numbers.
 */
import { CLASS_FLAGS, className, opDisplayName, type ClassFlag, type OpGroup } from '@blkheat/shared-types';
import type { ClassBits } from '../abi/kernel-abi.js';

export class ClassNamer {
  private readonly opByValue = new Map<number, string>();
  private readonly cache = new Map<number, string>();
  private readonly flushOp: number | undefined;
  private readonly discardOp: number | undefined;

  /**
   * @param reqOps enumerators of the kernel's `enum req_op` (name -> value).
   * @param bits the class code's parts, as the kernel object defines them (KernelAbi.classBits).
   */
  constructor(
    reqOps: ReadonlyMap<string, number>,
    private readonly bits: ClassBits,
  ) {
    for (const [name, value] of reqOps) {
      if (name.startsWith('REQ_OP_') && name !== 'REQ_OP_LAST') this.opByValue.set(value, name);
    }
    this.flushOp = reqOps.get('REQ_OP_FLUSH');
    this.discardOp = reqOps.get('REQ_OP_DISCARD');
  }

  /** True for I/O /proc/diskstats does not count (passthrough, iostats off). */
  notCounted(code: number): boolean {
    return (code & this.bits.nostat) !== 0;
  }

  /**
   * The /proc/diskstats group a class is counted in (the kernel's op_stat_group(), and the
   * flush counter for flush requests); undefined for I/O diskstats does not count.
   */
  group(code: number): OpGroup | undefined {
    if (this.notCounted(code)) return undefined;
    const op = code & this.bits.opMask;
    if (op === this.flushOp) return 'flush';
    if (op === this.discardOp) return 'discard';
    return op & 1 ? 'write' : 'read';
  }

  name(code: number): string {
    let name = this.cache.get(code);
    if (name === undefined) {
      name = this.compute(code);
      this.cache.set(code, name);
    }
    return name;
  }

  private compute(code: number): string {
    const opValue = code & this.bits.opMask;
    const kernelName = this.opByValue.get(opValue);
    const flags: ClassFlag[] = CLASS_FLAGS.filter((flag) => (code & this.bits.flags[flag]) !== 0);
    // A flush request always carries REQ_PREFLUSH; "Preflush-Flush" would say nothing more.
    const shown = kernelName === 'REQ_OP_FLUSH' ? flags.filter((f) => f !== 'Preflush') : flags;
    return className(opDisplayName(kernelName, opValue), shown);
  }
}

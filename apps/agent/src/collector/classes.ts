/**
 * Class codes from the kernel programs (op value | flag bits, see layout.ts) to the class
 * names of the wire and the CLI ("Read", "Sync-Write", "Priority-Metadata-Read", "Flush").
 * Op values come from the running kernel's BTF (enum req_op), never from a table of numbers.
 */
import { className, opDisplayName, type ClassFlag } from '@blkheat/shared-types';
import { CLS_FLAG_BITS, CLS_OP_MASK } from './layout.js';

export class ClassNamer {
  private readonly opByValue = new Map<number, string>();
  private readonly cache = new Map<number, string>();

  /** @param reqOps enumerators of the kernel's `enum req_op` (name -> value). */
  constructor(reqOps: ReadonlyMap<string, number>) {
    for (const [name, value] of reqOps) {
      if (name.startsWith('REQ_OP_') && name !== 'REQ_OP_LAST') this.opByValue.set(value, name);
    }
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
    const opValue = code & CLS_OP_MASK;
    const kernelName = this.opByValue.get(opValue);
    const flags: ClassFlag[] = [];
    for (const [flag, bit] of Object.entries(CLS_FLAG_BITS) as [ClassFlag, number][]) {
      if (code & bit) flags.push(flag);
    }
    // A flush request always carries REQ_PREFLUSH; "Preflush-Flush" would say nothing more.
    const shown = kernelName === 'REQ_OP_FLUSH' ? flags.filter((f) => f !== 'Preflush') : flags;
    return className(opDisplayName(kernelName, opValue), shown);
  }
}

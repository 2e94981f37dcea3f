/**
 * What the running kernel offers, read from its BTF (never from its version number): op
 * values and flag bits, which block tracepoints exist and their argument layouts.
 */
import { loadKernelBtf, type KernelBtf } from '@blkheat/bpf-loader';
import { CollectorError, errorText } from '../errors.js';

export type ArgLayout = 'single' | 'queue-first';

export interface KernelFacts {
  /** enum req_op (or req_opf on older kernels): enumerator name -> value. */
  readonly reqOps: ReadonlyMap<string, number>;
  /** enum req_flag_bits: the request flags' bit numbers (__REQ_SYNC -> 11, ...). */
  readonly reqFlagBits: ReadonlyMap<string, number>;
  /** enum rqf_flags (6.9+): the request's own flags' bit numbers; undefined where RQF_* are macros. */
  readonly rqfFlagBits: ReadonlyMap<string, number> | undefined;
  /** Argument layout of block_rq_issue / block_rq_requeue / block_bio_queue. */
  readonly rqLayout: ArgLayout;
  readonly bioQueueLayout: ArgLayout;
  /** The in-flight scan can load: "syscall" programs with bpf_loop (5.17+). */
  readonly hasInflightScan: boolean;
  /**
   * The kernel runs no BPF tracing program of ours while the current task is a thread of pid 1:
   * a patch some sandboxes carry (not upstream), marked in BTF by bpf_prog_aux.init_owned. Its
   * bpf_trace_run*() return early, without counting a recursion miss, when current->tgid == 1
   * and the program is not init's own; so I/Os that complete in softirq on top of pid 1's
   * threads are never seen, and are untimed (docs/accounting.md).
   */
  readonly hidesInitContext: boolean;
  /**
   * The submit phase's hooks exist with the bio as their first argument (5.11 on): block_getrq,
   * block_split, block_bio_backmerge and block_bio_frontmerge (bpf/include/blkheat_handlers.bpf.h).
   */
  readonly hasSubmitHooks: boolean;
  /** The wbt_timer tracepoint exists (CONFIG_BLK_WBT): wbt's mark (bpf/include/blkheat_wbt.bpf.h). */
  readonly hasWbtTimer: boolean;
  /** blk-wbt.c's LAT_EXCEEDED (wbt_timer's status when reads missed wbt's target); undefined if unnamed. */
  readonly wbtLatExceeded: number | undefined;
  /** BIO_TRACE_COMPLETION's bit in bio->bi_flags (set from block_bio_queue to bio_endio); undefined if unnamed. */
  readonly bioTraceCompletionBit: number | undefined;
}

/** The tracepoints the submit phase hooks besides block_bio_queue, each passed the bio first. */
const SUBMIT_TRACEPOINTS = ['block_getrq', 'block_split', 'block_bio_backmerge', 'block_bio_frontmerge'] as const;

export class KernelSupportError extends Error {}

/** The facts of the running kernel, from its BTF (or the file given: --btf); a BTF that cannot be read is a CollectorError. */
export function kernelFactsOf(btfPath: string | undefined): KernelFacts {
  let btf;
  const path = btfPath ?? '/sys/kernel/btf/vmlinux';
  try {
    btf = loadKernelBtf(btfPath);
  } catch (err) {
    throw new CollectorError(
      `cannot read the kernel's BTF (${path}): ${errorText(err)}. blkheat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, or a BTF file for this kernel (--btf PATH)`,
      err,
    );
  }
  try {
    return readKernelFacts(btf);
  } finally {
    btf.close();
  }
}

export function readKernelFacts(btf: KernelBtf): KernelFacts {
  const reqOps = btf.enumValues('req_op') ?? btf.enumValues('req_opf');
  if (!reqOps) throw new KernelSupportError('kernel BTF has no enum req_op: this kernel is too old for blkheat');
  const reqFlagBits = btf.enumValues('req_flag_bits');
  if (!reqFlagBits) throw new KernelSupportError('kernel BTF has no enum req_flag_bits: this kernel is too old for blkheat');
  for (const tp of ['block_rq_issue', 'block_rq_complete', 'block_bio_queue', 'block_bio_complete']) {
    if (!btf.funcProtoParams(`btf_trace_${tp}`)) {
      throw new KernelSupportError(`kernel has no ${tp} tracepoint (CONFIG_BLK_DEV and tracepoints are required)`);
    }
  }
  return {
    reqOps,
    reqFlagBits,
    rqfFlagBits: btf.enumValues('rqf_flags'),
    rqLayout: layoutOf(btf, 'btf_trace_block_rq_issue'),
    bioQueueLayout: layoutOf(btf, 'btf_trace_block_bio_queue'),
    hasInflightScan: btf.enumeratorValue('BPF_FUNC_loop') !== undefined && btf.enumeratorValue('BPF_PROG_TYPE_SYSCALL') !== undefined,
    hidesInitContext: btf.hasField('bpf_prog_aux', 'init_owned'),
    hasSubmitHooks:
      layoutOf(btf, 'btf_trace_block_bio_queue') === 'single' &&
      SUBMIT_TRACEPOINTS.every((tp) => btf.funcProtoParams(`btf_trace_${tp}`) && layoutOf(btf, `btf_trace_${tp}`) === 'single'),
    bioTraceCompletionBit: btf.enumeratorValue('BIO_TRACE_COMPLETION'),
    hasWbtTimer: btf.funcProtoParams('btf_trace_wbt_timer')?.[1]?.includes('backing_dev_info') === true,
    wbtLatExceeded: btf.enumeratorValue('LAT_EXCEEDED'),
  };
}

/** btf_trace_X typedefs are `void (*)(void *ctx, args...)`; a request_queue before the object means the old layout. */
function layoutOf(btf: KernelBtf, typedef: string): ArgLayout {
  const params = btf.funcProtoParams(typedef) ?? [];
  return params[1]?.includes('request_queue') ? 'queue-first' : 'single';
}

/**
 * @blkheat/bpf-loader: a generic libbpf binding shaped like cilium/ebpf (see api.ts for the
 * handle types and README.md for the lifecycle, the error model and the ring-buffer contract).
 */
import type { BpfObject, KernelBtf, OpenOptions, StatsHandle } from './api.js';
import { BpfError } from './errors.js';
import { loadNativeAddon, type NativeAddon } from './native.js';

export type * from './api.js';
export { BpfError, type BpfErrorDetails } from './errors.js';
export { CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN, effectiveCapabilities, missingTracingPrivilege, TRACING_PRIVILEGE } from './privileges.js';

let addon: NativeAddon | undefined;

/** The addon is loaded on first use, so importing types or BpfError never needs it. */
function native(): NativeAddon {
  addon ??= loadNativeAddon(BpfError);
  return addon;
}

/** Opens a BPF ELF object file (bpf_object__open_file). Synchronous; nothing reaches the kernel yet. */
export function openObject(path: string, options?: OpenOptions): BpfObject {
  return native().openObject(path, options);
}

/** Loads kernel BTF: the running kernel's (btf__load_vmlinux_btf) or a file's (btf__parse). */
export function loadKernelBtf(path?: string): KernelBtf {
  return native().loadKernelBtf(path);
}

/** Enables BPF run-time statistics (BPF_ENABLE_STATS, BPF_STATS_RUN_TIME) until the handle is closed. */
export function enableStats(): StatsHandle {
  return native().enableStats();
}

/** Number of possible CPUs (libbpf_num_possible_cpus): the per-CPU value count of per-CPU maps. */
export function possibleCpus(): number {
  return native().possibleCpus();
}

/** Version of the libbpf linked into the addon, "major.minor" (e.g. "1.1"). */
export function libbpfVersion(): string {
  return native().libbpfVersion();
}

/**
 * Gives the C heap's free pages back to the kernel (glibc malloc_trim(0)); false where nothing
 * went back or the C library is not glibc. Not BPF, but this addon is the project's one native
 * module, and a long-running agent needs it after bursts of large Buffers (see the agent's
 * server/reclaim.ts).
 */
export function releaseFreeHeap(): boolean {
  return native().releaseFreeHeap();
}

/**
 * setgroups(0), setgid(gid), setuid(uid) for every thread (glibc's), for a Node.js that refuses
 * its own (CVE-2024-22017: Debian's, built on the system libuv, cannot tell whether io_uring is
 * in use). Only safe where libuv was told not to use io_uring before the process started
 * (UV_USE_IO_URING=0): a ring set up as root would keep root's credentials. Throws BpfError with
 * errno on failure. Not BPF; this addon is the project's one native module.
 */
export function switchUser(uid: number, gid: number): void {
  native().switchUser(uid, gid);
}

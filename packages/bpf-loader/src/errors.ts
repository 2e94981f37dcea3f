/** The fields every BpfError carries besides its message. */
export interface BpfErrorDetails {
  /** Positive errno (EPERM = 1, ...) or one of libbpf's own codes (LIBBPF_ERRNO__FORMAT = 4001, ...). */
  readonly errno: number;
  /** Symbolic name of errno: 'EPERM', 'ENOENT', 'ENOTSUPP', 'LIBBPF_ERRNO__FORMAT', ... */
  readonly code: string;
  /** What libbpf printed during the failing call (verifier log included); '' if nothing. */
  readonly libbpfLog: string;
  /** Which call failed: 'openObject', 'load', 'attach', 'map.update', 'ringBuffer.consume', ... */
  readonly op: string;
}

/**
 * Every failure of the loader, from the kernel, from libbpf or from a check of the binding
 * itself (bad argument: EINVAL; closed handle: EBADF; wrong phase: EBUSY). The message names
 * the call, the object, errno's text and code, and for EPERM/EACCES the missing privilege.
 */
export class BpfError extends Error {
  errno: number;
  code: string;
  libbpfLog: string;
  op: string;

  constructor(message: string, details: BpfErrorDetails) {
    super(message);
    this.name = 'BpfError';
    this.errno = details.errno;
    this.code = details.code;
    this.libbpfLog = details.libbpfLog;
    this.op = details.op;
  }
}

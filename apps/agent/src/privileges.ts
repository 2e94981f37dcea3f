/**
 * Effective capabilities of this process, from /proc/self/status, to tell the user exactly
 * what is missing before the kernel says a bare EPERM.
 */
import { readFileSync } from 'node:fs';

const CAP_SYS_ADMIN = 21;
const CAP_PERFMON = 38;
const CAP_BPF = 39;

/** Capability bits of CapEff, or undefined where /proc says nothing. */
export function effectiveCapabilities(statusText?: string): bigint | undefined {
  let text = statusText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/status', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(text);
  return m ? BigInt(`0x${m[1]}`) : undefined;
}

/** Why this process cannot load and attach BPF tracing programs, or undefined if it can. */
export function missingBpfPrivilege(caps = effectiveCapabilities()): string | undefined {
  if (caps === undefined) return undefined; // cannot tell: let the kernel decide
  const has = (bit: number): boolean => ((caps >> BigInt(bit)) & 1n) === 1n;
  if (has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON))) return undefined;
  const missing = [!has(CAP_BPF) && 'CAP_BPF', !has(CAP_PERFMON) && 'CAP_PERFMON'].filter(Boolean).join(' and ');
  return `blkheat needs root to load its eBPF programs and attach them to the kernel's block tracepoints (missing ${missing}, or CAP_SYS_ADMIN); run it with sudo`;
}

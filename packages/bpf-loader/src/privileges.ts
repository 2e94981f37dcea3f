/**
 * Who may load BPF programs and attach them to tracepoints: the one statement of the rule that
 * the agent's messages use. The native side names the same rule in the EPERM/EACCES errors it
 * throws (PrivilegeHint in src/native/errors.cc); test/privilege-rule.test.ts keeps the two
 * texts equal.
 */
import { readFileSync } from 'node:fs';

/** Capability numbers (linux/capability.h). */
export const CAP_SYS_ADMIN = 21;
export const CAP_PERFMON = 38;
export const CAP_BPF = 39;

/** The rule, worded as the loader's errors word it. */
export const TRACING_PRIVILEGE = 'CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN on older kernels';

/** Capability bits of CapEff in /proc/self/status (or the text given), undefined where it says nothing. */
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

/**
 * Why a process with these effective capabilities cannot load and attach BPF tracing programs,
 * or undefined if it can (or nothing says: then the kernel decides).
 */
export function missingTracingPrivilege(caps = effectiveCapabilities()): string | undefined {
  if (caps === undefined) return undefined;
  const has = (bit: number): boolean => ((caps >> BigInt(bit)) & 1n) === 1n;
  if (has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON))) return undefined;
  const missing = [!has(CAP_BPF) && 'CAP_BPF', !has(CAP_PERFMON) && 'CAP_PERFMON'].filter(Boolean).join(' and ');
  return `loading BPF programs and attaching them to tracepoints needs root (${TRACING_PRIVILEGE}); this process lacks ${missing}`;
}

/**
 * What tests read of a process from /proc: its status fields (ids, groups, capabilities,
 * memory), its CPU time and its argv. The one place tests parse /proc/<pid>/status; the agent
 * itself reads only CapEff, in @blkheat/bpf-loader (the privilege rule).
 */
import { readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/status, read once: `field('Uid')` is the text after "Uid:" ('' when absent). */
export function procStatus(pid: number | 'self' = 'self'): (name: string) => string {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return (name) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
}

/** A field of /proc/<pid>/status in kB (0 when absent). */
export function procStatusKb(pid: number, field: string): number {
  const m = /^(\d+) kB$/.exec(procStatus(pid)(field));
  return m ? Number(m[1]) : 0;
}

export interface ProcessCredentials {
  /** Real, effective, saved and filesystem ids. */
  readonly uid: readonly number[];
  readonly gid: readonly number[];
  readonly groups: readonly number[];
  /** Capability sets as bit masks. */
  readonly capInh: bigint;
  readonly capPrm: bigint;
  readonly capEff: bigint;
  readonly capAmb: bigint;
  readonly noNewPrivs: boolean | undefined;
}

/** Reads /proc/<pid>/status: real/effective/saved/fs ids, groups and capability sets. */
export function readCredentials(pid: number | 'self' = 'self'): ProcessCredentials {
  const field = procStatus(pid);
  const ids = (name: string): number[] => field(name).split(/\s+/).filter(Boolean).map(Number);
  const cap = (name: string): bigint => BigInt(`0x${field(name) || '0'}`);
  const nnp = field('NoNewPrivs');
  return {
    uid: ids('Uid'),
    gid: ids('Gid'),
    groups: ids('Groups'),
    capInh: cap('CapInh'),
    capPrm: cap('CapPrm'),
    capEff: cap('CapEff'),
    capAmb: cap('CapAmb'),
    noNewPrivs: nnp === '' ? undefined : nnp === '1',
  };
}

/** utime + stime of a process in seconds (clock ticks are 100 Hz on Linux). */
export function procCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may contain spaces and parentheses: fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** argv of a process. */
export function procCmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

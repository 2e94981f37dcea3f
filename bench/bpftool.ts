/**
 * The kernel's list of loaded BPF programs, as bpftool reports it, for the benches that read
 * programs' run time and run counts (kernel.bpf_stats_enabled=1) at the instant a run starts
 * and ends.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface ProgInfo {
  readonly type: string;
  readonly name?: string;
  /** Only while kernel.bpf_stats_enabled=1. */
  readonly run_time_ns?: number;
  readonly run_cnt?: number;
}

export function bpftoolProgs(): ProgInfo[] {
  const bpftool = ['/usr/sbin/bpftool', '/usr/bin/bpftool'].find(existsSync) ?? 'bpftool';
  // Synchronous on purpose: read at the instant the run starts/ends.
  const r = spawnSync(bpftool, ['prog', 'show', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${bpftool} prog show failed: ${r.error?.message ?? r.stderr}`);
  return JSON.parse(r.stdout) as ProgInfo[];
}

/**
 * What the page's counts of I/Os without a full record mean, one line each, for the hover text
 * wherever they are shown (row heads, the header): one wording everywhere (issue 29: "untimed"
 * was explained nowhere, and "not sampled" read like an error).
 */
export const EXPLAIN = Object.freeze({
  notSampled:
    'Counted and timed in the histograms; the agent keeps a sample record (pid, comm, sector) of a few I/Os per second per disk and of the slowest of each second, and drill-down lists those.',
  untimed:
    'Counted by /proc/diskstats but seen by no probe (the kernel runs no BPF program for some completions, docs/accounting.md): in the counts and rates, not in the latency histograms.',
  startUnseen: 'Completed, but their start was not seen (begun before the agent attached): counted, with no latency.',
  passthrough: 'Passthrough commands (e.g. NVMe admin, SCSI generic): timed, but /proc/diskstats does not count them.',
});

/**
 * What the page's counts of I/Os without a full record mean, and how its percentiles and rates
 * are read, one line each, for the hover text wherever they are shown (row heads, the header,
 * tables): one wording everywhere (issue 29: "untimed" was explained nowhere, "not sampled" read
 * like an error, and a bucket's top was shown as a p99 with nothing saying so).
 */
export const EXPLAIN = Object.freeze({
  notSampled:
    'Counted and timed in the histograms; the agent keeps a sample record (pid, comm, sector) of a few I/Os per second per disk and of the slowest of each second, and drill-down lists those.',
  untimed:
    'Counted by /proc/diskstats but seen by no probe (the kernel runs no BPF program for some completions, docs/accounting.md): in the counts and rates, not in the latency histograms.',
  startUnseen: 'Completed, but their start was not seen (begun before the agent attached): counted, with no latency.',
  passthrough: 'Passthrough commands (e.g. NVMe admin, SCSI generic): timed, but /proc/diskstats does not count them.',
  percentile:
    'Percentiles come from latency histograms, which know the bucket of the I/O at a rank, not its latency: "≤ X" is the top of that bucket, "> X" is above the last bucket, and a value without either is the exact latency of a sampled I/O at that rank.',
  rate: 'I/Os per second over the seconds of the visible range the agent recorded (not the ones it was down for or before it started); peak: the busiest single step.',
});

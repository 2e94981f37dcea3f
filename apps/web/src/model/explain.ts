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

/**
 * Why a fleet view has none of `what`: the fleet server reads only the agents' disk histograms
 * from Prometheus (docs/fleet.md, "What a cell counts"); each host's own agent has it.
 */
function fleetLacks(what: string, pronoun: 'it' | 'them'): string {
  return `The fleet view has ${what}: it reads only the agents' disk histograms from Prometheus. Open a host's own agent for ${pronoun}.`;
}

/** Why a fleet view lists no sampled I/O: per-I/O records stay on each agent (its history). */
export const FLEET_NO_SAMPLES = fleetLacks('no sampled I/Os', 'them');

/** A split of the data a panel needs: I/O sizes (protocol 2) or cgroups (protocol 3). */
export type DataSplit = 'sizes' | 'cgroups';

const SPLIT_WORDS: Readonly<Record<DataSplit, { what: string; since: number }>> = {
  sizes: { what: 'no I/O sizes', since: 2 },
  cgroups: { what: 'no per-cgroup split', since: 3 },
};

/**
 * Why data with I/O has none of a split. A fleet view's data never has it: the fleet server reads
 * only the agents' disk histograms from Prometheus (docs/fleet.md, "What a cell counts"), so
 * naming old agents there would send the reader after the wrong cause. Elsewhere, agents before
 * the protocol that added it do not send it.
 */
export function missingSplitText(split: DataSplit, fromFleet: boolean): string {
  const { what, since } = SPLIT_WORDS[split];
  return fromFleet ? fleetLacks(what, 'it') : `This data has ${what} (agents before protocol ${since} do not send it).`;
}

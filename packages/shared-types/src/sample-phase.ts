/**
 * The one rule for a sampled I/O's latency of a phase (added in protocol 4), as phaseHist
 * (frame-model.ts) is for a class series' histograms: the agent's samples query
 * (apps/agent/src/history/samples.ts) and the dashboard's local matching of a snapshot's samples
 * read a phase through samplePhaseNs and nothing else.
 */
import type { IoSample, LatencyKind } from './frame-model.js';

/** The fields of a sample the phases are made of. */
export type SamplePhases = Pick<IoSample, 'w_ns' | 'q_ns' | 'd_ns'>;

/**
 * A sample's latency of `phase` in ns, or null when the sample does not tell it (such a sample
 * matches no latency bound of that phase):
 *
 * - `device`: `d_ns`.
 * - `queue`: `q_ns` (null: the request's start was not seen, or a bio-based disk).
 * - `submit`: `w_ns` (null: the bio's submission was not seen; absent, from a bio-based disk or
 *   an agent before protocol 4: null).
 * - `total`: `w_ns + q_ns + d_ns` when `w_ns` and `q_ns` are both known (a request-based disk);
 *   `d_ns` when `w_ns` is absent and `q_ns` null (a bio-based disk, whose `d_ns` already runs
 *   from the bio's submission to its completion, as phaseHist takes `d` for its total); null
 *   otherwise (submission or start not seen, or a request-based disk's sample from an agent
 *   before protocol 4). Without the disk's kind, a sample of an agent before protocol 4 from a
 *   request-based disk whose start was not seen reads as a bio-based disk's: total `d_ns`.
 */
export function samplePhaseNs(sample: SamplePhases, phase: LatencyKind): number | null {
  switch (phase) {
    case 'device':
      return sample.d_ns;
    case 'queue':
      return sample.q_ns;
    case 'submit':
      return sample.w_ns ?? null;
    case 'total':
      if (sample.w_ns === undefined) return sample.q_ns === null ? sample.d_ns : null;
      return sample.w_ns === null || sample.q_ns === null ? null : sample.w_ns + sample.q_ns + sample.d_ns;
  }
}

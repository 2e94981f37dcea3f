/**
 * The latency phase on screen (LatencyKind): what the page calls each phase, which the data can
 * show, and which one is shown when the user has not chosen.
 *
 *   total   bio submission → completion: what the application sees (submit wait + queue + device;
 *           a bio-based disk's bio → completion). Protocol 4 for request-based disks.
 *   submit  bio submission → request allocation: a frozen queue, QoS throttling, waiting for a tag
 *           (protocol 4; request-based disks only).
 *   queue   request start → issue.
 *   device  issue → complete (bio-based disks: bio → completion).
 *
 * A phase's histogram is read through shared-types' phaseHist(), the one rule for it; a sample's
 * latency through samplePhaseNs(). Data from agents before protocol 4 has no total or submit
 * phase for request-based disks: the page shows device latency then, and says why.
 */
import { type DiskInfo, type Frame, LATENCY_KINDS, type LatencyKind } from '@blkheat/shared-types';

/** The protocol (and snapshot) version that added submit-wait and total timing. */
export const SUBMIT_TIMING_VERSION = 4;

/** The phases as the toolbar offers them, in this order. */
export const PHASES: readonly LatencyKind[] = ['total', 'submit', 'queue', 'device'];

/** A phase's name on its button. */
export const PHASE_LABELS: Readonly<Record<LatencyKind, string>> = {
  total: 'Total',
  submit: 'Submit wait',
  queue: 'Queue',
  device: 'Device',
};

/** What a phase measures (the button's title). */
export const PHASE_TITLES: Readonly<Record<LatencyKind, string>> = {
  total: 'what the application sees: bio submission → completion (submit wait + queue + device; bio-based disks: bio → completion)',
  submit: 'bio submission → request allocation: a frozen queue, QoS throttling (wbt, iocost), waiting for a tag',
  queue: 'request start → issue (time spent in the block layer queue)',
  device: 'issue → complete (bio-based disks: bio → completion)',
};

/** A phase in running text: "total latency", "submit wait", … */
export const PHASE_WORDS: Readonly<Record<LatencyKind, string>> = {
  total: 'total latency',
  submit: 'submit wait',
  queue: 'queue latency',
  device: 'device latency',
};

/** A `lat=` value of a URL as a phase; undefined for anything else. */
export function parsePhase(text: string | null | undefined): LatencyKind | undefined {
  return LATENCY_KINDS.find((k) => k === text);
}

/** True for the phases only protocol 4 data has (for request-based disks). */
export function needsSubmitTiming(phase: LatencyKind): boolean {
  return phase === 'total' || phase === 'submit';
}

/** The phase shown when the user has not chosen one: total when the data has it, else device. */
export function defaultPhase(submitTiming: boolean): LatencyKind {
  return submitTiming ? 'total' : 'device';
}

/**
 * The phase drawn for the user's choice (undefined: none, the default): a phase the data lacks
 * (total or submit wait of data before protocol 4) falls back to device latency.
 */
export function resolvePhase(choice: LatencyKind | undefined, submitTiming: boolean): LatencyKind {
  if (choice === undefined) return defaultPhase(submitTiming);
  return needsSubmitTiming(choice) && !submitTiming ? 'device' : choice;
}

/** What the page knows of its source's timing. */
export interface PhaseSource {
  /** Some frame of the source carries submit-wait timing (`t` or `w`). */
  readonly submitTiming: boolean;
  /** The source's protocol version (live: the agent's hello) or snapshot version; undefined before it is known. */
  readonly version: number | undefined;
  readonly snapshot: boolean;
}

/** Why `phase` cannot be shown for this source (a tooltip on its disabled button); undefined when it can. */
export function phaseUnavailable(phase: LatencyKind, src: PhaseSource): string | undefined {
  if (!needsSubmitTiming(phase) || src.submitTiming) return undefined;
  if (src.version !== undefined && src.version < SUBMIT_TIMING_VERSION) {
    return `${src.snapshot ? 'this snapshot' : 'this agent'} predates submit-wait timing (protocol ${SUBMIT_TIMING_VERSION}): device latency is shown`;
  }
  if (src.snapshot) return 'this snapshot has no submit-wait timing (no I/O on a request-based disk carries it): device latency is shown';
  return 'no submit-wait timing in this data (yet): it comes with I/O on request-based disks; device latency is shown';
}

/** True when a frame carries submit-wait timing: a class series with `t` or `w` (protocol 4). */
export function frameHasSubmitTiming(frame: Frame): boolean {
  for (const d of frame.disks) for (const c of d.cls) if (c.t !== undefined || c.w !== undefined) return true;
  return false;
}

/** A disk's kind by its dev ("MAJ:MIN"), for phaseHist(); 'request' for a disk not known (yet). */
export type DiskKindOf = (dev: string) => DiskInfo['kind'];

/** The kinds of `disks`, as a lookup. */
export function diskKinds(disks: readonly DiskInfo[]): DiskKindOf {
  const bio = new Set(disks.filter((d) => d.kind === 'bio').map((d) => d.dev));
  return (dev) => (bio.has(dev) ? 'bio' : 'request');
}

/** Every disk request-based (tests, and data with no disk list). */
export const ALL_REQUEST: DiskKindOf = () => 'request';

/** The phases a bio-based disk has none of (it is timed bio → completion only). */
export function phaseMissingOnBio(phase: LatencyKind): boolean {
  return phase === 'queue' || phase === 'submit';
}

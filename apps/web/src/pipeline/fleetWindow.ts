/**
 * What a fleet view's window needs that an agent's does not (the window loader, windowLoader.ts,
 * asks): which disks a range names, and whether a following window lacks closed columns. An
 * agent, and a small fleet, send every disk's frames as the live edge moves; a big fleet
 * server answers a range naming no disk with its summed fleet row only and sends no live frames
 * (docs/fleet.md "A big fleet"), so the page must name the disks it shows and read the newest
 * columns by range. It also asks for the latency phases it shows (protocol 7): each is a query
 * over every host to Prometheus.
 */
import { type LatencyKind, MAX_FILTER_ITEMS } from '@blkheat/shared-types';
import { alignFloor } from '../model/resolution.js';
import type { UiState } from '../store/uiStore.js';

/**
 * The disks a fleet view's window is asked for: those the user chose to see (a ranked row's
 * click, the host or disk picker), so that a big fleet answers with their rows; undefined (every
 * disk) otherwise, and always for an agent. A window asked for other disks is loaded again.
 */
export function fleetRangeDisks(
  ui: Pick<UiState, 'agent' | 'diskChoice'>,
  shownDevs: () => readonly string[],
): readonly string[] | undefined {
  if (!ui.agent?.fleet || ui.diskChoice === undefined) return undefined;
  const devs = shownDevs();
  return devs.length > 0 && devs.length <= MAX_FILTER_ITEMS ? devs : undefined;
}

/** A range's disks as a key ('' for every disk), to tell whether a window was asked for them. */
export function disksKey(disks: readonly string[] | undefined): string {
  return disks ? disks.join(',') : '';
}

/**
 * A fleet view's following window lacks columns its clock says closed a live step ago or more
 * (source.ts clockEdge): no live frame came for them, as a big fleet sends none.
 */
export function fleetColumnsLate(cur: { readonly step: number; readonly coveredTo: number }, edge: number, liveStep: number): boolean {
  return alignFloor(edge, cur.step) - cur.coveredTo >= cur.step && edge - cur.coveredTo >= 2 * liveStep;
}

/**
 * The latency phases a view's ranges are asked for (RangeRequest.phases): on a fleet, device
 * latency alone until the page has shown queue latency (`queueAsked`): a fleet page shows device
 * latency unless asked (its frames have no total), and queue latency is a query over every
 * host's samples, about as costly as device latency's (docs/fleet.md). Undefined (every phase)
 * once it has, and always for an agent, which sends every phase at no cost worth saving, so that
 * a phase switch there stays instant.
 */
export function fleetRangePhases(ui: Pick<UiState, 'agent'>, queueAsked: boolean): readonly LatencyKind[] | undefined {
  return ui.agent?.fleet && !queueAsked ? DEVICE_ONLY : undefined;
}
const DEVICE_ONLY: readonly LatencyKind[] = ['device'];

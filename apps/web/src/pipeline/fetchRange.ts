/**
 * How history the page does not hold is asked of the agent: paged `range` requests. One owner
 * for the window loader (the data window) and the comparison (the compare ranges).
 * In pipeline/ with the two parts that use it.
 */
import { type Frame, type LatencyKind, MAX_FRAMES_PER_ANSWER } from '@blkheat/shared-types';
import type { AgentSource } from './source.js';

/** What one history fetch asks: [from, to) at `step`, of every disk or those named, with every latency phase or those named. */
export interface RangeAsk {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly disks?: readonly string[] | undefined;
  /** Protocol 7: fleetWindow.ts fleetRangePhases. */
  readonly phases?: readonly LatencyKind[] | undefined;
}

/**
 * The agent's frames of `ask` at its step or the coarser one the agent answers with, in pages of
 * at most MAX_FRAMES_PER_ANSWER (the agent may also stop early: each page continues after what
 * the last covered). Undefined once `wanted()` turns false (the answer is no longer wanted).
 */
export async function fetchRange(
  client: AgentSource,
  { from, to, step, disks, phases }: RangeAsk,
  wanted: () => boolean,
): Promise<{ frames: Frame[]; step: number } | undefined> {
  const frames: Frame[] = [];
  let answered = step;
  let at = from;
  while (at < to) {
    const end = Math.min(to, at + MAX_FRAMES_PER_ANSWER * answered);
    const answer = await client.request({
      t: 'range',
      from: at,
      to: end,
      step,
      ...(disks ? { disks } : {}),
      ...(phases ? { phases } : {}),
    });
    if (!wanted()) return undefined;
    answered = Math.max(answered, answer.step);
    frames.push(...answer.frames);
    at = answer.to > at ? answer.to : end;
  }
  return { frames, step: answered };
}

/**
 * How history the page does not hold is asked of the agent: paged `range` requests. One owner
 * for the window loader (the data window) and the comparison (the compare ranges).
 * In pipeline/ with the two parts that use it.
 */
import { type Frame, type LatencyKind, MAX_FRAMES_PER_ANSWER } from '@blkheat/shared-types';
import type { AgentSource } from './source.js';

/**
 * The agent's frames of [from, to) at `step` or the coarser one it answers with, in pages of
 * at most MAX_FRAMES_PER_ANSWER (the agent may also stop early: each page continues after what
 * the last covered), of every disk or those named (`disks`), with every latency phase or those
 * named (`phases`, protocol 7: fleetWindow.ts fleetRangePhases). Undefined once `wanted()` turns
 * false (the answer is no longer wanted).
 */
export async function fetchRange(
  client: AgentSource,
  from: number,
  to: number,
  step: number,
  wanted: () => boolean,
  disks?: readonly string[],
  phases?: readonly LatencyKind[],
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

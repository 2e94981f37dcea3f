/**
 * Snapshots (docs/snapshot.md) of a fleet view's range answers; the agent's own are written
 * while read from history (rest-answers.ts). Frames are chosen like a range answer (finest tier
 * that fits MAX_FRAMES_PER_ANSWER); steps with no I/O are left out, as the snapshot format says.
 */
import { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, isEmptyFrame, type Frame, type RangeRequest } from '@blkheat/shared-types';
import type { AgentContext } from './context.js';
import type { FramesAnswer } from '../history/range-read.js';
import { SNAPSHOT_MAX_SAMPLES } from './limits.js';

/** The snapshot of a range answer (from history, or from Prometheus in a fleet view). */
export function snapshotOfAnswer(
  ctx: AgentContext,
  req: RangeRequest,
  answer: FramesAnswer,
  now: Date = new Date(),
): { json: string; from: number; to: number } {
  const frames = answer.frames.filter((j) => !isEmptyFrameText(j));
  const samples = ctx.samples.query({
    from: answer.from,
    to: answer.to,
    disks: req.disks,
    classes: req.classes,
    limit: SNAPSHOT_MAX_SAMPLES,
  }).samples;
  const range = JSON.stringify({ from: answer.from, to: answer.to, step: answer.step });
  const json = `${snapshotHeadJson(ctx, req, now).slice(0, -1)},"frames":[${frames.join(',')}],"range":${range},"samples":${JSON.stringify(samples)}}`;
  return { json, from: answer.from, to: answer.to };
}

/**
 * A snapshot's fields before its frames, as a JSON object: what it is, who made it, and the
 * disks asked for. Its `range` follows the frames (a streamed snapshot knows it only once they
 * are read, when one cut at its size ends early).
 */
export function snapshotHeadJson(ctx: AgentContext, req: RangeRequest, now: Date): string {
  const wanted = new Set(req.disks ?? []);
  return JSON.stringify({
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    createdAt: now.toISOString(),
    agent: ctx.version,
    host: ctx.host,
    schema: ctx.schema,
    disks: ctx.disks().filter((d) => wanted.size === 0 || wanted.has(d.dev)),
  });
}

/** Whether a frame's JSON has no I/O: a cheap test on the text, parsing only the rare candidates. */
export function isEmptyFrameText(json: string): boolean {
  // Unchecked cast: the JSON is the agent's own history (written from a Frame, CRC-checked).
  return json.includes('"disks":[]') && isEmptyFrame(JSON.parse(json) as Frame);
}

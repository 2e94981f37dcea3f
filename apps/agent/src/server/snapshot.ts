/**
 * /api/v1/snapshot: a self-describing export of a time range (docs/snapshot.md). Frames are
 * chosen like a range answer (finest tier that fits MAX_FRAMES_PER_ANSWER); steps with no
 * I/O are left out, as the snapshot format says.
 */
import { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, isEmptyFrame, type Frame, type RangeRequest } from '@blkheat/shared-types';
import type { AgentContext } from './context.js';
import { answerRange, type FramesAnswer } from '../history/range-read.js';
import { SNAPSHOT_MAX_BYTES, SNAPSHOT_MAX_SAMPLES } from './limits.js';

/** The snapshot as JSON text (frames are spliced in as stored, not re-serialized when possible). */
export function snapshotJson(ctx: AgentContext, req: RangeRequest, now: Date = new Date()): { json: string; from: number; to: number } {
  return snapshotOfAnswer(ctx, req, answerRange(ctx.history, req, SNAPSHOT_MAX_BYTES), now);
}

/** The snapshot of a range answer (from history, or from Prometheus in a fleet view). */
export function snapshotOfAnswer(
  ctx: AgentContext,
  req: RangeRequest,
  answer: FramesAnswer,
  now: Date = new Date(),
): { json: string; from: number; to: number } {
  // Cheap emptiness test on the text; parse only the rare candidates.
  const frames = answer.frames.filter((j) => !j.includes('"disks":[]') || !isEmptyFrame(JSON.parse(j) as Frame));
  const samples = ctx.samples.query({
    from: answer.from,
    to: answer.to,
    disks: req.disks,
    classes: req.classes,
    limit: SNAPSHOT_MAX_SAMPLES,
  }).samples;
  const wanted = new Set(req.disks ?? []);
  const disks = ctx.disks().filter((d) => wanted.size === 0 || wanted.has(d.dev));
  const head = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    createdAt: now.toISOString(),
    agent: ctx.version,
    host: ctx.host,
    schema: ctx.schema,
    range: { from: answer.from, to: answer.to, step: answer.step },
    disks,
  };
  const headJson = JSON.stringify(head);
  const json = `${headJson.slice(0, -1)},"frames":[${frames.join(',')}],"samples":${JSON.stringify(samples)}}`;
  return { json, from: answer.from, to: answer.to };
}

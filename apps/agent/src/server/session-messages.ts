/**
 * The text of the messages a session sends and the keys it files them under: serialized once
 * per filter for every client with that filter.
 */
import {
  filterFrame,
  type Frame,
  type FrameFilter,
  MAX_REQUEST_ID_LENGTH,
  type RequestId,
  type SamplesAnswer,
  type SamplesRequest,
} from '@blkheat/shared-types';
import type { KeptAnswer } from '../history/sample-source.js';

/** A stable key for a filter, so clients with equal filters share one serialized frame. */
export function filterKeyOf(filter: FrameFilter): string {
  if (filter.disks === undefined && filter.classes === undefined) return '*';
  return JSON.stringify([filter.disks ? [...filter.disks].sort() : null, filter.classes ? [...filter.classes].sort() : null]);
}

/** The `id` of a message that failed validation, when it has a usable one (so the error can be matched). */
export function requestIdOf(text: string): RequestId | undefined {
  try {
    const raw: unknown = JSON.parse(text);
    if (typeof raw !== 'object' || raw === null) return undefined;
    const id = (raw as { id?: unknown }).id;
    if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return id;
    if (typeof id === 'string' && id.length <= MAX_REQUEST_ID_LENGTH) return id;
  } catch {
    // not JSON: no id
  }
  return undefined;
}

/** Serialize a live frame for one filter. */
export function frameMessage(frame: Frame, filter: FrameFilter): Buffer {
  return Buffer.from(`{"t":"frame","frame":${JSON.stringify(filterFrame(frame, filter))}}`, 'utf8');
}

/**
 * A samples answer's fields (WebSocket, without `t` and `id`, and REST): `pick` said back when the
 * request named one, so a client tells a spread answer from an agent that only knows the oldest.
 */
export function samplesAnswerFields(req: Pick<SamplesRequest, 'pick'>, a: KeptAnswer): Omit<SamplesAnswer, 't' | 'id'> {
  return {
    samples: a.samples,
    truncated: a.truncated,
    ...(req.pick !== undefined ? { pick: req.pick } : {}),
    ...(a.matched !== undefined ? { matched: a.matched } : {}),
    kept: a.kept,
  };
}

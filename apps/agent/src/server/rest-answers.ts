/**
 * REST answers read from history (/api/v1/range, /api/v1/snapshot): read in the read scheduler
 * a slice at a time and written while they are read. What a connection holds is then one
 * slice's text plus the socket's own buffer, whatever the size of the answer: a client that
 * does not read makes its job wait (parked on the drain) instead of the agent buffering the
 * whole answer for it, and after STALLED_ANSWER_MS without reading it is cut off and its
 * memory released. An answer built whole would not do: 100 clients that ask for a snapshot and
 * read nothing would hold ~900 MB, and building each 8 MB snapshot holds the event loop for
 * 0.2–0.5 s.
 *
 * The status and headers go out with the first slice; an error after that can only cut the
 * connection (the body is then not valid JSON, so it cannot be mistaken for an answer).
 */
import type { Response } from 'express';
import type { RangeRequest } from '@blkheat/shared-types';
import type { AnswerCutter } from '../history/range-read.js';
import type { AgentContext } from './context.js';
import { isEmptyFrameText, snapshotHeadJson } from './snapshot.js';
import { SNAPSHOT_MAX_SAMPLES, STALLED_ANSWER_MS } from './limits.js';
import type { ReadJob, ReadScheduler } from './read-scheduler.js';

/** One slice of an answer's text: what to write, the history bytes it cost, and whether it is the last. */
interface Piece {
  readonly text: string;
  readonly bytes: number;
  readonly last: boolean;
}

/** An answer produced a slice at a time. */
type PieceSource = (deadline: number) => Piece;

/**
 * Most frame JSON written in one piece. What a client that stops reading leaves in the agent is
 * about one piece: Node keeps whatever one write() did not get into the socket.
 */
const PIECE_BYTES = 128 * 1024;

/** Samples serialized per slice: 1,000 take ~1–2 ms. */
const SAMPLES_PER_PIECE = 1000;

/**
 * Writes `source` to `res` from the read scheduler. Answers 503 (with Retry-After) when the
 * client has too many answers open already.
 */
export function streamAnswer(res: Response, reads: ReadScheduler, client: string, source: PieceSource): void {
  let stalled: NodeJS.Timeout | undefined;
  const job: ReadJob = {
    gone: () => res.destroyed,
    step(deadline) {
      const piece = source(deadline);
      const flowing = piece.text === '' || res.write(piece.text);
      if (piece.last) {
        res.end();
        return { bytes: piece.bytes, next: 'done' };
      }
      return { bytes: piece.bytes, next: flowing ? 'more' : drained(res) };
    },
    dropped(why) {
      clearTimeout(stalled);
      if (!res.headersSent) res.status(503).json({ error: `not answered: ${why}` });
      else res.destroy();
    },
  };
  /** Resolves when the client has taken the buffered text, or when it is gone or cut off for not reading. */
  function drained(r: Response): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(stalled);
        r.off('drain', done);
        r.off('close', done);
        resolve();
      };
      r.once('drain', done);
      r.once('close', done);
      stalled = setTimeout(() => {
        r.destroy();
        done();
      }, STALLED_ANSWER_MS);
      stalled.unref();
    });
  }
  res.type('application/json');
  if (!reads.submit(client, job)) {
    res.setHeader('Retry-After', '1');
    res.status(503).json({ error: 'busy: this client has too many answers being read already; wait for them' });
  }
}

/** The frames of a cutter as JSON array elements, written as read: `"frames":[` is the caller's. */
function framePieces(cutter: AnswerCutter, keep: (json: string) => boolean = () => true) {
  let first = true;
  return (deadline: number): { text: string; bytes: number; answer: ReturnType<AnswerCutter['pull']> } => {
    const answer = cutter.pull(deadline, PIECE_BYTES);
    const frames = cutter.takeFrames().filter(keep);
    let text = frames.join(',');
    if (frames.length > 0 && !first) text = `,${text}`;
    if (frames.length > 0) first = false;
    return { text, bytes: cutter.takeBytesRead(), answer };
  };
}

/** /api/v1/range: `{"from","step","frames":[…],"to"}` (the fields of the WebSocket answer). */
export function rangeSource(cutter: AnswerCutter): PieceSource {
  const frames = framePieces(cutter);
  let started = false;
  return (deadline) => {
    const head = started ? '' : `{"from":${cutter.from},"step":${cutter.step},"frames":[`;
    started = true;
    const { text, bytes, answer } = frames(deadline);
    if (!answer) return { text: head + text, bytes, last: false };
    return { text: `${head}${text}],"to":${answer.to}}`, bytes, last: true };
  };
}

/**
 * /api/v1/snapshot (docs/snapshot.md): the head, frames with I/O (steps with none are left
 * out, as the format says), the range they cover, and the samples of that range, a thousand
 * per slice.
 */
export function snapshotSource(ctx: AgentContext, req: RangeRequest, cutter: AnswerCutter, now: Date = new Date()): PieceSource {
  const head = snapshotHeadJson(ctx, req, now);
  const frames = framePieces(cutter, (j) => !isEmptyFrameText(j));
  let started = false;
  /** The answer's range once its frames are read; samples are then read a page per slice. */
  let range: { from: number; to: number } | undefined;
  let after: number | undefined;
  let sent = 0;
  return (deadline) => {
    if (range === undefined) {
      const open = started ? '' : `${head.slice(0, -1)},"frames":[`;
      started = true;
      const { text, bytes, answer } = frames(deadline);
      if (!answer) return { text: open + text, bytes, last: false };
      range = { from: answer.from, to: answer.to };
      const rangeJson = JSON.stringify({ from: answer.from, to: answer.to, step: answer.step });
      return { text: `${open}${text}],"range":${rangeJson},"samples":[`, bytes, last: false };
    }
    const page = ctx.samples.query({
      ...range,
      disks: req.disks,
      classes: req.classes,
      limit: Math.min(SAMPLES_PER_PIECE, SNAPSHOT_MAX_SAMPLES - sent),
      after,
    });
    after = page.next;
    const text = (sent > 0 && page.samples.length > 0 ? ',' : '') + page.samples.map((s) => JSON.stringify(s)).join(',');
    sent += page.samples.length;
    const last = !page.truncated || sent >= SNAPSHOT_MAX_SAMPLES;
    return { text: last ? `${text}]}` : text, bytes: 0, last };
  };
}

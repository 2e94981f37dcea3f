/**
 * A parsed snapshot cut into parts of bounded size, and put back together: how an imported
 * file crosses from the worker that parsed it to the page. One postMessage of a whole 50 MB
 * snapshot would be deserialized on the main thread in one long task; parts of about
 * PART_BUDGET values each are deserialized one task at a time, with the page free in between,
 * and the page asks for each one when it has taken the one before (workers/snapshotImport.ts).
 * Frames and samples travel as JSON text, which the page parses back: chromium's JSON.parse
 * builds the objects about 6× faster than structured cloning's deserializer does (the one-hour
 * three-disk snapshot of bench/web: 56 ms of the page's main thread instead of 370 ms). The
 * worker validated them, so the text is trusted; and they were JSON text in the file to begin
 * with, so they come back as they were, and a re-export writes the same bytes.
 */
import type { Frame, IoSample, Snapshot } from '@blkheat/shared-types';
import { SourceActivity } from './activity.js';

/** About how many JSON values one part carries (a frame counts its disks, classes and buckets). */
export const PART_BUDGET = 40_000;

export type SnapshotHead = Omit<Snapshot, 'frames' | 'samples'>;

export type SnapshotPart =
  /** `keys`: the snapshot's keys in order, so a re-export writes the same bytes as the file. */
  | { readonly t: 'head'; readonly head: SnapshotHead; readonly keys: readonly string[] }
  /** `json`: a JSON array of frames. */
  | { readonly t: 'frames'; readonly json: string }
  /** `json`: a JSON array of samples. */
  | { readonly t: 'samples'; readonly json: string };

/** Roughly how many values a frame holds (what writing and parsing it cost). */
function frameWeight(f: Frame): number {
  let w = 2;
  for (const d of f.disks) {
    w += 2;
    for (const c of d.cls) {
      w += 4 + c.d.length + c.q.length + (c.e ? 4 : 0);
      for (const z of c.sz ?? []) w += 3 + z.d.length;
    }
    for (const g of d.cg ?? []) w += 3 + g.d.length;
    w += (d.inflight?.ios.length ?? 0) * 8;
  }
  return w;
}

/** Values in a sample (a flat record). */
const SAMPLE_WEIGHT = 12;

/** The head first, then the frames and the samples in order, each part about `budget` values. */
export function* snapshotParts(s: Snapshot, budget = PART_BUDGET): Generator<SnapshotPart> {
  const { frames, samples, ...head } = s;
  yield { t: 'head', head, keys: Object.keys(s) };
  let from = 0;
  let weight = 0;
  for (let i = 0; i < frames.length; i++) {
    weight += frameWeight(frames[i] as Frame);
    if (weight >= budget) {
      yield { t: 'frames', json: JSON.stringify(frames.slice(from, i + 1)) };
      from = i + 1;
      weight = 0;
    }
  }
  if (from < frames.length) yield { t: 'frames', json: JSON.stringify(frames.slice(from)) };
  const perPart = Math.max(1, Math.floor(budget / SAMPLE_WEIGHT));
  for (let i = 0; i < samples.length; i += perPart) yield { t: 'samples', json: JSON.stringify(samples.slice(i, i + perPart)) };
}

/**
 * Puts parts back together, in the order snapshotParts made them, and gathers what the frames
 * say (`activity`) part by part: the page then shows the snapshot without walking its frames in
 * that task.
 */
export class SnapshotAssembler {
  readonly activity = new SourceActivity();
  private head: SnapshotHead | undefined;
  private keys: readonly string[] = [];
  private readonly frames: Frame[] = [];
  private readonly samples: IoSample[] = [];

  add(part: SnapshotPart): void {
    if (part.t === 'head') {
      this.head = part.head;
      this.keys = part.keys;
    } else if (part.t === 'frames') {
      const frames = JSON.parse(part.json) as Frame[];
      for (const f of frames) this.frames.push(f);
      this.activity.note(frames);
    } else for (const x of JSON.parse(part.json) as IoSample[]) this.samples.push(x);
  }

  /** The snapshot, or undefined when no head arrived. */
  result(): Snapshot | undefined {
    const head = this.head;
    if (!head) return undefined;
    // Keys first, in the file's order (values follow): the object serializes as the file did.
    const ordered: Record<string, unknown> = {};
    for (const k of this.keys) if (k in head || k === 'frames' || k === 'samples') ordered[k] = undefined;
    return Object.assign(ordered, head, { frames: this.frames, samples: this.samples });
  }
}

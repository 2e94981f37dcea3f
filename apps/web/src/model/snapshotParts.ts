/**
 * A parsed snapshot cut into parts of bounded size, and put back together: how an imported
 * file crosses from the worker that parsed it to the page. One postMessage of a whole 50 MB
 * snapshot would be deserialized on the main thread in one long task; parts of about
 * PART_BUDGET values each are deserialized one task at a time, with the page free in between.
 */
import type { Frame, IoSample, Snapshot } from '@blkheat/shared-types';

/** About how many JSON values one part carries (a frame counts its disks, classes and buckets). */
export const PART_BUDGET = 40_000;

export type SnapshotHead = Omit<Snapshot, 'frames' | 'samples'>;

export type SnapshotPart =
  /** `keys`: the snapshot's keys in order, so a re-export writes the same bytes as the file. */
  | { readonly t: 'head'; readonly head: SnapshotHead; readonly keys: readonly string[] }
  | { readonly t: 'frames'; readonly frames: readonly Frame[] }
  | { readonly t: 'samples'; readonly samples: readonly IoSample[] };

/** Roughly how many values structured cloning a frame visits. */
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
      yield { t: 'frames', frames: frames.slice(from, i + 1) };
      from = i + 1;
      weight = 0;
    }
  }
  if (from < frames.length) yield { t: 'frames', frames: frames.slice(from) };
  const perPart = Math.max(1, Math.floor(budget / SAMPLE_WEIGHT));
  for (let i = 0; i < samples.length; i += perPart) yield { t: 'samples', samples: samples.slice(i, i + perPart) };
}

/** Puts parts back together, in the order snapshotParts made them. */
export class SnapshotAssembler {
  private head: SnapshotHead | undefined;
  private keys: readonly string[] = [];
  private readonly frames: Frame[] = [];
  private readonly samples: IoSample[] = [];

  add(part: SnapshotPart): void {
    if (part.t === 'head') {
      this.head = part.head;
      this.keys = part.keys;
    } else if (part.t === 'frames') for (const f of part.frames) this.frames.push(f);
    else for (const x of part.samples) this.samples.push(x);
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

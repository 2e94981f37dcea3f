/**
 * The one way a series' latency phases are summed: a class, a size class or a cgroup of a disk
 * carries a count and its phases (PhaseSeries: `d`, and from protocol 4 `q`, `w`, `t`, `wu` for
 * sizes and cgroups too), and whoever adds them up (the agent's frame builder, history tiers,
 * the dashboard zooming out) does it through a PhaseAcc, so a phase is never summed for classes
 * and forgotten for sizes or cgroups.
 *
 * A phase absent from every series added stays absent (data from before it was added has none,
 * which is not the same as none of its I/Os waiting); present in some, it is their sum.
 */
import { addSparseInto, toSparse } from './histogram.js';
import type { PhaseSeries } from './frame-model.js';

/** A series' count and dense phase histograms while series are summed. */
export interface PhaseAcc {
  n: number;
  readonly d: Float64Array;
  q: Float64Array | undefined;
  w: Float64Array | undefined;
  t: Float64Array | undefined;
  wu: number | undefined;
}

/** An empty sum over `buckets` buckets. */
export function newPhaseAcc(buckets: number): PhaseAcc {
  return { n: 0, d: new Float64Array(buckets), q: undefined, w: undefined, t: undefined, wu: undefined };
}

/** acc += a series of `n` I/Os with phases `h`. Throws (addSparseInto) on a bucket outside the schema. */
export function addPhases(acc: PhaseAcc, n: number, h: PhaseSeries): void {
  const buckets = acc.d.length;
  acc.n += n;
  addSparseInto(acc.d, h.d);
  if (h.q) addSparseInto((acc.q ??= new Float64Array(buckets)), h.q);
  if (h.w) addSparseInto((acc.w ??= new Float64Array(buckets)), h.w);
  if (h.t) addSparseInto((acc.t ??= new Float64Array(buckets)), h.t);
  if (h.wu !== undefined) acc.wu = (acc.wu ?? 0) + h.wu;
}

/** into += from (dense): folding sums together, e.g. the cgroups past the listed ones. */
export function addPhaseAcc(into: PhaseAcc, from: PhaseAcc): void {
  const add = (dst: Float64Array, src: Float64Array): void => {
    for (let b = 0; b < src.length && b < dst.length; b++) dst[b] = (dst[b] as number) + (src[b] as number);
  };
  const buckets = into.d.length;
  into.n += from.n;
  add(into.d, from.d);
  if (from.q) add((into.q ??= new Float64Array(buckets)), from.q);
  if (from.w) add((into.w ??= new Float64Array(buckets)), from.w);
  if (from.t) add((into.t ??= new Float64Array(buckets)), from.t);
  if (from.wu !== undefined) into.wu = (into.wu ?? 0) + from.wu;
}

/** The sum as a series carries it: sparse, each phase only where some added series had it. */
export function phasesOf(acc: PhaseAcc): { d: number[]; q?: number[]; w?: number[]; t?: number[]; wu?: number } {
  return {
    d: toSparse(acc.d),
    ...(acc.q ? { q: toSparse(acc.q) } : {}),
    ...(acc.w ? { w: toSparse(acc.w) } : {}),
    ...(acc.t ? { t: toSparse(acc.t) } : {}),
    ...(acc.wu !== undefined ? { wu: acc.wu } : {}),
  };
}

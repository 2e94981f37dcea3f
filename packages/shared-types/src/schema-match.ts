/**
 * Compile-time proof that each wire interface (frame-model.ts, protocol.ts, snapshot.ts) is
 * exactly what its zod schema accepts: a field added, removed, renamed, retyped or made optional
 * in one and not the other fails `tsc` here. The interfaces stay the hand-written source of the
 * documentation; the schemas add the limits. Nothing here exists at run time.
 */
import type { z } from 'zod';
import type { BucketSchema } from './buckets.js';
import type { ClassSeries, DiskFrame, DiskInfo, Frame, IoSample } from './frame-model.js';
import type { SparseHist } from './histogram.js';
import type { ClientMessage, RangeRequest, SamplesRequest, SubscribeRequest } from './protocol.js';
import type {
  bucketSchemaSchema,
  classSeriesSchema,
  diskFrameSchema,
  diskInfoSchema,
  frameSchema,
  ioSampleSchema,
  rangeRequestSchema,
  samplesRequestSchema,
  sparseHistSchema,
  subscribeSchema,
} from './schemas.js';
import type { snapshotSchema } from './snapshot-schema.js';
import type { Snapshot } from './snapshot.js';

/** T with every property and array readonly, all the way down: zod outputs are mutable, the interfaces are not. */
export type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/**
 * True only when A and B are the same type, optional and readonly modifiers included (mutual
 * assignability is not enough: it ignores an extra optional field, and readonly-ness).
 */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** True only when `I` is exactly the (readonly) output of schema `S`. */
export type Matches<I, S extends z.ZodType> = Equal<I, DeepReadonly<z.output<S>>>;

/** Fails to compile (`false` does not satisfy `true`), on the line of the pair, when an interface and its schema drift apart. */
type Proof<T extends true> = T;

export type WireSchemasMatch = [
  Proof<Matches<SparseHist, typeof sparseHistSchema>>,
  Proof<Matches<BucketSchema, typeof bucketSchemaSchema>>,
  Proof<Matches<ClassSeries, typeof classSeriesSchema>>,
  Proof<Matches<DiskFrame, typeof diskFrameSchema>>,
  Proof<Matches<Frame, typeof frameSchema>>,
  Proof<Matches<DiskInfo, typeof diskInfoSchema>>,
  Proof<Matches<IoSample, typeof ioSampleSchema>>,
  Proof<Matches<SubscribeRequest, typeof subscribeSchema>>,
  Proof<Matches<RangeRequest, typeof rangeRequestSchema>>,
  Proof<Matches<SamplesRequest, typeof samplesRequestSchema>>,
  Proof<Matches<ClientMessage, typeof subscribeSchema | typeof rangeRequestSchema | typeof samplesRequestSchema>>,
  Proof<Matches<Snapshot, typeof snapshotSchema>>,
];

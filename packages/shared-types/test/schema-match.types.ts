// Type-level test, compiled (not run) by `tsc -p tsconfig.tests.json`: the drift check of
// src/schema-match.ts catches each way an interface can stop matching its schema, including the
// ones plain assignability misses (an extra optional field, a dropped readonly).
import type { DiskFrame, DiskInfo, Frame, IoSample } from '../src/frame-model.js';
import type { diskInfoSchema, frameSchema, ioSampleSchema } from '../src/schemas.js';
import type { Matches } from '../src/schema-match.js';

type Holds<T extends true> = T;
type Caught<T extends false> = T;

/** The same fields spelt as an interface: identical, so the check is not just always false. */
interface SameDiskInfo extends Omit<DiskInfo, 'dev'> {
  readonly dev: string;
}
/** A field the schema does not know (a strict schema would refuse it at run time). */
interface ExtraField extends DiskInfo {
  readonly serial?: string;
}
/** A field the schema has, left out. */
type MissingField = Omit<DiskInfo, 'model'>;
/** Optional in the interface, required in the schema. */
interface LooserField extends Omit<IoSample, 'd_ns'> {
  readonly d_ns?: number;
}
/** Another type. */
interface OtherType extends Omit<IoSample, 'sector'> {
  readonly sector: number;
}
/** Mutable where the wire types are readonly. */
interface MutableField extends Omit<DiskInfo, 'dev'> {
  dev: string;
}
/** A drift one level down (a disk's field) shows in the frame. */
interface DriftedDisk extends DiskFrame {
  readonly extra?: number;
}
interface DeepDrift extends Omit<Frame, 'disks'> {
  readonly disks: readonly DriftedDisk[];
}
interface SameFrame extends Omit<Frame, 'disks'> {
  readonly disks: readonly DiskFrame[];
}

export type SchemaMatchChecks = [
  Holds<Matches<SameDiskInfo, typeof diskInfoSchema>>,
  Caught<Matches<ExtraField, typeof diskInfoSchema>>,
  Caught<Matches<MissingField, typeof diskInfoSchema>>,
  Caught<Matches<LooserField, typeof ioSampleSchema>>,
  Caught<Matches<OtherType, typeof ioSampleSchema>>,
  Caught<Matches<MutableField, typeof diskInfoSchema>>,
  Holds<Matches<SameFrame, typeof frameSchema>>,
  Caught<Matches<DeepDrift, typeof frameSchema>>,
];

/**
 * Snapshot file: a self-describing, offline-viewable export of a time range. The agent serves
 * it at /api/v1/snapshot, the dashboard exports and imports it. See docs/snapshot.md.
 *
 * Version 1 (added in blkheat 0.1.0). Version 2 (blkheat 0.2.0): frames may carry the fields
 * added in protocol 2 (errors, passthrough, requeues, untimed, in flight). Version 3: frames may
 * carry per-cgroup series (`cg`, protocol 3). Version 4: frames may carry the submit wait and
 * total phases (`w`, `t`, `wu`, `causes`, in-flight `waiting`) and samples `w_ns` (protocol 4).
 * Older files still import.
 */
import type { BucketSchema } from './buckets.js';
import type { DiskInfo, Frame, IoSample } from './frame-model.js';
import type { HostInfo } from './protocol.js';

export const SNAPSHOT_FORMAT = 'blkheat-snapshot';
export const SNAPSHOT_VERSION = 5;
/** Versions this build imports. */
export const SNAPSHOT_VERSIONS_READ: readonly number[] = [1, 2, 3, 4, 5];

/** Import refuses files larger than this (bytes). */
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

export interface Snapshot {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: number;
  /** ISO 8601 time of export. */
  readonly createdAt: string;
  /** Agent version that recorded the data. */
  readonly agent: string;
  readonly host: HostInfo;
  readonly schema: BucketSchema;
  /** [from, to) in unix seconds and the step of `frames`. */
  readonly range: { readonly from: number; readonly to: number; readonly step: number };
  readonly disks: readonly DiskInfo[];
  /** Frames in time order, one per step that had I/O (missing steps had none). */
  readonly frames: readonly Frame[];
  readonly samples: readonly IoSample[];
  /** Free text, e.g. what the exporter was looking at. */
  readonly note?: string;
  /**
   * Added in blkheat 0.4.0 (optional; the dashboard writes it): the compare (A/B) view that was
   * open at export, so an import restores it. `comparison` absent: the visible range.
   */
  readonly compare?: SnapshotCompare;
}

/** [from, to) in unix seconds. */
export interface SnapshotTimeRange {
  readonly from: number;
  readonly to: number;
}

export interface SnapshotCompare {
  readonly baseline: SnapshotTimeRange;
  readonly comparison?: SnapshotTimeRange;
}

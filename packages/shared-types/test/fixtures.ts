// Fixtures the shared-types tests share: a snapshot of the current version around one disk's frame.
import { BUCKET_SCHEMA, type DiskFrame, type IoSample, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, type Snapshot } from '../src/index.js';

/** A snapshot (current version) of one second at `ts` holding `disk` (loop0, request-based), with `samples`. */
export function snapshotOf(ts: number, disk: DiskFrame, samples: IoSample[] = []): Snapshot {
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    createdAt: '2026-11-27T12:00:00.000Z',
    agent: '0.5.0',
    host: { hostname: 'h', kernel: '6.18.0', instance: 'h' },
    schema: BUCKET_SCHEMA,
    range: { from: ts, to: ts + 1, step: 1 },
    disks: [{ dev: '7:0', name: 'loop0', kind: 'request', present: true }],
    frames: [{ ts, step: 1, disks: [disk] }],
    samples,
  };
}

/**
 * Limits and formats of the wire and snapshot data, each defined here once: the zod schemas
 * refuse what exceeds them, and the agent and the dashboard clamp or check against the same
 * values, so what one side produces the other accepts.
 */

export const DAY_SECONDS = 86400;
/** Longest span one request (or snapshot) may cover (31 days), in seconds. */
export const MAX_SPAN_SECONDS = 31 * DAY_SECONDS;
/** Coarsest step a request or frame may have (one day), in seconds. */
export const MAX_STEP_SECONDS = DAY_SECONDS;
/** Most disks / classes a filter may name. */
export const MAX_FILTER_ITEMS = 256;
/** Most frames / samples / disks a snapshot may hold. */
export const SNAPSHOT_LIMITS = Object.freeze({ frames: 200_000, samples: 200_000, disks: 1024, classesPerDisk: 4096 });

/** Unix seconds data may carry: integers after 2000-01-01 and before 2200. */
export const UNIX_SECONDS_RANGE = Object.freeze({ min: 946684800, max: 7258118400 });

/** A disk's kernel "MAJ:MIN". */
export const DEV_RE = /^\d{1,4}:\d{1,7}$/;
/** An op class name like "Sync-Write": a letter, then up to 63 letters, digits and dashes. */
export const CLASS_NAME_RE = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;

/** Longest string request id (a numeric id is any safe integer). */
export const MAX_REQUEST_ID_LENGTH = 64;
/** Longest cgroup path (DiskFrame.cg[].g and IoSample.cg). */
export const MAX_CGROUP_PATH_LENGTH = 4096;
/** Longest snapshot note. */
export const MAX_NOTE_LENGTH = 4096;
/** Longest HostInfo hostname, kernel and instance. */
export const MAX_HOST_FIELD_LENGTH = 255;
/** Longest DiskInfo strings; a fleet view names a disk "host/disk", hence the long name. */
export const DISK_INFO_LIMITS = Object.freeze({ name: 192, model: 128, host: 128, link: 2048 });

/** The most stall a step can hold, in µs (IoPressure's `some_us` and `full_us`): the step itself. */
export function maxStallMicros(step: number): number {
  return step * 1e6;
}

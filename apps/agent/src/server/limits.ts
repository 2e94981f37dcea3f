/**
 * Bounds that keep the agent's memory and CPU independent of what clients do. Documented in
 * docs/protocol.md ("Limits").
 */

/** Above this many unsent bytes on a connection, live frames are held back and answers refused. */
export const SOFT_BUFFER_BYTES = 256 * 1024;
/** Sending resumes when the unsent bytes fall to this. */
export const RESUME_BUFFER_BYTES = 64 * 1024;
/** Above this many unsent bytes the connection is closed: the client is not reading at all. */
export const HARD_BUFFER_BYTES = 8 * 1024 * 1024;
/** A live client this many seconds behind catches up from history; further behind it gets `lagging`. */
export const CATCH_UP_FRAMES = 5;
/** Largest range answer (and backfill page), in bytes of frame JSON; longer ones are cut and paged. */
export const ANSWER_MAX_BYTES = 4 * 1024 * 1024;
export const BACKFILL_PAGE_BYTES = 1024 * 1024;
/** Largest snapshot's frames, in bytes of JSON (the dashboard refuses files above 64 MiB). */
export const SNAPSHOT_MAX_BYTES = 48 * 1024 * 1024;
/** Most samples in a snapshot. */
export const SNAPSHOT_MAX_SAMPLES = 50_000;
/** Default `limit` of a samples request. */
export const DEFAULT_SAMPLES_LIMIT = 1000;
/** Most simultaneous WebSocket clients. */
export const MAX_CLIENTS = 256;
/** Requests (range, samples, subscribe) per client: a bucket of this many, refilled at REQUEST_RATE per second. */
export const REQUEST_BURST = 100;
export const REQUEST_RATE = 20;
/** Ping interval; a client that answered none of the last PING_MISSES pings is dropped. */
export const PING_INTERVAL_MS = 30_000;
export const PING_MISSES = 4;
/**
 * Heavy reads of history (backfill pages, range answers, snapshots) run in the read scheduler
 * (read-scheduler.ts): at most READ_SLICE_MS of reading per turn of the event loop (one job
 * at most READ_JOB_SLICE_MS of it), at most READ_ACTIVE_JOBS answers half-built at once, within
 * byte budgets per client and in total, and at most READ_QUEUED_JOBS_PER_CLIENT jobs per client.
 */
export const READ_SLICE_MS = 10;
export const READ_JOB_SLICE_MS = 6;
export const READ_ACTIVE_JOBS = 8;
export const READ_QUEUED_JOBS_PER_CLIENT = 8;
export const READ_BYTES_PER_S_TOTAL = 32 * 1024 * 1024;
export const READ_BYTES_PER_S_PER_CLIENT = 8 * 1024 * 1024;
/** Most open HTTP connections (WebSocket ones included); more are refused by the kernel's backlog. */
export const MAX_CONNECTIONS = 512;
/** A REST answer whose client reads none of it for this long is cut off, and its memory released. */
export const STALLED_ANSWER_MS = 20_000;

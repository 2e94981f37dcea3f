/**
 * WebSocket protocol between the agent and the dashboard. JSON text messages, one object each,
 * discriminated by `t`. See docs/protocol.md for the narrative and the version history.
 *
 * Version 1 (added in blkheat 0.1.0). Version 4: the submit wait and total phases (ClassSeries
 * `w`, `t`, `wu`; DiskFrame `causes`; InflightState `waiting`, `oldest_wait_ns`, `frozen`;
 * IoSample `w_ns`; samples `kind` 'submit' and 'total'). Version 5: samples kept on disk with the
 * history; the samples answer says which are kept (`kept`); DiskFrame `tags_full` (every tag in use
 * while bios waited). Version 6: `step` of the hello (and of live and backfill frames) may be over
 * 1: a fleet server whose hosts are scraped at over 1 s streams columns of the coarsest scrape
 * interval, and closes its streams with `CLOSE_CODES.restart` when that step changes. Version 7:
 * a range request may name the latency phases it needs (`phases`), and an answer whose frames
 * leave a phase out says which they carry (a fleet server's: each phase is a query of every
 * host to Prometheus).
 */
import type { BucketSchema } from './buckets.js';
import type { DiskInfo, Frame, IoSample, LatencyKind } from './frame-model.js';
import type { SamplePick } from './sample-spread.js';

export const PROTOCOL_VERSION = 7;

/** Largest client message the agent accepts, in bytes. */
export const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024;

/** Most frames one range or backfill answer carries (the client pages for more). */
export const MAX_FRAMES_PER_ANSWER = 3600;

/** Most samples one samples answer carries. */
export const MAX_SAMPLES_PER_ANSWER = 5000;

export interface HostInfo {
  readonly hostname: string;
  readonly kernel: string;
  /**
   * The agent's identity in a fleet (--instance; the hostname unless given): the `instance`
   * label of its /metrics. Added in protocol 3 and snapshot 3 (optional: older agents lack it).
   */
  readonly instance?: string;
}

// ---- agent -> client ----

/** Disks a hello lists itself; a longer list follows it in a `disks` message (HelloMessage.disksFollow). */
export const HELLO_INLINE_DISKS = 256;

export interface HelloMessage {
  readonly t: 'hello';
  readonly protocol: number;
  readonly agent: string;
  readonly host: HostInfo;
  /**
   * Bucket schema of every histogram on this connection: BUCKET_SCHEMA, or FINE_BUCKET_SCHEMA
   * (agent --schema 3). The dashboard draws either (schemaProblem says what it cannot draw).
   */
  readonly schema: BucketSchema;
  /**
   * Step of live and backfill frames in seconds: 1 from an agent; from protocol 6, a fleet server
   * whose hosts are scraped at over 1 s says the coarsest scrape interval (docs/fleet.md).
   */
  readonly step: number;
  /** The disks; empty when `disksFollow` (a long list comes in a `disks` message right after). */
  readonly disks: readonly DiskInfo[];
  /**
   * Added after 0.4.0 (optional, protocol 6): the disk list is over HELLO_INLINE_DISKS (a big
   * fleet: 4,000 disks are ~470 KiB of JSON), so this hello's `disks` is empty and the list is
   * the `disks` message that follows it at once. A browser reads a long message in pieces
   * between the page's own tasks: the hello, and what the page asks on it, would wait for the
   * list. A client that ignores this sees the list arrive as a change.
   */
  readonly disksFollow?: true;
  /** Agent clock, unix seconds; the newest complete frame is at most `now - step`. */
  readonly now: number;
  /** Oldest second history can answer for. */
  readonly historyFrom: number;
  /** History tiers' steps in seconds, finest first (e.g. [1, 10, 60]). */
  readonly tiers: readonly number[];
  /** The agent's status at connection time; `status` messages follow when it changes. Added in 3. */
  readonly status?: AgentStatus; /**
   * Present when the server is `blkheat fleet` (added in 3): the data comes from Prometheus'
   * native histograms of many agents, one disk entry per host × disk (DiskInfo.host, .link).
   */
  readonly fleet?: FleetInfo;
}

/** What a fleet view says about its source. Added in 3. */
export interface FleetInfo {
  /** The Prometheus base URL the fleet server queries. */
  readonly prometheus: string;
  /** Prometheus' scrape interval of the blkheat targets (s): the finest step the view has. */
  readonly scrapeInterval: number;
  /**
   * Added in 6 (after 0.4.0): where the fleet's data ends at the hello's `now`: the end of the
   * newest column of the hello's `step` every current host has been scraped past (unix s, a
   * multiple of `step`), dated by the agents' window ends as live columns are. A live view stands
   * there, big fleet (no live frames) or small. Absent until the server has read it (its first
   * seconds); a stream whose hello lacked it is then closed with 1012 (reconnect), so that the
   * next hello says it.
   */
  readonly liveTo?: number;
  /**
   * Added in 6 (after 0.4.0), with liveTo: how long after its end (s) the newest column was seen
   * complete when the edge last moved. The next column, `liveTo + step`, is complete about
   * `liveTo + step + liveLag` on the server's clock, and so on a column per step.
   */
  readonly liveLag?: number;
}

/** What the dashboard shows about the agent itself. Added in 3. */
export interface AgentStatus {
  /** Unix second this agent run started: it recorded nothing before (earlier runs may have). */
  readonly startedAt: number;
  /**
   * Present while history cannot be written: why (naming the file, e.g. "ENOSPC writing
   * /var/lib/blkheat/history/t1-….seg: …") and since when (unix seconds). Live frames keep
   * coming; the seconds not recorded read back as no data.
   */
  readonly historyFault?: { readonly message: string; readonly since: number };
  /**
   * Fleet view only (added in 3): present while the fleet has no data to show: Prometheus is
   * unreachable, fails, or has no blkheat series; why, and since when (unix seconds).
   */
  readonly fleetProblem?: { readonly message: string; readonly since: number };
}

/** The agent's status changed (a history fault began or ended). Added in 3. */
export interface StatusMessage {
  readonly t: 'status';
  readonly status: AgentStatus;
}

export interface FrameMessage {
  readonly t: 'frame';
  readonly frame: Frame;
}

/** Answer to subscribe.backfillFrom: every 1 s frame in [from, to), no gaps, no duplicates. */
export interface BackfillMessage {
  readonly t: 'backfill';
  readonly from: number;
  readonly to: number;
  readonly frames: readonly Frame[];
  /** More frames follow in another backfill message. */
  readonly more: boolean;
}

export interface RangeAnswer {
  readonly t: 'range';
  readonly id: RequestId;
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly frames: readonly Frame[];
  /**
   * Added in 7: the latency phases the frames carry, when they leave out one the request did not
   * name (a fleet server asked for `phases: ['device']` leaves out queue latency: its frames'
   * `q` are empty, not "no queue latency"). Absent: every phase the data has.
   */
  readonly phases?: readonly LatencyKind[];
}

export interface SamplesAnswer {
  readonly t: 'samples';
  readonly id: RequestId;
  readonly samples: readonly IoSample[];
  /** More samples matched than were sent (limit reached). */
  readonly truncated: boolean;
  /**
   * The request's `pick`, said back (added in 4, with it): an answer without it is the oldest
   * matches (an agent that does not know `pick`).
   */
  readonly pick?: SamplePick;
  /** With `pick: 'spread'` (added in 4): how many samples matched in all. */
  readonly matched?: number;
  /** Which samples the agent keeps for the seconds asked (added in 5): why an answer can be empty. */
  readonly kept?: SamplesKept;
}

/**
 * Which samples an agent keeps for the seconds of a samples request (added in 5). Every I/O the
 * kernel sampled (at most `budget` a second, the slowest first) while `step` is 1; older seconds
 * keep about one in `step` of those (at most budget / step a second, the kernel's outliers first).
 */
export interface SamplesKept {
  /** 1: every sample taken; 10 or 60: thinned with age, as the history's tiers. */
  readonly step: number;
  /** The oldest second samples are kept for at this step (null: none kept yet). */
  readonly since: number | null;
  /** Samples the kernel takes a second (--samples-budget); 0: none are taken. */
  readonly budget: number;
}

export interface DisksMessage {
  readonly t: 'disks';
  readonly disks: readonly DiskInfo[];
}

/** The client did not read fast enough; `skipped` live frames were not sent. Backfill from `resumeFrom`. */
export interface LaggingMessage {
  readonly t: 'lagging';
  readonly skipped: number;
  readonly resumeFrom: number;
}

export interface ErrorMessage {
  readonly t: 'error';
  readonly id?: RequestId;
  readonly message: string;
  /** The offending field, when the error is about one. */
  readonly field?: string;
}

export type ServerMessage =
  | HelloMessage
  | FrameMessage
  | BackfillMessage
  | RangeAnswer
  | SamplesAnswer
  | DisksMessage
  | LaggingMessage
  | ErrorMessage
  | StatusMessage;

/**
 * What greets a client: the hello, with its disk list, or over HELLO_INLINE_DISKS disks the
 * hello without them (`disksFollow`) and the list in a `disks` message right after.
 */
export function greeting(hello: HelloMessage): readonly [HelloMessage] | readonly [HelloMessage, DisksMessage] {
  if (hello.disks.length <= HELLO_INLINE_DISKS) return [hello];
  return [
    { ...hello, disks: [], disksFollow: true },
    { t: 'disks', disks: hello.disks },
  ];
}

// ---- client -> agent ----

export type RequestId = number | string;

/** Choose what live frames carry; optionally backfill from a second onwards. */
export interface SubscribeRequest {
  readonly t: 'subscribe';
  /** Disks ("MAJ:MIN") to receive; absent = all. */
  readonly disks?: readonly string[];
  /** Classes to receive; absent = all. */
  readonly classes?: readonly string[];
  /** Send every 1 s frame from this unix second up to live first. */
  readonly backfillFrom?: number;
}

/** History for [from, to) at `step` seconds (the agent may answer with a coarser step). */
export interface RangeRequest {
  readonly t: 'range';
  readonly id: RequestId;
  readonly from: number;
  readonly to: number;
  readonly step?: number;
  readonly disks?: readonly string[];
  readonly classes?: readonly string[];
  /**
   * Added in 7: the latency phases the answer's frames must carry; a server may carry more.
   * Absent: every phase. An agent always sends every phase (a phase switch on its page stays
   * instant); a fleet server leaves queue latency out when it is not named, and says so
   * (RangeAnswer.phases).
   */
  readonly phases?: readonly LatencyKind[];
}

/**
 * Sampled I/Os completed in [from, to) with latency of `kind` (default 'device'; 'submit' and
 * 'total' added in 4, as samplePhaseNs reads them) in [minNs, maxNs].
 */
export interface SamplesRequest {
  readonly t: 'samples';
  readonly id: RequestId;
  readonly from: number;
  readonly to: number;
  readonly kind?: LatencyKind;
  readonly minNs?: number;
  readonly maxNs?: number;
  readonly disks?: readonly string[];
  readonly classes?: readonly string[];
  readonly limit?: number;
  /**
   * Added in 4: which matches an answer carries when more than `limit` match: 'first' (the
   * default) the oldest; 'spread' some of the slowest and the rest spread evenly over [from, to)
   * (sample-spread.ts says exactly which). An agent before it refuses the field.
   */
  readonly pick?: SamplePick;
  /** Added in 5: only samples charged to one of these cgroups (`IoSample.cg` paths). */
  readonly cgroups?: readonly string[];
  /** Added in 5: only samples of these I/O size classes (size-class.ts: the smallest s with bytes <= 2^s). */
  readonly sizeClasses?: readonly number[];
}

export type ClientMessage = SubscribeRequest | RangeRequest | SamplesRequest;

/** Close codes the agent uses besides the standard ones. */
export const CLOSE_CODES = Object.freeze({
  shuttingDown: 1001,
  policyViolation: 1008,
  tooBig: 1009,
  /** Added in 6: a fleet server's live step changed; reconnect for a hello that names the new one. */
  restart: 1012,
});

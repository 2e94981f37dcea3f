/**
 * Sampled I/Os on disk, kept as long as the frame history keeps their seconds (docs/protocol.md,
 * "History and samples"). The same three tiers as the frames, in segment files beside theirs
 * (`s1-…`, `s10-…`, `s60-…` in the history directory), with a byte budget of their own:
 *
 * - 1 s: every sample the kernel took, for the last hour;
 * - 10 s and 60 s: for all of --history, thinned as the frames are coarsened: of each second at
 *   most budget / step samples, the kernel's outliers (the slowest of their second) first, then
 *   one in `step` of the rest, chosen by spreadHash so the choice does not depend on who asks.
 *
 * One record per tier per second (sample-record.ts), written when that second's frame is.
 * Nothing here can stop a frame being recorded or sent: the agent calls it behind a guard, and
 * a write that fails is counted, logged and dropped.
 */
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import {
  alignDown,
  BUCKET_SCHEMA,
  type BucketSchema,
  type IoSample,
  samplePhaseNs,
  type SamplePhases,
  sizeClassOf,
  spreadHash,
  SpreadPicker,
} from '@blkheat/shared-types';
import { HistoryIoError, IncompatibleSegmentError, Segment, TornSegmentError } from './segment.js';
import { SampleRecordError, SampleRecordReader, encodeSampleRecord } from './sample-record.js';
import type { SampleAnswer, SampleQuery } from './samples.js';
import { SEGMENT_SPANS, tierSpecs } from './store.js';
import { SampleTier, thinned } from './sample-tier.js';

export const SAMPLE_FILE_RE = /^s(\d+)-(\d+)\.seg$/;

export function sampleFileName(step: number, start: number): string {
  return `s${step}-${start}.seg`;
}

/**
 * Cursors (`after`, `next`) into the archive are ARCHIVE_CURSOR_BASE + second × ROWS_PER_RECORD +
 * row: above any the in-memory ring gives out, so a paged query keeps its source. Exact below 2^53
 * for every second before 2106.
 */
export const ARCHIVE_CURSOR_BASE = 2 ** 52;
/** Rows one record may hold: above MAX_SAMPLE_BUDGET, so a second's samples always fit. */
const ROWS_PER_RECORD = 2 ** 20;
/** How often (in recorded seconds) retention and the byte budget are enforced. */
const PRUNE_EVERY = 60;
/** While writes keep failing, the failure is logged again at most this often (seconds). */
const FAULT_LOG_EVERY_S = 60;

export interface SampleArchiveOptions {
  /** The history directory (shared with the frames' segments). */
  readonly dir: string;
  readonly historySeconds: number;
  /** Most bytes the sample segments may take together; the oldest segment of the largest tier goes first. */
  readonly maxBytes: number;
  /** The kernel's samples per second (--samples-budget): the coarse tiers keep budget / step a second. */
  readonly budgetPerSecond: number;
  readonly now?: () => number;
  readonly schema?: BucketSchema;
  readonly segmentSpans?: readonly [number, number, number];
  readonly log?: (line: string) => void;
}

/** Which samples a tier holds: every one the kernel took (step 1), or about one in `step`, since `since`. */
export interface SamplesKept {
  readonly step: number;
  /** Oldest second with samples held (null: none yet). */
  readonly since: number | null;
}

export interface ArchiveAnswer extends SampleAnswer {
  readonly kept: SamplesKept;
}

export class SampleArchive {
  private readonly tiers: SampleTier[];
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly schema: BucketSchema;
  private pending: IoSample[] = [];
  private written = 0;
  private closed = false;
  private writeErrors = 0;
  private faultLoggedAt = Number.NEGATIVE_INFINITY;
  private badRecordsLogged = false;

  private constructor(private readonly options: SampleArchiveOptions) {
    this.tiers = tierSpecs(options.historySeconds, options.segmentSpans ?? SEGMENT_SPANS).map((s) => new SampleTier(s));
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.log = options.log ?? (() => {});
    this.schema = options.schema ?? BUCKET_SCHEMA;
    if (!Number.isInteger(options.budgetPerSecond) || options.budgetPerSecond < 1) {
      throw new RangeError(`sample budget ${options.budgetPerSecond} is not a positive integer`);
    }
  }

  /** Opens the sample segments in `dir` (made by HistoryStore.open, which also removed interrupted creations). */
  static open(options: SampleArchiveOptions): SampleArchive {
    const archive = new SampleArchive(options);
    const byStep = new Map(archive.tiers.map((t) => [t.step, t]));
    for (const name of readdirSync(options.dir).sort()) {
      const m = SAMPLE_FILE_RE.exec(name);
      if (!m) continue;
      const tier = byStep.get(Number(m[1]));
      const path = join(options.dir, name);
      try {
        const { segment, recovery } = Segment.open(path, archive.schema);
        if (!tier || segment.header.step !== tier.step || segment.header.span !== tier.spec.span || segment.start !== Number(m[2])) {
          segment.close();
          archive.log(`samples: ignoring ${name} (its header says step ${segment.header.step}, span ${segment.header.span})`);
          continue;
        }
        if (recovery.truncatedBytes > 0) archive.log(`samples: ${name}: dropped a torn tail of ${recovery.truncatedBytes} bytes`);
        tier.segments.push(segment);
      } catch (e) {
        if (e instanceof TornSegmentError) {
          archive.log(`samples: removing ${e.message}`);
          unlinkSync(path);
        } else if (e instanceof IncompatibleSegmentError) archive.log(`samples: ignoring ${e.message}`);
        else throw e;
      }
    }
    const openedAt = archive.now();
    for (const t of archive.tiers) {
      t.segments.sort((a, b) => a.start - b.start);
      t.since = Math.min(t.firstTs ?? openedAt, openedAt);
    }
    archive.enforceBounds();
    return archive;
  }

  /** Takes samples the collector released; they are written with their second's frame (record). */
  add(samples: readonly IoSample[]): void {
    if (this.closed) return;
    for (const s of samples) this.pending.push(s);
    // Bounded whatever happens to the frames: more than a second's worst case is not waited for.
    if (this.pending.length > ROWS_PER_RECORD) this.pending.splice(0, this.pending.length - ROWS_PER_RECORD);
  }

  /** Writes the samples taken so far as second `ts`'s record in every tier (thinned in the coarse ones). */
  record(ts: number): void {
    const samples = this.pending;
    this.pending = [];
    if (this.closed || samples.length === 0) return;
    for (const tier of this.tiers) {
      const rows = tier.step === 1 ? samples : thinned(samples, tier.step, this.options.budgetPerSecond);
      if (rows.length > 0) this.write(tier, ts, rows);
    }
    if (++this.written % PRUNE_EVERY === 0) {
      try {
        this.enforceBounds();
      } catch (e) {
        this.noteFailure(e);
      }
    }
  }

  /** The newest second recorded in any tier (undefined: none). */
  get newestRecorded(): number | undefined {
    let newest: number | undefined;
    for (const t of this.tiers) {
      const ts = t.lastTs;
      if (ts !== undefined && (newest === undefined || ts > newest)) newest = ts;
    }
    return newest;
  }

  /** Which samples the tier answering for `from` holds. */
  keptFor(from: number): SamplesKept {
    return keptBy(this.tierFor(from));
  }

  /** Samples held on disk with the same meaning as SampleStore.query (cursors at ARCHIVE_CURSOR_BASE and up). */
  query(q: SampleQuery): ArchiveAnswer {
    const tier = this.tierFor(q.from);
    const kept = keptBy(tier);
    const match = matcher(q);
    if (q.pick === 'spread') {
      const picker = new SpreadPicker(q.from * 1e6, q.to * 1e6, q.limit);
      let k = 0;
      for (const { reader } of this.records(tier, q.from - 1, q.to + 1)) {
        for (let i = 0; i < reader.count; i++) {
          const v = match(reader, i);
          if (v !== null) picker.count(reader.tsUs(i), v, k++);
        }
      }
      picker.plan();
      k = 0;
      for (const { reader } of this.records(tier, q.from - 1, q.to + 1)) {
        for (let i = 0; i < reader.count; i++) {
          if (match(reader, i) === null) continue;
          picker.offer(reader.tsUs(i), spreadHash(reader.tsUs(i), reader.sectorOf(i), reader.dNs(i)), k++);
        }
      }
      const r = picker.result();
      const samples: IoSample[] = [];
      let next = 0;
      k = 0;
      for (const { reader } of this.records(tier, q.from - 1, q.to + 1)) {
        for (let i = 0; i < reader.count && next < r.at.length; i++) {
          if (match(reader, i) === null) continue;
          if (r.at[next] === k++) {
            samples.push(reader.sample(i));
            next++;
          }
        }
      }
      return { samples, truncated: r.truncated, next: ARCHIVE_CURSOR_BASE, matched: r.matched, kept };
    }
    const [afterTs, afterRow] = q.after !== undefined && q.after >= ARCHIVE_CURSOR_BASE ? splitCursor(q.after) : [0, 0];
    const samples: IoSample[] = [];
    // Records are frames' seconds; a sample's completion is within a second of its record's.
    const firstRecord = Math.max(q.from - 1, afterTs);
    let next = cursorOf(firstRecord, 0);
    for (const { ts, reader } of this.records(tier, firstRecord, q.to + 1)) {
      for (let i = ts === afterTs ? afterRow : 0; i < reader.count; i++) {
        if (match(reader, i) === null) continue;
        if (samples.length >= q.limit) return { samples, truncated: true, next: cursorOf(ts, i), kept };
        samples.push(reader.sample(i));
      }
      next = cursorOf(ts + 1, 0);
    }
    return { samples, truncated: false, next, kept };
  }

  stats(): { bytes: number; tiers: { step: number; bytes: number; from?: number }[]; writeErrors: number } {
    return {
      bytes: this.tiers.reduce((n, t) => n + t.bytes, 0),
      tiers: this.tiers.map((t) => ({ step: t.step, bytes: t.bytes, ...(t.since !== undefined ? { from: t.since } : {}) })),
      writeErrors: this.writeErrors,
    };
  }

  /** Deletes segments past their tier's retention, then the oldest of the largest tier until under the byte budget. */
  enforceBounds(): void {
    const now = this.now();
    for (const t of this.tiers) {
      while (t.segments.length > 1 && (t.segments[0] as Segment).end <= now - t.spec.retention) t.dropOldest();
    }
    let total = this.tiers.reduce((n, t) => n + t.bytes, 0);
    while (total > this.options.maxBytes) {
      const largest = this.largestDroppable();
      if (!largest) break;
      total -= largest.dropOldest();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.tiers)
      for (const s of t.segments) {
        try {
          s.close();
        } catch (e) {
          this.log(`samples: closing: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
  }

  /**
   * The tier that answers a query from `from`: the finest one holding that second, else (the
   * second is older than any tier holds) the one reaching furthest back.
   */
  private tierFor(from: number): SampleTier {
    let furthest = this.tiers[0] as SampleTier;
    for (const t of this.tiers) {
      const since = t.since;
      if (since !== undefined && since <= from) return t;
      if (since !== undefined && since < (furthest.since ?? Number.POSITIVE_INFINITY)) furthest = t;
    }
    return furthest;
  }

  /** The readable records of `tier` of seconds [from, to), in time order. */
  private *records(tier: SampleTier, from: number, to: number): Generator<{ ts: number; reader: SampleRecordReader }> {
    for (const seg of [...tier.segments]) {
      if (seg.end <= from || seg.start >= to) continue;
      for (const rec of seg.iterate(from, to)) {
        let reader: SampleRecordReader;
        try {
          reader = new SampleRecordReader(rec.payload);
        } catch (e) {
          if (!(e instanceof SampleRecordError)) throw e;
          if (!this.badRecordsLogged) this.log(`samples: skipping an unreadable record of second ${rec.ts}: ${e.message}`);
          this.badRecordsLogged = true;
          continue;
        }
        yield { ts: rec.ts, reader };
      }
    }
  }

  private write(tier: SampleTier, ts: number, rows: readonly IoSample[]): void {
    const { payload, dropped } = encodeSampleRecord(rows.length < ROWS_PER_RECORD ? rows : rows.slice(0, ROWS_PER_RECORD - 1));
    if (dropped > 0) this.log(`samples: second ${ts}: ${dropped} samples not kept (over 65,535 distinct names)`);
    for (let attempt = 0; ; attempt++) {
      try {
        let seg = tier.segments[tier.segments.length - 1];
        const last = tier.lastTs;
        if (last !== undefined && ts <= last) return; // a second already written (a clock step back): never twice
        if (!seg || ts >= seg.end) {
          const start = alignDown(ts, tier.spec.span);
          seg = Segment.create(join(this.options.dir, sampleFileName(tier.step, start)), tier.step, start, tier.spec.span, this.schema);
          tier.segments.push(seg);
        }
        seg.append(ts, payload);
        return;
      } catch (e) {
        // A full disk: the oldest samples make room for the newest, once per record.
        if (attempt === 0 && e instanceof HistoryIoError && e.noSpace && this.largestDroppable()?.dropOldest()) continue;
        this.noteFailure(e);
        return;
      }
    }
  }

  private largestDroppable(): SampleTier | undefined {
    return [...this.tiers].sort((a, b) => b.bytes - a.bytes).find((t) => t.segments.length > 1);
  }

  private noteFailure(e: unknown): void {
    this.writeErrors++;
    const now = this.now();
    if (now - this.faultLoggedAt < FAULT_LOG_EVERY_S) return;
    this.faultLoggedAt = now;
    this.log(
      `samples: cannot write (${this.writeErrors} failed writes so far; drill-down of these seconds will have no samples): ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/** The query's test of a row: the row's latency of the query's phase when it matches, else null (as SampleStore's). */
function matcher(q: SampleQuery): (r: SampleRecordReader, i: number) => number | null {
  const fromUs = q.from * 1e6;
  const toUs = q.to * 1e6;
  const minNs = q.minNs ?? 0;
  const maxNs = q.maxNs ?? Number.MAX_SAFE_INTEGER;
  const phase = q.kind ?? 'device';
  const phases: { -readonly [K in keyof SamplePhases]: SamplePhases[K] } = { q_ns: null, d_ns: 0 };
  const devs = q.disks ? new Set(q.disks) : undefined;
  const classes = q.classes ? new Set(q.classes) : undefined;
  const cgroups = q.cgroups ? new Set(q.cgroups) : undefined;
  const sizes = q.sizeClasses ? new Set(q.sizeClasses) : undefined;
  return (r, i) => {
    const ts = r.tsUs(i);
    if (ts < fromUs || ts >= toUs) return null;
    if (devs && !devs.has(r.dev(i))) return null;
    if (classes && !classes.has(r.opClass(i))) return null;
    if (cgroups && !cgroups.has(r.cgPath(i) ?? '')) return null;
    if (sizes && !sizes.has(sizeClassOf(r.bytes(i)))) return null;
    r.phasesInto(i, phases);
    const v = samplePhaseNs(phases, phase);
    return v === null || v < minNs || v > maxNs ? null : v;
  };
}

function keptBy(tier: SampleTier): SamplesKept {
  return { step: tier.step, since: tier.since ?? null };
}

function cursorOf(ts: number, row: number): number {
  return ARCHIVE_CURSOR_BASE + Math.max(0, ts) * ROWS_PER_RECORD + row;
}

function splitCursor(cursor: number): [number, number] {
  const rest = cursor - ARCHIVE_CURSOR_BASE;
  const ts = Math.floor(rest / ROWS_PER_RECORD);
  return [ts, rest - ts * ROWS_PER_RECORD];
}

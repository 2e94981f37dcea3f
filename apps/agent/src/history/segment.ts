/**
 * (Over 400 lines: the file format, its writer and its record-by-record recovering reader belong together.)
 * One history segment file: an append-only log of frames of one tier covering the aligned
 * time span [start, start + span). Layout (all integers little-endian):
 *
 *   magic      8 bytes  "BLKHIST1"
 *   record*    header 12 bytes: u32 payload length, u32 CRC-32 of (ts bytes + payload), u32 ts
 *              payload: the frame as UTF-8 JSON
 *
 * The first record (ts 0) is the segment header, JSON {format, version, step, start, span,
 * schema}. Each frame record is written with one write() at the end of the file, so a crash
 * (kill -9, power loss) can only leave a torn *tail*: on open, records are checked in order
 * (length within the file and sane, CRC, ts inside the span and strictly increasing) and the
 * file is truncated at the first bad one. Everything before it is kept.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { BUCKET_SCHEMA, sameSchema, type BucketSchema } from '@blkheat/shared-types';

export const SEGMENT_MAGIC = Buffer.from('BLKHIST1', 'latin1');
export const RECORD_HEADER_BYTES = 12;
/** A record longer than this is taken as a corrupt length field, not as data. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;
export const SEGMENT_FORMAT = 'blkheat-history-segment';
export const SEGMENT_VERSION = 1;

export interface SegmentHeader {
  readonly format: typeof SEGMENT_FORMAT;
  readonly version: number;
  readonly step: number;
  readonly start: number;
  readonly span: number;
  readonly schema: BucketSchema;
}

/** What opening an existing file found. */
export interface RecoveryReport {
  readonly path: string;
  /** Bytes cut off the end (0 when the file was intact). */
  readonly truncatedBytes: number;
  /** Why the tail was cut. */
  readonly reason?: string;
}

export class IncompatibleSegmentError extends Error {}

/** A file of ours whose creation was cut short (empty, or its header torn): nothing in it to keep. */
export class TornSegmentError extends IncompatibleSegmentError {}

/** A segment of this format holding histograms of another bucket schema (another --schema). */
export class SchemaMismatchError extends IncompatibleSegmentError {
  constructor(
    message: string,
    readonly found: BucketSchema,
  ) {
    super(message);
  }
}

/** A failed file operation of the history, naming the file; `code` is the errno name (ENOSPC, EACCES, …). */
export class HistoryIoError extends Error {
  constructor(
    readonly code: string,
    readonly path: string,
    operation: string,
    cause: unknown,
  ) {
    super(`${code} ${operation} ${path}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }

  /** Out of space (the filesystem, or the user's quota): making room can cure it. */
  get noSpace(): boolean {
    return this.code === 'ENOSPC' || this.code === 'EDQUOT';
  }
}

/** Runs a file operation, turning its error into a HistoryIoError that names the file. */
function fileOp<T>(operation: string, path: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof HistoryIoError) throw e;
    throw new HistoryIoError((e as NodeJS.ErrnoException).code ?? 'EIO', path, operation, e);
  }
}

function encodeRecord(ts: number, payload: Buffer): Buffer {
  const rec = Buffer.allocUnsafe(RECORD_HEADER_BYTES + payload.length);
  rec.writeUInt32LE(payload.length, 0);
  rec.writeUInt32LE(ts >>> 0, 8);
  payload.copy(rec, RECORD_HEADER_BYTES);
  rec.writeUInt32LE(crc32(rec.subarray(8)), 4);
  return rec;
}

export class Segment {
  /** Record start times, offsets (of the record header) and payload lengths, in file order. */
  private readonly tsList: number[] = [];
  private readonly offList: number[] = [];
  private readonly lenList: number[] = [];
  private size: number;
  private fd: number | undefined;
  /** Appended to since opened: fsync'ed on close. */
  private dirty = false;

  private constructor(
    readonly path: string,
    readonly header: SegmentHeader,
    fd: number,
    size: number,
  ) {
    this.fd = fd;
    this.size = size;
  }

  /**
   * Creates a new, empty segment file. The header is written to a temporary file that is then
   * renamed into place, so a failed or interrupted creation (disk full, kill -9) never leaves a
   * headerless file at `path`: whatever is there (such a leftover from an older version) is
   * replaced. A failure removes the temporary file and names the file.
   */
  static create(path: string, step: number, start: number, span: number, schema: BucketSchema = BUCKET_SCHEMA): Segment {
    const header: SegmentHeader = { format: SEGMENT_FORMAT, version: SEGMENT_VERSION, step, start, span, schema };
    const head = Buffer.concat([SEGMENT_MAGIC, encodeRecord(0, Buffer.from(JSON.stringify(header)))]);
    const tmp = `${path}.new`;
    const fd = fileOp('creating', tmp, () => openSync(tmp, 'w+', 0o600));
    try {
      fileOp('writing the header of', tmp, () => writeAll(fd, head, 0));
      fileOp('renaming into place', path, () => renameSync(tmp, path));
    } catch (e) {
      closeSync(fd);
      try {
        unlinkSync(tmp);
      } catch {
        // Never created, or already renamed.
      }
      throw e;
    }
    return new Segment(path, header, fd, head.length);
  }

  /**
   * Opens an existing segment, recovering a torn tail by truncation. Throws
   * IncompatibleSegmentError for a file that is not a segment of this format, and
   * SchemaMismatchError for one of another bucket schema (either is left untouched: it may be
   * another version's data).
   */
  static open(path: string, schema: BucketSchema = BUCKET_SCHEMA): { segment: Segment; recovery: RecoveryReport } {
    const fd = openSync(path, 'r+');
    try {
      const fileSize = fstatSync(fd).size;
      // Record by record through one reusable buffer: opening a large history does not need
      // memory in proportion to its files.
      const reader = new RecordReader(fd, fileSize);
      if (fileSize === 0) throw new TornSegmentError(`${path}: empty (its creation was cut short)`);
      const magic = reader.bytes(0, SEGMENT_MAGIC.length);
      if (!magic || !magic.equals(SEGMENT_MAGIC)) {
        if (!magic && SEGMENT_MAGIC.subarray(0, fileSize).equals(reader.bytes(0, fileSize) ?? Buffer.alloc(0)))
          throw new TornSegmentError(`${path}: torn magic (its creation was cut short)`);
        throw new IncompatibleSegmentError(`${path}: not a blkheat history segment (bad magic)`);
      }
      const first = reader.record(SEGMENT_MAGIC.length);
      if (typeof first === 'string') throw new TornSegmentError(`${path}: torn segment header (${first})`);
      const header = parseHeader(first.payload);
      if (!header) throw new IncompatibleSegmentError(`${path}: segment header of another format version`);
      if (!sameSchema(header.schema, schema)) {
        throw new SchemaMismatchError(
          `${path}: histograms of bucket schema scale ${header.schema.scale}, not ${schema.scale}`,
          header.schema,
        );
      }

      const segment = new Segment(path, header, fd, first.end);
      let pos = first.end;
      let reason: string | undefined;
      let prevTs = -1;
      while (pos < fileSize) {
        const rec = reader.record(pos);
        if (typeof rec === 'string') {
          reason = rec;
          break;
        }
        if (rec.ts < header.start || rec.ts >= header.start + header.span) {
          reason = `record ts ${rec.ts} outside the segment's span`;
          break;
        }
        if (rec.ts <= prevTs) {
          reason = `record ts ${rec.ts} not after ${prevTs}`;
          break;
        }
        segment.index(rec.ts, pos, rec.payload.length);
        prevTs = rec.ts;
        pos = rec.end;
      }
      segment.size = pos;
      const truncatedBytes = fileSize - pos;
      if (truncatedBytes > 0) ftruncateSync(fd, pos);
      return { segment, recovery: { path, truncatedBytes, ...(reason ? { reason } : {}) } };
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  get bytes(): number {
    return this.size;
  }

  get count(): number {
    return this.tsList.length;
  }

  get firstTs(): number | undefined {
    return this.tsList[0];
  }

  get lastTs(): number | undefined {
    return this.tsList[this.tsList.length - 1];
  }

  get start(): number {
    return this.header.start;
  }

  get end(): number {
    return this.header.start + this.header.span;
  }

  /** Appends one record; ts must be inside the span and after the last record. */
  append(ts: number, payload: Buffer): void {
    const fd = this.requireFd();
    if (ts < this.start || ts >= this.end) throw new RangeError(`ts ${ts} outside segment [${this.start}, ${this.end})`);
    const last = this.lastTs;
    if (last !== undefined && ts <= last) throw new RangeError(`ts ${ts} not after the last record (${last})`);
    const rec = encodeRecord(ts, payload);
    // One positional write per record: a crash can only tear this record, never an earlier one.
    try {
      fileOp('writing', this.path, () => writeAll(fd, rec, this.size));
    } catch (e) {
      // A partly written record (disk full mid-write) is cut off at once, so the file ends
      // with whole records; the next append writes at the same offset anyway.
      try {
        ftruncateSync(fd, this.size);
      } catch {
        // Nothing more to do: the next open cuts a torn tail.
      }
      throw e;
    }
    this.index(ts, this.size, payload.length);
    this.size += rec.length;
    this.dirty = true;
  }

  /**
   * Payloads of the records with from <= ts < to, in time order. Records are read in runs of
   * about `chunkBytes` (at least one record per read), so a long range never needs memory in
   * proportion to its size, and a consumer that stops early reads no further. 256 KiB: few
   * reads per answer, and a hundred answers paused on clients that do not read hold little.
   */
  *iterate(from: number, to: number, chunkBytes = 256 * 1024): Generator<{ ts: number; payload: Buffer }> {
    const i0 = lowerBound(this.tsList, from);
    const i1 = lowerBound(this.tsList, to);
    let i = i0;
    while (i < i1) {
      const startOff = this.offList[i] as number;
      let j = i + 1;
      while (j < i1 && (this.offList[j] as number) - startOff < chunkBytes) j++;
      const endOff = j < this.offList.length ? (this.offList[j] as number) : this.size;
      const buf = Buffer.allocUnsafe(endOff - startOff);
      let got = 0;
      while (got < buf.length) {
        const n = readSync(this.requireFd(), buf, got, buf.length - got, startOff + got);
        if (n === 0) throw new Error(`${this.path}: file shorter than its index`);
        got += n;
      }
      for (let k = i; k < j; k++) {
        const at = (this.offList[k] as number) - startOff + RECORD_HEADER_BYTES;
        yield { ts: this.tsList[k] as number, payload: buf.subarray(at, at + (this.lenList[k] as number)) };
      }
      i = j;
    }
  }

  /** All of iterate() at once. */
  read(from: number, to: number): { ts: number; payload: Buffer }[] {
    return [...this.iterate(from, to)];
  }

  /**
   * Closes the file, fsync'ing it first if it was written: a clean shutdown leaves nothing to
   * recover even after a power loss. (While running, records reach the page cache only,
   * which survives the process being killed; a power loss can tear the newest records, which
   * the next open cuts off.)
   */
  close(): void {
    if (this.fd !== undefined) {
      const fd = this.fd;
      this.fd = undefined;
      try {
        if (this.dirty) fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  }

  /** Closes and deletes the file. */
  remove(): void {
    this.dirty = false;
    this.close();
    fileOp('deleting', this.path, () => unlinkSync(this.path));
  }

  private index(ts: number, offset: number, length: number): void {
    this.tsList.push(ts);
    this.offList.push(offset);
    this.lenList.push(length);
  }

  private requireFd(): number {
    if (this.fd === undefined) throw new Error(`${this.path}: segment is closed`);
    return this.fd;
  }
}

/** Writes all of `buf` at `pos` (positional writes may be short). */
function writeAll(fd: number, buf: Buffer, pos: number): void {
  let done = 0;
  while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done, pos + done);
}

/** First index whose value is >= x (values ascending). */
export function lowerBound(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface RecordAt {
  readonly ts: number;
  /** Valid until the next read through the same reader. */
  readonly payload: Buffer;
  readonly end: number;
}

/** Positional reads of a segment file through one growing buffer. */
class RecordReader {
  private buf = Buffer.allocUnsafe(64 * 1024);

  constructor(
    private readonly fd: number,
    private readonly size: number,
  ) {}

  /** `length` bytes at `pos`, or undefined past the end of the file. */
  bytes(pos: number, length: number): Buffer | undefined {
    if (pos + length > this.size) return undefined;
    if (length > this.buf.length) this.buf = Buffer.allocUnsafe(Math.max(length, this.buf.length * 2));
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, this.buf, got, length - got, pos + got);
      if (n === 0) return undefined;
      got += n;
    }
    return this.buf.subarray(0, length);
  }

  /** The record at `pos`, or why it cannot be trusted. */
  record(pos: number): RecordAt | string {
    const head = this.bytes(pos, RECORD_HEADER_BYTES);
    if (!head) return `incomplete record header at byte ${pos}`;
    const len = head.readUInt32LE(0);
    const crc = head.readUInt32LE(4);
    const ts = head.readUInt32LE(8);
    if (len > MAX_RECORD_BYTES) return `implausible record length ${len} at byte ${pos}`;
    const end = pos + RECORD_HEADER_BYTES + len;
    if (end > this.size) return `record at byte ${pos} runs past the end of the file`;
    // CRC over ts + payload: read them together.
    const body = this.bytes(pos + 8, 4 + len);
    if (!body) return `record at byte ${pos} runs past the end of the file`;
    if (crc32(body) !== crc) return `checksum mismatch in record at byte ${pos}`;
    return { ts, payload: body.subarray(4), end };
  }
}

function parseHeader(payload: Buffer): SegmentHeader | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const h = raw as Partial<SegmentHeader>;
  if (h.format !== SEGMENT_FORMAT || h.version !== SEGMENT_VERSION) return undefined;
  if (!Number.isInteger(h.step) || !Number.isInteger(h.start) || !Number.isInteger(h.span)) return undefined;
  const sc = h.schema as Partial<BucketSchema> | undefined;
  if (!sc || typeof sc !== 'object' || !Number.isInteger(sc.scale) || !Number.isInteger(sc.minIndex) || !Number.isInteger(sc.maxIndex))
    return undefined;
  return h as SegmentHeader;
}

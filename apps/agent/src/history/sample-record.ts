/**
 * One second's sampled I/Os as a binary record of a sample segment (docs/protocol.md, "History
 * and samples"): a table of the strings they name (disks, classes, comms, cgroup paths), then
 * one fixed-size row per sample. About 70 bytes a sample, a third of its JSON: at the default
 * budget (2,000 a second) an hour of samples is about half a gigabyte rather than 1.4 GB.
 *
 *   u8  format version (1)
 *   u16 string count, then each: u16 byte length, UTF-8 bytes
 *   u32 sample count, then each row (ROW_BYTES, little-endian):
 *       f64 ts_us, f64 sector (NaN: null), f64 bytes, f64 q_ns (NaN: null), f64 d_ns,
 *       f64 w_ns (-1: absent, NaN: null), f64 cgroup, u32 pid,
 *       u16 dev, u16 class, u16 comm, u16 cg path (0xffff: none), u8 outlier
 *
 * Every length is checked on decode: a record is CRC-checked by its segment, but a record of
 * another version, or one cut by a bug, must be refused rather than read past its end.
 */
import type { IoSample } from '@blkheat/shared-types';

export const SAMPLE_RECORD_VERSION = 1;
/** Where a row's string references start: after seven f64 and the u32 pid. */
const REF_AT = 7 * 8 + 4;
const ROW_BYTES = REF_AT + 4 * 2 + 1;
const NO_STRING = 0xffff;
/** Strings one record may name (indices are u16, one value is "none"). */
const MAX_STRINGS = NO_STRING;
/** w_ns absent (a bio-based disk, an agent before protocol 4); null is NaN. */
const ABSENT = -1;

/** A record that cannot be read: another version, or lengths that do not add up. */
export class SampleRecordError extends Error {}

/**
 * Encodes samples as one record. Samples whose strings would not fit the table (over 65,535
 * distinct values in one second) are left out and counted in `dropped`.
 */
export function encodeSampleRecord(samples: readonly IoSample[]): { payload: Buffer; kept: number; dropped: number } {
  const ids = new Map<string, number>();
  const strings: Buffer[] = [];
  let stringBytes = 0;
  const intern = (s: string): number | undefined => {
    let id = ids.get(s);
    if (id !== undefined) return id;
    if (strings.length >= MAX_STRINGS) return undefined;
    let buf = Buffer.from(s, 'utf8');
    // A string longer than a u16 length is cut (never seen: names are short); on a character boundary.
    if (buf.length > 0xffff) buf = buf.subarray(0, utf8Boundary(buf, 0xffff));
    id = strings.length;
    strings.push(buf);
    stringBytes += 2 + buf.length;
    ids.set(s, id);
    return id;
  };
  const rows: [IoSample, number, number, number, number][] = [];
  let dropped = 0;
  for (const s of samples) {
    const dev = intern(s.dev);
    const cls = intern(s.c);
    const comm = intern(s.comm);
    const cg = s.cg === undefined ? NO_STRING : intern(s.cg);
    if (dev === undefined || cls === undefined || comm === undefined || cg === undefined) {
      dropped++;
      continue;
    }
    rows.push([s, dev, cls, comm, cg]);
  }
  const buf = Buffer.allocUnsafe(1 + 2 + stringBytes + 4 + rows.length * ROW_BYTES);
  let at = buf.writeUInt8(SAMPLE_RECORD_VERSION, 0);
  at = buf.writeUInt16LE(strings.length, at);
  for (const s of strings) {
    at = buf.writeUInt16LE(s.length, at);
    at += s.copy(buf, at);
  }
  at = buf.writeUInt32LE(rows.length, at);
  for (const [s, dev, cls, comm, cg] of rows) {
    at = buf.writeDoubleLE(s.ts_us, at);
    at = buf.writeDoubleLE(s.sector ?? NaN, at);
    at = buf.writeDoubleLE(s.bytes, at);
    at = buf.writeDoubleLE(s.q_ns ?? NaN, at);
    at = buf.writeDoubleLE(s.d_ns, at);
    at = buf.writeDoubleLE(s.w_ns === undefined ? ABSENT : (s.w_ns ?? NaN), at);
    at = buf.writeDoubleLE(s.cgroup, at);
    at = buf.writeUInt32LE(s.pid >>> 0, at);
    at = buf.writeUInt16LE(dev, at);
    at = buf.writeUInt16LE(cls, at);
    at = buf.writeUInt16LE(comm, at);
    at = buf.writeUInt16LE(cg, at);
    at = buf.writeUInt8(s.outlier ? 1 : 0, at);
  }
  return { payload: buf, kept: rows.length, dropped };
}

/** The rows of a record, decoded one at a time (a query looks at most rows and keeps few). */
export class SampleRecordReader {
  readonly count: number;
  private readonly strings: string[] = [];
  private readonly rowsAt: number;

  constructor(private readonly buf: Buffer) {
    const need = (at: number, n: number, what: string): void => {
      if (at + n > buf.length) throw new SampleRecordError(`sample record cut short in its ${what} (${buf.length} bytes)`);
    };
    need(0, 3, 'header');
    const version = buf.readUInt8(0);
    if (version !== SAMPLE_RECORD_VERSION) throw new SampleRecordError(`sample record of version ${version}, not ${SAMPLE_RECORD_VERSION}`);
    const nStrings = buf.readUInt16LE(1);
    let at = 3;
    for (let i = 0; i < nStrings; i++) {
      need(at, 2, 'string table');
      const len = buf.readUInt16LE(at);
      need(at + 2, len, 'string table');
      this.strings.push(buf.toString('utf8', at + 2, at + 2 + len));
      at += 2 + len;
    }
    need(at, 4, 'row count');
    this.count = buf.readUInt32LE(at);
    this.rowsAt = at + 4;
    if (this.rowsAt + this.count * ROW_BYTES !== buf.length) {
      throw new SampleRecordError(`sample record says ${this.count} rows, but holds ${buf.length - this.rowsAt} bytes of rows`);
    }
    for (let i = 0; i < this.count; i++) {
      const ref = this.rowsAt + i * ROW_BYTES + REF_AT;
      for (let k = 0; k < 4; k++) {
        const id = buf.readUInt16LE(ref + 2 * k);
        if (id >= nStrings && !(k === 3 && id === NO_STRING))
          throw new SampleRecordError(`sample record row ${i} names string ${id} of ${nStrings}`);
      }
    }
  }

  tsUs(i: number): number {
    return this.buf.readDoubleLE(this.rowsAt + i * ROW_BYTES);
  }

  dev(i: number): string {
    return this.strings[this.buf.readUInt16LE(this.rowsAt + i * ROW_BYTES + REF_AT)] as string;
  }

  /** Row i's cgroup path (undefined: none). */
  cgPath(i: number): string | undefined {
    const id = this.buf.readUInt16LE(this.rowsAt + i * ROW_BYTES + REF_AT + 6);
    return id === NO_STRING ? undefined : this.strings[id];
  }

  bytes(i: number): number {
    return this.buf.readDoubleLE(this.rowsAt + i * ROW_BYTES + 16);
  }

  opClass(i: number): string {
    return this.strings[this.buf.readUInt16LE(this.rowsAt + i * ROW_BYTES + REF_AT + 2)] as string;
  }

  /** Row i's phases into `into` (w_ns undefined: absent), for samplePhaseNs without building the sample. */
  phasesInto(i: number, into: { w_ns?: number | null | undefined; q_ns: number | null; d_ns: number }): void {
    const at = this.rowsAt + i * ROW_BYTES;
    const q = this.buf.readDoubleLE(at + 24);
    const w = this.buf.readDoubleLE(at + 40);
    into.q_ns = Number.isNaN(q) ? null : q;
    into.d_ns = this.buf.readDoubleLE(at + 32);
    into.w_ns = w === ABSENT ? undefined : Number.isNaN(w) ? null : w;
  }

  /** Row i's sector (null: none), without building the sample. */
  sectorOf(i: number): number | null {
    const v = this.buf.readDoubleLE(this.rowsAt + i * ROW_BYTES + 8);
    return Number.isNaN(v) ? null : v;
  }

  dNs(i: number): number {
    return this.buf.readDoubleLE(this.rowsAt + i * ROW_BYTES + 32);
  }

  outlier(i: number): boolean {
    return this.buf.readUInt8(this.rowsAt + i * ROW_BYTES + REF_AT + 8) === 1;
  }

  sample(i: number): IoSample {
    const b = this.buf;
    const at = this.rowsAt + i * ROW_BYTES;
    const sector = b.readDoubleLE(at + 8);
    const q = b.readDoubleLE(at + 24);
    const w = b.readDoubleLE(at + 40);
    const ref = at + REF_AT;
    const cg = b.readUInt16LE(ref + 6);
    return {
      ts_us: b.readDoubleLE(at),
      dev: this.strings[b.readUInt16LE(ref)] as string,
      c: this.strings[b.readUInt16LE(ref + 2)] as string,
      sector: Number.isNaN(sector) ? null : sector,
      bytes: b.readDoubleLE(at + 16),
      q_ns: Number.isNaN(q) ? null : q,
      d_ns: b.readDoubleLE(at + 32),
      ...(w === ABSENT ? {} : { w_ns: Number.isNaN(w) ? null : w }),
      pid: b.readUInt32LE(at + 56),
      comm: this.strings[b.readUInt16LE(ref + 4)] as string,
      cgroup: b.readDoubleLE(at + 48),
      ...(cg === NO_STRING ? {} : { cg: this.strings[cg] as string }),
      outlier: b.readUInt8(ref + 8) === 1,
    };
  }
}

/** The longest prefix of at most `max` bytes that ends on a UTF-8 character boundary. */
function utf8Boundary(buf: Buffer, max: number): number {
  let n = max;
  while (n > 0 && ((buf[n] as number) & 0xc0) === 0x80) n--;
  return n;
}

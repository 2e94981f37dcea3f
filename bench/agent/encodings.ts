/**
 * Wire-size alternatives for live frames, measured on real frames: the JSON the agent sends,
 * that JSON through permessage-deflate (one deflate context per connection, flushed per
 * message, as the `ws` library does with context takeover), and a compact binary encoding
 * (varints, bucket indices delta-coded) as the floor a custom format could reach.
 */
import { constants, createDeflateRaw, type DeflateRaw } from 'node:zlib';
import type { Frame } from '@blkheat/shared-types';

export interface EncodingFigures {
  readonly name: string;
  /** Bytes of all messages. */
  readonly bytes: number;
  /** CPU time spent encoding all messages (for one client), ms. */
  readonly cpuMs: number;
}

/** permessage-deflate: one raw-deflate stream per connection, sync-flushed after each message. */
export async function deflateFigures(messages: readonly Buffer[]): Promise<EncodingFigures> {
  const z: DeflateRaw = createDeflateRaw({ level: constants.Z_DEFAULT_COMPRESSION, memLevel: 8 });
  let bytes = 0;
  z.on('data', (c: Buffer) => (bytes += c.length));
  const t0 = process.cpuUsage();
  for (const m of messages) {
    await new Promise<void>((resolve) => {
      z.write(m);
      z.flush(constants.Z_SYNC_FLUSH, () => resolve());
    });
    bytes -= 4; // permessage-deflate strips the 00 00 ff ff tail of each flushed message
  }
  const t = process.cpuUsage(t0);
  z.close();
  return { name: 'JSON + permessage-deflate', bytes, cpuMs: (t.user + t.system) / 1000 };
}

function varint(out: number[], v: number): void {
  let x = Math.max(0, Math.floor(v));
  while (x >= 0x80) {
    out.push((x % 0x80) | 0x80);
    x = Math.floor(x / 0x80);
  }
  out.push(x);
}

/**
 * A plausible binary frame: ts, disk count, per disk a dev index and class count, per class a
 * class-table index, n, and each histogram as (pairs, then delta index + count varints).
 * Device and class names would travel once per connection (not counted).
 */
export function binaryFigures(frames: readonly Frame[]): EncodingFigures {
  const devs = new Map<string, number>();
  const classes = new Map<string, number>();
  const idx = (m: Map<string, number>, k: string): number => {
    let i = m.get(k);
    if (i === undefined) {
      i = m.size;
      m.set(k, i);
    }
    return i;
  };
  let bytes = 0;
  const t0 = process.cpuUsage();
  for (const f of frames) {
    const out: number[] = [];
    varint(out, f.ts);
    varint(out, f.disks.length);
    for (const d of f.disks) {
      varint(out, idx(devs, d.dev));
      varint(out, d.cls.length);
      varint(out, d.dropped ?? 0);
      for (const c of d.cls) {
        varint(out, idx(classes, c.c));
        varint(out, c.n);
        for (const h of [c.d, c.q]) {
          varint(out, h.length / 2);
          let prev = 0;
          for (let k = 0; k < h.length; k += 2) {
            varint(out, (h[k] as number) - prev);
            prev = h[k] as number;
            varint(out, h[k + 1] as number);
          }
        }
      }
    }
    bytes += Buffer.from(out).length + 2; // + WebSocket binary frame header
  }
  const t = process.cpuUsage(t0);
  return { name: 'binary (varint) estimate', bytes, cpuMs: (t.user + t.system) / 1000 };
}

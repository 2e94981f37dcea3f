/**
 * A small RFC 6455 WebSocket client for tests and benchmarks, on node:http alone. Written by
 * hand (rather than using the `ws` package) because tests need what a polite library hides:
 * sending raw or malformed frames, pausing the socket so the peer's data piles up, timing
 * each message's arrival, and seeing a refused handshake's HTTP status and body.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { randomBytes, createHash } from 'node:crypto';
import type { Socket } from 'node:net';

export interface WsMessage {
  readonly type: 'text' | 'binary';
  readonly data: Buffer;
  /** performance.now() when the last byte arrived. */
  readonly at: number;
  /** Wall clock (Date.now()) when the last byte arrived. */
  readonly wallMs: number;
  text(): string;
  json<T = unknown>(): T;
}

export interface WsClose {
  readonly code: number;
  readonly reason: string;
}

export interface WsConnectOptions {
  /** Extra request headers (e.g. Authorization). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Origin header; absent by default, as for a non-browser client. */
  readonly origin?: string;
  readonly timeoutMs?: number;
}

/** The server refused the upgrade with an HTTP answer. */
export class WsHandshakeError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`WebSocket handshake refused: HTTP ${status} ${body.slice(0, 200)}`);
  }
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export class WsTestClient {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private fragments: Buffer[] = [];
  private fragmentType: 'text' | 'binary' | undefined;
  private readonly queue: WsMessage[] = [];
  private waiters: ((m: WsMessage | undefined) => void)[] = [];
  private closeInfo: WsClose | undefined;
  private ended = false;
  /** Bytes of message payload received. */
  bytesReceived = 0;
  /** Bytes on the wire received (headers included). */
  wireBytesReceived = 0;
  /** Resolves when the connection is gone, with the close frame's code (1006 when none came). */
  readonly closed: Promise<WsClose>;
  private resolveClosed!: (c: WsClose) => void;

  private constructor(private readonly socket: Socket) {
    this.closed = new Promise((r) => (this.resolveClosed = r));
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    const end = (): void => this.onEnd();
    socket.on('close', end);
    socket.on('end', end);
    socket.on('error', end);
  }

  static connect(url: string, options: WsConnectOptions = {}): Promise<WsTestClient> {
    const u = new URL(url);
    const key = randomBytes(16).toString('base64');
    const headers: Record<string, string> = {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Key': key,
      'Sec-WebSocket-Version': '13',
      ...(options.origin !== undefined ? { Origin: options.origin } : {}),
      ...options.headers,
    };
    return new Promise((resolve, reject) => {
      const req = httpRequest({
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: u.port,
        path: `${u.pathname}${u.search}`,
        headers,
        timeout: options.timeoutMs ?? 10_000,
      });
      req.on('upgrade', (res: IncomingMessage, socket: Socket, head: Buffer) => {
        const accept = createHash('sha1')
          .update(key + GUID)
          .digest('base64');
        if (res.headers['sec-websocket-accept'] !== accept) {
          socket.destroy();
          reject(new Error('bad Sec-WebSocket-Accept'));
          return;
        }
        const client = new WsTestClient(socket);
        if (head.length > 0) client.onData(head);
        resolve(client);
      });
      req.on('response', (res: IncomingMessage) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => reject(new WsHandshakeError(res.statusCode ?? 0, body)));
        res.on('error', () => reject(new WsHandshakeError(res.statusCode ?? 0, body)));
      });
      req.on('timeout', () => req.destroy(new Error('WebSocket handshake timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  get isClosed(): boolean {
    return this.ended;
  }

  get closeFrame(): WsClose | undefined {
    return this.closeInfo;
  }

  /** Messages received and not yet taken. */
  get pending(): number {
    return this.queue.length;
  }

  sendText(text: string): void {
    this.sendFrame(0x1, Buffer.from(text, 'utf8'));
  }

  sendJson(value: unknown): void {
    this.sendText(JSON.stringify(value));
  }

  sendBinary(data: Buffer): void {
    this.sendFrame(0x2, data);
  }

  /** Sends one frame exactly as told (masked, as a client must), for malformed-input tests. */
  sendFrame(opcode: number, payload: Buffer, fin = true): void {
    if (this.ended) return;
    const mask = randomBytes(4);
    const len = payload.length;
    const head = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    head[0] = (fin ? 0x80 : 0) | (opcode & 0x0f);
    if (len < 126) head[1] = 0x80 | len;
    else if (len < 65536) {
      head[1] = 0x80 | 126;
      head.writeUInt16BE(len, 2);
    } else {
      head[1] = 0x80 | 127;
      head.writeBigUInt64BE(BigInt(len), 2);
    }
    const body = Buffer.allocUnsafe(len);
    for (let i = 0; i < len; i++) body[i] = (payload[i] as number) ^ (mask[i & 3] as number);
    this.socket.write(Buffer.concat([head, mask, body]));
  }

  /** Stops reading from the socket: the server's data piles up in kernel buffers, then in the server. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** The next message; rejects after timeoutMs, or when the connection closes first. */
  next(timeoutMs = 10_000): Promise<WsMessage> {
    const m = this.queue.shift();
    if (m) return Promise.resolve(m);
    if (this.ended) return Promise.reject(new Error(`connection closed (${this.describeClose()})`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no message within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (msg: WsMessage | undefined): void => {
        clearTimeout(timer);
        if (msg) resolve(msg);
        else reject(new Error(`connection closed (${this.describeClose()})`));
      };
      this.waiters.push(waiter);
    });
  }

  /** The next JSON message for which `accept` is true; others are discarded. */
  async nextJson<T = Record<string, unknown>>(accept: (m: T) => boolean = () => true, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = await this.next(Math.max(1, deadline - Date.now()));
      const v = m.json<T>();
      if (accept(v)) return v;
    }
  }

  /** Takes every message already received. */
  drain(): WsMessage[] {
    return this.queue.splice(0, this.queue.length);
  }

  /** Sends a close frame and waits for the connection to end. */
  async close(code = 1000, reason = ''): Promise<WsClose> {
    if (!this.ended) {
      const r = Buffer.from(reason, 'utf8');
      const p = Buffer.alloc(2 + r.length);
      p.writeUInt16BE(code, 0);
      r.copy(p, 2);
      this.sendFrame(0x8, p);
      const t = setTimeout(() => this.socket.destroy(), 2000);
      await this.closed;
      clearTimeout(t);
    }
    return this.closed;
  }

  /** Drops the TCP connection without a close frame. */
  destroy(): void {
    this.socket.destroy();
  }

  private describeClose(): string {
    return this.closeInfo ? `code ${this.closeInfo.code} ${this.closeInfo.reason}` : 'no close frame';
  }

  private onEnd(): void {
    if (this.ended) return;
    this.ended = true;
    this.socket.destroy();
    const info = this.closeInfo ?? { code: 1006, reason: '' };
    this.resolveClosed(info);
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private onData(d: Buffer): void {
    this.wireBytesReceived += d.length;
    this.chunks.push(d);
    this.buffered += d.length;
    for (;;) {
      if (this.buffered < 2) return;
      const head = this.peek(Math.min(this.buffered, 14));
      const b0 = head[0] as number;
      const b1 = head[1] as number;
      let len = b1 & 0x7f;
      let off = 2;
      if (len === 126) {
        if (head.length < 4) return;
        len = head.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (head.length < 10) return;
        len = Number(head.readBigUInt64BE(2));
        off = 10;
      }
      if (b1 & 0x80) off += 4; // servers must not mask, but tolerate it
      if (this.buffered < off + len) return;
      const frame = this.take(off + len);
      let payload = frame.subarray(off);
      if (b1 & 0x80) {
        const mask = frame.subarray(off - 4, off);
        payload = Buffer.from(payload.map((x, i) => x ^ (mask[i & 3] as number)));
      }
      this.onFrame(b0 & 0x0f, (b0 & 0x80) !== 0, payload);
    }
  }

  private onFrame(opcode: number, fin: boolean, payload: Buffer): void {
    if (opcode === 0x8) {
      this.closeInfo = {
        code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005,
        reason: payload.length > 2 ? payload.subarray(2).toString('utf8') : '',
      };
      // Echo the close, then wait for the server to end the TCP connection.
      if (!this.socket.destroyed) this.sendFrame(0x8, payload.subarray(0, 2));
      this.socket.end();
      return;
    }
    if (opcode === 0x9) {
      this.sendFrame(0xa, payload);
      return;
    }
    if (opcode === 0xa) return;
    if (opcode === 0x1 || opcode === 0x2) {
      this.fragmentType = opcode === 0x1 ? 'text' : 'binary';
      this.fragments = [];
    }
    this.fragments.push(payload);
    if (!fin) return;
    const data = this.fragments.length === 1 ? (this.fragments[0] as Buffer) : Buffer.concat(this.fragments);
    const type = this.fragmentType ?? 'binary';
    this.fragments = [];
    this.bytesReceived += data.length;
    const msg: WsMessage = {
      type,
      data,
      at: performance.now(),
      wallMs: Date.now(),
      text: () => data.toString('utf8'),
      json: <T>() => JSON.parse(data.toString('utf8')) as T,
    };
    const w = this.waiters.shift();
    if (w) w(msg);
    else this.queue.push(msg);
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= n) return first.subarray(0, n);
    return Buffer.concat(this.chunks).subarray(0, n);
  }

  private take(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      const all = Buffer.concat(this.chunks);
      out = all.subarray(0, n);
      this.chunks = all.length > n ? [all.subarray(n)] : [];
    }
    this.buffered -= n;
    return out;
  }
}

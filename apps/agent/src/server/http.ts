/**
 * The listening socket: express for HTTP, and WebSocket upgrades on /api/v1/stream after the
 * same checks (Host, token from ?token= since browsers cannot set headers on a WebSocket,
 * Origin, client limit). A refused upgrade gets a plain HTTP error and the socket is closed.
 * Every answer is ours, even to what express never sees (CONNECT, a request Node's parser
 * refuses, an Expect it does not meet): a JSON error with the security headers.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { MAX_CLIENT_MESSAGE_BYTES } from '@blkheat/shared-types';
import { createApp, requestUrl, type AppOptions } from './app.js';
import type { StreamHub } from './hub.js';
import { MAX_CLIENTS, MAX_CONNECTIONS } from './limits.js';
import { MAX_QUERY_BYTES, TARGET_TOO_LONG_MESSAGE } from './http-query.js';
import {
  accessPolicy,
  clip,
  HOST_MISSING_MESSAGE,
  hostAllowed,
  hostMissing,
  originAllowed,
  presentedToken,
  securityHeaders,
  setSecurityHeaders,
  throttledLog,
} from './security.js';

const STREAM_PATH = '/api/v1/stream';
/**
 * Most bytes of a request line and headers: the longest target (MAX_QUERY_BYTES, answered 414
 * by the app) plus Node's default 16 KiB for the headers. Past it Node's parser gives up and
 * onClientError answers.
 */
const MAX_HEAD_BYTES = MAX_QUERY_BYTES + 16 * 1024;
/** What the agent answers: anything else is 405 (a method Node knows) or 501 (one it does not). */
const ALLOW = { Allow: 'GET, HEAD' };
/** A request line as it starts ("GET /...", "FOO /..."): a method token, one space, the target. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S/;

export interface AgentServer {
  readonly server: Server;
  /** The bound address (port resolved when 0 was asked for). */
  readonly address: AddressInfo;
  /** Where the dashboard is: http://ADDRESS:PORT/ (IPv6 addresses in brackets). */
  readonly url: string;
  /** Stops accepting, closes every client (1001) and the listening socket. */
  close(): Promise<void>;
}

export interface ListenOptions extends Omit<AppOptions, 'streamStats' | 'reads'> {
  readonly host: string;
  readonly port: number;
  readonly hub: StreamHub;
  readonly log: (line: string) => void;
}

/** Answers on a bare socket (no express, no ServerResponse) and closes it. */
function refuse(socket: Duplex, status: number, message: string, extra: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: message });
  const headers = {
    ...securityHeaders(undefined, false),
    'Cache-Control': 'no-store',
    Connection: 'close',
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    ...extra,
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head}\r\n\r\n${body}`);
  // A peer that never closes its side must not hold the socket open.
  setTimeout(() => socket.destroy(), 2000).unref();
}

/**
 * A request Node's parser refused (or a socket error before a request was read): answered as
 * express answers, unless an answer is already on its way (then only closed).
 */
function onClientError(err: Error, socket: Duplex): void {
  const code = 'code' in err && typeof err.code === 'string' ? err.code : '';
  if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable || responseStarted(socket)) {
    socket.destroy();
    return;
  }
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      if ((refusedLine(err).split(' ')[1] ?? '').length > MAX_QUERY_BYTES) return refuse(socket, 414, TARGET_TOO_LONG_MESSAGE);
      return refuse(socket, 431, `request line and headers longer than ${MAX_HEAD_BYTES} bytes together`);
    case 'HPE_INVALID_METHOD': {
      const method = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}) /.exec(refusedLine(err))?.[1];
      if (method) return refuse(socket, 501, `method ${method} is not implemented (only GET and HEAD)`, ALLOW);
      return refuse(socket, 400, 'malformed request: not HTTP/1.x');
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return refuse(socket, 408, 'request not received in time');
    default:
      // Node's messages name the rule broken ("Parse Error: Invalid character in Content-Length"), never the bytes.
      return refuse(socket, 400, `malformed request (${err.message.slice(0, 120)})`);
  }
}

/**
 * The request line the parser was reading when it refused, as far as the packet it refused
 * (err.rawPacket, up to err.bytesParsed) shows it: the last line there that starts like one
 * (keep-alive requests may precede it). "" when the packet holds none (say, a long line sent
 * in pieces): a too long target is then told from too many headers by this line alone.
 */
function refusedLine(err: Error): string {
  const raw = 'rawPacket' in err && Buffer.isBuffer(err.rawPacket) ? err.rawPacket : Buffer.alloc(0);
  const parsed = 'bytesParsed' in err && typeof err.bytesParsed === 'number' ? err.bytesParsed : raw.length;
  // The line the refusal is in, and those before it (bytesParsed may stop short of its end).
  const end = raw.indexOf(0x0a, Math.max(parsed, 0));
  const lines = raw.toString('latin1', 0, end < 0 ? raw.length : end).split('\n');
  return lines.findLast((line) => REQUEST_LINE.test(line)) ?? '';
}

/** True when a response on this socket has sent its head: a second one would corrupt it. */
function responseStarted(socket: Duplex): boolean {
  const current: unknown = Reflect.get(socket, '_httpMessage');
  return typeof current === 'object' && current !== null && 'headersSent' in current && current.headersSent === true;
}

/** An answer through a ServerResponse that express never saw (an Expect that Node would answer bare). */
function answer(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  setSecurityHeaders(res, req.headers.host, false);
  const body = JSON.stringify({ error: message });
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

/** What a command's flags say about listening: --host, --port, --token, --allow-origin, --web-root. */
export interface ListenFlagValues {
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
  readonly allowOrigins: readonly string[];
  readonly webRoot: string;
}

/** listen() as a command's flags ask for it (serve and fleet): the access policy built from them. */
export function listenOn(flags: ListenFlagValues, parts: Pick<ListenOptions, 'ctx' | 'hub' | 'site' | 'log'>): Promise<AgentServer> {
  return listen({ host: flags.host, port: flags.port, policy: accessPolicy(flags), webRoot: flags.webRoot, ...parts });
}

/** Creates the server and starts listening; resolves once bound. */
export async function listen(options: ListenOptions): Promise<AgentServer> {
  const { hub, policy } = options;
  const connections = { dropped: 0 };
  const app = createApp({ ...options, streamStats: () => ({ ...hub.stats(), connectionsDropped: connections.dropped }), reads: hub.reads });
  // requireHostHeader: false lets the app answer a missing Host itself (Node's answer is a bare 400).
  const server = createServer({ maxHeaderSize: MAX_HEAD_BYTES, requireHostHeader: false }, app);
  // Sockets past this are closed as they come: no client can hold every descriptor.
  server.maxConnections = MAX_CONNECTIONS;
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', onClientError);
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    refuse(socket, 405, 'CONNECT is not answered: this is not a proxy (only GET and HEAD)', ALLOW);
  });
  // Only "100-continue" is met (by Node); any other expectation gets a JSON 417 rather than Node's bare one.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    answer(req, res, 417, `Expect: ${clip(req.headers.expect ?? '', 40)} is not met (only 100-continue is)`),
  );
  const refusalLog = throttledLog(options.log);
  server.on('drop', (data?: { remoteAddress?: string }) => {
    // Node closes them without a word: say it, or a full agent looks like a dead one.
    connections.dropped++;
    refusalLog(
      'connections',
      `serve: closed a connection from ${data?.remoteAddress ?? 'an unknown address'} as it came: ${MAX_CONNECTIONS} connections are open already (blkheat_connections_dropped_total counts them)`,
    );
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CLIENT_MESSAGE_BYTES,
    perMessageDeflate: false,
    // ws checks that text messages and close reasons are UTF-8 and fails the connection with
    // 1007 when not (RFC 6455 8.1): an invalid close reason is not echoed back.
    skipUTF8Validation: false,
    clientTracking: false,
  });

  // ws refuses a malformed handshake (no key, another version) with its own bare answer unless
  // told to leave it to us; its message says what was wrong, its status is 405 for a method, else 400.
  wss.on('wsClientError', (err: Error, socket: Duplex) => {
    if (err.message.startsWith('Invalid HTTP method')) return refuse(socket, 405, `WebSocket handshake: ${err.message}`, ALLOW);
    const versions: Record<string, string> = err.message.includes('Sec-WebSocket-Version') ? { 'Sec-WebSocket-Version': '13, 8' } : {};
    return refuse(socket, 400, `WebSocket handshake: ${err.message}`, versions);
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const url = requestUrl(req);
    if (!url || url.pathname !== STREAM_PATH) return refuse(socket, 404, `WebSocket only at ${STREAM_PATH}`);
    if (hostMissing(req)) return refuse(socket, 400, HOST_MISSING_MESSAGE);
    if (!hostAllowed(policy, req.headers.host)) return refuse(socket, 403, 'Host header not allowed');
    if (!policy.tokens.accepts(presentedToken(req, url))) {
      return refuse(socket, 401, 'missing or wrong token (?token=)', { 'WWW-Authenticate': 'Bearer realm="blkheat"' });
    }
    const origin = req.headers.origin;
    if (!originAllowed(policy, origin, req.headers.host)) {
      refusalLog('origin', `stream: refused Origin ${clip(origin ?? '')} from ${req.socket.remoteAddress ?? '?'}`);
      return refuse(socket, 403, 'Origin not allowed (start the agent with --allow-origin to add one)');
    }
    if (hub.clientCount >= MAX_CLIENTS) return refuse(socket, 503, `too many clients (at most ${MAX_CLIENTS})`);
    wss.handleUpgrade(req, socket, head, (ws) => {
      hub.attach(ws, `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => options.log(`http: ${e.message}`));

  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    address,
    url: `http://${shown}:${address.port}/`,
    async close(): Promise<void> {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await hub.closeAll();
      server.closeAllConnections();
      await closed;
    },
  };
}

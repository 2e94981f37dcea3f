/**
 * The listening socket: express for HTTP, and WebSocket upgrades on /api/v1/stream after the
 * same checks (Host, token from ?token= since browsers cannot set headers on a WebSocket,
 * Origin, client limit). A refused upgrade gets a plain HTTP error and the socket is closed.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { MAX_CLIENT_MESSAGE_BYTES } from '@blkheat/shared-types';
import { createApp, requestUrl, type AppOptions } from './app.js';
import type { StreamHub } from './hub.js';
import { MAX_CLIENTS } from './limits.js';
import { accessPolicy, hostAllowed, originAllowed, presentedToken } from './security.js';

const STREAM_PATH = '/api/v1/stream';

export interface AgentServer {
  readonly server: Server;
  /** The bound address (port resolved when 0 was asked for). */
  readonly address: AddressInfo;
  /** Where the dashboard is: http://ADDRESS:PORT/ (IPv6 addresses in brackets). */
  readonly url: string;
  /** Stops accepting, closes every client (1001) and the listening socket. */
  close(): Promise<void>;
}

export interface ListenOptions extends Omit<AppOptions, 'streamStats'> {
  readonly host: string;
  readonly port: number;
  readonly hub: StreamHub;
  readonly log: (line: string) => void;
}

function refuse(socket: Duplex, status: number, message: string, extra: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: message });
  const headers = {
    Connection: 'close',
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Content-Type-Options': 'nosniff',
    ...extra,
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head}\r\n\r\n${body}`);
  // A peer that never closes its side must not hold the socket open.
  setTimeout(() => socket.destroy(), 2000).unref();
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
  const app = createApp({ ...options, streamStats: () => hub.stats() });
  const server = createServer({ maxHeaderSize: 16 * 1024 }, app);
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CLIENT_MESSAGE_BYTES,
    perMessageDeflate: false,
    // We decode UTF-8 ourselves, so invalid text is answered with an error instead of closing the socket.
    skipUTF8Validation: true,
    clientTracking: false,
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const url = requestUrl(req);
    if (!url || url.pathname !== STREAM_PATH) return refuse(socket, 404, `WebSocket only at ${STREAM_PATH}`);
    if (!hostAllowed(policy, req.headers.host)) return refuse(socket, 403, 'Host header not allowed');
    if (!policy.tokens.accepts(presentedToken(req, url))) {
      return refuse(socket, 401, 'missing or wrong token (?token=)', { 'WWW-Authenticate': 'Bearer realm="blkheat"' });
    }
    const origin = req.headers.origin;
    if (!originAllowed(policy, origin, req.headers.host)) {
      options.log(`stream: refused Origin ${JSON.stringify(origin)} from ${req.socket.remoteAddress ?? '?'}`);
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

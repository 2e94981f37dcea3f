/**
 * Who may talk to the agent: bearer token (constant-time), Host allow-list against DNS
 * rebinding when no token is set, WebSocket Origin check, and the security headers of every
 * HTTP answer.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Checks a presented token against the configured one without leaking timing. */
export class TokenChecker {
  private readonly digest: Buffer | undefined;

  constructor(token: string | undefined) {
    this.digest = token === undefined ? undefined : sha256(token);
  }

  get required(): boolean {
    return this.digest !== undefined;
  }

  /**
   * True when no token is configured, or the candidate equals it. Both sides are hashed
   * first so timingSafeEqual compares equal lengths and the time does not depend on where
   * (or whether) the strings differ, nor on the candidate's length.
   */
  accepts(candidate: string | undefined): boolean {
    if (this.digest === undefined) return true;
    const got = sha256(candidate ?? '');
    return timingSafeEqual(got, this.digest) && candidate !== undefined;
  }
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** The token a request presents: `Authorization: Bearer <token>`, else the `token` query parameter. */
export function presentedToken(req: IncomingMessage, url: URL): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  return url.searchParams.get('token') ?? undefined;
}

/** Parses a request's Host header into a lower-case hostname and port; undefined when malformed. */
function parseHostHeader(host: string | undefined): { hostname: string; port: string; host: string } | undefined {
  if (!host || host.length > 255) return undefined;
  // RFC 3986 reg-name / IPv4 / [IPv6] with an optional port; nothing else may reach a header we echo.
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(host);
  if (!m) return undefined;
  const hostname = (m[1] as string).toLowerCase();
  return { hostname, port: m[2] ?? '', host: host.toLowerCase() };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** True for names and addresses that always mean this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  if (LOOPBACK_NAMES.has(h) || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  const bare = h.startsWith('[') ? h.slice(1, -1) : h;
  return bare === '::1' || bare === '::ffff:127.0.0.1';
}

/** Normalizes an origin ("https://Example.org:443" -> "https://example.org"); undefined if not an http(s) origin. */
export function normalizeOrigin(origin: string): string | undefined {
  try {
    const u = new URL(origin);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    if (u.username || u.password || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

export interface AccessPolicy {
  readonly tokens: TokenChecker;
  /** Normalized extra origins allowed to open the WebSocket (--allow-origin). */
  readonly allowOrigins: ReadonlySet<string>;
  /** Address the server is bound to (a Host of exactly this is always fine). */
  readonly bindHost: string;
}

/** The policy of a server listening on `host`, with its --token (if any) and --allow-origin list. */
export function accessPolicy(listening: {
  readonly host: string;
  readonly token: string | undefined;
  readonly allowOrigins: readonly string[];
}): AccessPolicy {
  return { tokens: new TokenChecker(listening.token), allowOrigins: new Set(listening.allowOrigins), bindHost: listening.host };
}

/**
 * Without a token the agent only listens on loopback, where the danger is a web page on
 * another site reaching it through DNS rebinding (its name resolving to 127.0.0.1): such
 * requests carry that site's name in Host, so only loopback names, the bound address and the
 * hosts of --allow-origin are accepted. With a token this check is off (the token is the gate,
 * and users reach a remote agent under names the agent cannot know).
 */
export function hostAllowed(policy: AccessPolicy, hostHeader: string | undefined): boolean {
  if (policy.tokens.required) return true;
  const h = parseHostHeader(hostHeader);
  if (!h) return false;
  if (isLoopbackHost(h.hostname) || h.hostname === policy.bindHost.toLowerCase()) return true;
  for (const o of policy.allowOrigins) {
    if (new URL(o).host === h.host || new URL(o).hostname === h.hostname) return true;
  }
  return false;
}

/**
 * A browser's WebSocket Origin must be the origin the page was served from (same Host,
 * http or https) or one of --allow-origin. Requests without Origin come from non-browser
 * clients, which could claim any Origin anyway; the token is what guards against them.
 */
export function originAllowed(policy: AccessPolicy, origin: string | undefined, hostHeader: string | undefined): boolean {
  if (origin === undefined) return true;
  const o = normalizeOrigin(origin);
  if (!o) return false;
  if (policy.allowOrigins.has(o)) return true;
  const h = parseHostHeader(hostHeader);
  if (!h) return false;
  const url = new URL(o);
  return url.host === h.host || (url.hostname === h.hostname && defaultPort(url) === h.port);
}

function defaultPort(u: URL): string {
  return u.port || (u.protocol === 'https:' ? '443' : '80');
}

/**
 * Content-Security-Policy of the dashboard: scripts and styles only from the agent (the
 * build has no inline scripts), data only from the agent over HTTP or WebSocket, no framing.
 * `connect-src 'self'` covers same-origin ws: in CSP 3 browsers; the explicit ws/wss source
 * of the request's own Host is for older ones.
 */
function contentSecurityPolicy(hostHeader: string | undefined): string {
  const h = parseHostHeader(hostHeader);
  const ws = h ? ` ws://${h.host} wss://${h.host}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self'${ws}`,
    "manifest-src 'self'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Headers every answer carries, including those written straight to a socket (refused
 * upgrades, requests Node's parser refused); `page` gives the dashboard's CSP, anything else
 * the API's.
 */
export function securityHeaders(hostHeader: string | undefined, page: boolean): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Content-Security-Policy': page ? contentSecurityPolicy(hostHeader) : "default-src 'none'; frame-ancestors 'none'",
  };
}

/** Sets securityHeaders on an express/Node response. */
export function setSecurityHeaders(res: ServerResponse, hostHeader: string | undefined, page: boolean): void {
  for (const [name, value] of Object.entries(securityHeaders(hostHeader, page))) res.setHeader(name, value);
}

/**
 * HTTP/1.1 requires Host (RFC 9112 §3.2). Node's own check answers a bare 400 without our
 * headers, so the server turns it off (requireHostHeader: false) and the agent answers this.
 */
export function hostMissing(req: IncomingMessage): boolean {
  return req.headers.host === undefined && (req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1));
}

export const HOST_MISSING_MESSAGE = 'missing Host header (HTTP/1.1 requires one)';

/**
 * Client-supplied text for a log line: JSON-quoted (no control characters or line breaks get
 * through), at most `max` characters of it, and the full length when cut, so a 5,000-character
 * header costs a line of ~150 bytes however often it is sent.
 */
export function clip(text: string, max = 120): string {
  if (text.length <= max) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, max))}…(${text.length} chars)`;
}

/**
 * A log for lines a client can cause: at most one per `kind` per interval, and the next one
 * logged says how many were left out, so a flood of refusals cannot flood the log.
 */
export function throttledLog(log: (line: string) => void, intervalMs = 1000): (kind: string, line: string) => void {
  const last = new Map<string, { at: number; skipped: number }>();
  return (kind, line) => {
    const now = Date.now();
    const prev = last.get(kind);
    if (prev && now - prev.at < intervalMs) {
      prev.skipped++;
      return;
    }
    last.set(kind, { at: now, skipped: 0 });
    log(prev && prev.skipped > 0 ? `${line} (and ${prev.skipped} more like it since the last one logged)` : line);
  };
}

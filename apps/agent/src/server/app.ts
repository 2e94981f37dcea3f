/**
 * The HTTP side (express): the dashboard page and assets, the REST API, /healthz and
 * /metrics. Every answer carries the security headers; /api and /metrics need the token
 * when one is configured (the page and its assets do not: the dashboard takes the token from
 * its URL fragment, which browsers never send to the server).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AgentContext } from './context.js';
import { answerCutter, rangeAnswerFields } from '../history/range-read.js';
import { DEFAULT_SAMPLES_LIMIT, ANSWER_MAX_BYTES, SNAPSHOT_MAX_BYTES } from './limits.js';
import type { ReadScheduler } from './read-scheduler.js';
import { rangeSource, snapshotSource, streamAnswer } from './rest-answers.js';
import { renderText, TEXT_CONTENT_TYPE } from './exposition.js';
import { buildMetrics, type StreamStats } from './metrics.js';
import { PROTOBUF_CONTENT_TYPE, renderProtobuf, wantsProtobuf } from './native-histograms.js';
import {
  MAX_QUERY_BYTES,
  parseNoQuery,
  parseRangeQuery,
  parseRankingQuery,
  parseSamplesQuery,
  parseSnapshotQuery,
  parseStuckQuery,
  TARGET_TOO_LONG_MESSAGE,
  type QueryResult,
} from './http-query.js';
import { HOST_MISSING_MESSAGE, hostAllowed, hostMissing, presentedToken, setSecurityHeaders, type AccessPolicy } from './security.js';
import { samplesAnswerFields } from './session-messages.js';
import { snapshotOfAnswer } from './snapshot.js';
import { notBuiltPage, safeStaticPath, sendStatic, type StaticSite } from './static.js';

export interface AppOptions {
  readonly ctx: AgentContext;
  readonly policy: AccessPolicy;
  /** The built dashboard, or undefined when apps/web/dist is missing. */
  readonly site: StaticSite | undefined;
  /** Where the dashboard was looked for (for the "not built" page). */
  readonly webRoot: string;
  readonly streamStats: () => StreamStats;
  /** Where range answers and snapshots are read (shared with the WebSocket clients). */
  readonly reads: ReadScheduler;
  /** Seconds without a new frame after which /healthz reports 503. */
  readonly staleAfterS?: number;
}

/** The request's URL, parsed (never throws: a malformed target is reported as undefined). */
export function requestUrl(req: { url?: string | undefined; originalUrl?: string | undefined }): URL | undefined {
  try {
    // originalUrl: inside a mounted middleware express strips the mount path from req.url.
    return new URL(req.originalUrl ?? req.url ?? '/', 'http://agent.invalid');
  } catch {
    return undefined;
  }
}

/** The key a client's reads are budgeted under: its connection. */
function clientOf(req: Request): string {
  return `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`;
}

function fail(res: Response, status: number, error: string, field?: string): void {
  res.status(status).json(field === undefined ? { error } : { error, field });
}

function sendQueryError<T>(res: Response, r: QueryResult<T>): r is Extract<QueryResult<T>, { ok: true }> {
  if (r.ok) return true;
  fail(res, 400, r.message, r.field);
  return false;
}

export function createApp(options: AppOptions): express.Express {
  const { ctx, policy } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const isApi = req.path.startsWith('/api/') || req.path === '/metrics' || req.path === '/healthz';
    setSecurityHeaders(res, req.headers.host, !isApi);
    if (hostMissing(req)) {
      fail(res, 400, HOST_MISSING_MESSAGE, 'host');
      return;
    }
    if (!hostAllowed(policy, req.headers.host)) {
      fail(
        res,
        403,
        'Host header not allowed: open the dashboard at http://127.0.0.1 or localhost, or start the agent with --allow-origin',
        'host',
      );
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      fail(res, 405, `method ${req.method} not allowed`);
      return;
    }
    if ((req.url ?? '').length > MAX_QUERY_BYTES) {
      fail(res, 414, TARGET_TOO_LONG_MESSAGE);
      return;
    }
    next();
  });

  app.get('/healthz', (_req: Request, res: Response) => {
    if (ctx.fleet) {
      const problem = ctx.fleet.problem();
      const reasons = problem ? [problem.message] : [];
      res
        .status(reasons.length === 0 ? 200 : 503)
        .json({ status: reasons.length === 0 ? 'ok' : 'degraded', fleet: ctx.fleet.info(), ...(reasons.length ? { reasons } : {}) });
      return;
    }
    const newest = ctx.history.newestTs;
    const now = Date.now() / 1000;
    const lag = newest === undefined ? null : now - (newest + 1);
    const running = ctx.collectorStats() !== undefined;
    const fault = ctx.history.health().fault;
    const reasons: string[] = [];
    if (!running) reasons.push('collector: not running');
    if (lag === null) reasons.push('history: no second recorded yet');
    else if (lag >= (options.staleAfterS ?? 5)) reasons.push(`history: newest second recorded ${Math.round(lag)} s ago`);
    if (fault) reasons.push(`history: ${fault.message} (since ${new Date(fault.since * 1000).toISOString()}; the live view goes on)`);
    const ok = reasons.length === 0;
    res.status(ok ? 200 : 503).json({
      status: ok ? 'ok' : 'degraded',
      collector: running,
      newestFrame: newest ?? null,
      lagSeconds: lag,
      ...(ok ? {} : { reasons }),
    });
  });

  // Everything below is data: token required when configured.
  app.use(['/api', '/metrics'], (req: Request, res: Response, next: NextFunction) => {
    const url = requestUrl(req);
    if (!policy.tokens.accepts(url ? presentedToken(req, url) : undefined)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="blkheat"');
      fail(res, 401, 'missing or wrong token (send "Authorization: Bearer <token>" or ?token=)', 'token');
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  const params = (req: Request): URLSearchParams => requestUrl(req)?.searchParams ?? new URLSearchParams();

  app.get('/api/v1/disks', (req: Request, res: Response) => {
    if (!sendQueryError(res, parseNoQuery(params(req)))) return;
    res.json({ disks: ctx.disks() });
  });

  app.get('/api/v1/range', (req: Request, res: Response) => {
    const q = parseRangeQuery(params(req), ctx.disks());
    if (!sendQueryError(res, q)) return;
    if (ctx.fleet) {
      ctx.fleet.range(q.value, ANSWER_MAX_BYTES).then(
        (a) => res.type('application/json').send(`{${rangeAnswerFields(a)}}`),
        (e: unknown) => fail(res, 502, e instanceof Error ? e.message : String(e)),
      );
      return;
    }
    streamAnswer(res, options.reads, clientOf(req), rangeSource(answerCutter(ctx.history, q.value, ANSWER_MAX_BYTES)));
  });

  // A fleet server's ranked table (fleet/fleet-ranking.ts): Prometheus computes it, in a few queries.
  app.get('/api/v1/fleet/ranking', (req: Request, res: Response) => {
    const fleet = ctx.fleet;
    if (!fleet) {
      fail(res, 404, 'only a fleet server (blkheat fleet) ranks a fleet; this is an agent');
      return;
    }
    const q = parseRankingQuery(params(req));
    if (!sendQueryError(res, q)) return;
    fleet.ranked(q.value).then(
      (r) => res.json(r),
      (e: unknown) => fail(res, 502, e instanceof Error ? e.message : String(e)),
    );
  });

  // A fleet server's stuck I/O now (fleet/fleet-stuck.ts): from the agents' in-flight gauges, in two queries at most.
  app.get('/api/v1/fleet/stuck', (req: Request, res: Response) => {
    const fleet = ctx.fleet;
    if (!fleet) {
      fail(res, 404, "only a fleet server (blkheat fleet) lists a fleet's stuck I/O; this is an agent");
      return;
    }
    const q = parseStuckQuery(params(req));
    if (!sendQueryError(res, q)) return;
    fleet.stuck(q.value).then(
      (r) => res.json(r),
      (e: unknown) => fail(res, 502, e instanceof Error ? e.message : String(e)),
    );
  });

  app.get('/api/v1/samples', (req: Request, res: Response) => {
    const q = parseSamplesQuery(params(req), ctx.disks());
    if (!sendQueryError(res, q)) return;
    const v = q.value;
    const r = ctx.samples.query({ ...v, limit: v.limit ?? DEFAULT_SAMPLES_LIMIT });
    res.json(samplesAnswerFields(v, r));
  });

  app.get('/api/v1/snapshot', (req: Request, res: Response) => {
    const q = parseSnapshotQuery(params(req), ctx.disks());
    if (!sendQueryError(res, q)) return;
    const host = ctx.host.hostname.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'host';
    const attachment = (from: number, to: number): void => {
      res.setHeader('Content-Disposition', `attachment; filename="blkheat-${host}-${from}-${to}.json"`);
    };
    if (ctx.fleet) {
      // A fleet view exports what Prometheus has for the range, as its range answers do.
      const req = q.value;
      ctx.fleet.range(req, SNAPSHOT_MAX_BYTES).then(
        (a) => {
          const snap = snapshotOfAnswer(ctx, req, a);
          attachment(snap.from, snap.to);
          res.type('application/json').send(snap.json);
        },
        (e: unknown) => fail(res, 502, e instanceof Error ? e.message : String(e)),
      );
      return;
    }
    const cutter = answerCutter(ctx.history, q.value, SNAPSHOT_MAX_BYTES);
    attachment(cutter.from, cutter.to);
    streamAnswer(res, options.reads, clientOf(req), snapshotSource(ctx, q.value, cutter));
  });

  app.get('/metrics', (req: Request, res: Response) => {
    if (!sendQueryError(res, parseNoQuery(params(req)))) return;
    const exposition = buildMetrics(ctx, options.streamStats());
    // Prometheus asks for protobuf when it scrapes native histograms; text for everyone else,
    // and for it too when metrics.proto is not installed (logged once at start).
    const proto = wantsProtobuf(req.get('accept')) ? renderProtobuf(exposition) : undefined;
    res.vary('Accept');
    if (proto) res.type(PROTOBUF_CONTENT_TYPE).send(proto);
    else res.type(TEXT_CONTENT_TYPE).send(renderText(exposition));
  });

  app.use('/api', (_req: Request, res: Response) => fail(res, 404, 'no such API endpoint (see docs/protocol.md)'));

  // The dashboard: only files that were in the build at start.
  app.use((req: Request, res: Response) => {
    const raw = (req.url ?? '/').split('?')[0] ?? '/';
    const path = safeStaticPath(raw);
    if (path === undefined) {
      fail(res, 400, 'malformed or unsafe path');
      return;
    }
    if (!options.site) {
      if (path === '/' || path === '/index.html') {
        res.status(503).type('html').send(notBuiltPage(options.webRoot));
        return;
      }
      fail(res, 404, 'not found (the dashboard is not built)');
      return;
    }
    const file = options.site.lookup(path);
    if (!file) {
      fail(res, 404, 'not found');
      return;
    }
    sendStatic(req, res, file);
  });

  // Anything thrown while answering: a JSON 500 (or the client's error, e.g. a malformed body), never a stack trace.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err === 'object' && err !== null && 'status' in err && typeof err.status === 'number' ? err.status : 500;
    if (status >= 500) console.error(`http: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    if (res.headersSent) {
      res.end();
      return;
    }
    fail(res, status >= 400 && status < 600 ? status : 500, status >= 500 ? 'internal error' : 'bad request');
  });

  return app;
}

/**
 * The few calls of Prometheus' HTTP API the fleet view makes: instant queries (raw range
 * vectors: every scraped sample with its timestamp), range queries (increase() per step) and
 * the scrape targets. Every failure becomes a PrometheusError whose message says what was
 * asked of which server and what went wrong, for the log and the page.
 */
import { get as httpGet, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, get as httpsGet } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { PrometheusRequestStats } from '../server/context.js';
import type { PromHistogram } from './native-buckets.js';

export class PrometheusError extends Error {}

/** One series of a matrix answer: float samples or native histogram samples, [unix s, value]. */
export interface PromSeries {
  readonly metric: Readonly<Record<string, string>>;
  readonly values?: readonly (readonly [number, string])[];
  readonly histograms?: readonly (readonly [number, PromHistogram])[];
}

/** One element of a vector answer holding a native histogram (a sum of rates, say). */
export interface PromHistogramSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly histogram: readonly [number, PromHistogram];
}

/** One element of a vector answer: a float sample (an aggregation's result). */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: readonly [number, string];
}

export interface PromTarget {
  readonly labels: Readonly<Record<string, string>>;
  readonly scrapeUrl: string;
  readonly health: string;
  readonly lastError: string;
  /** e.g. "1s", "15s" (Prometheus 2.38+). */
  readonly scrapeInterval?: string;
}

/** One target's metadata of one metric (/api/v1/targets/metadata). */
export interface PromTargetMetadata {
  /** The target's labels (its own `instance`, whatever the samples carry). */
  readonly target: Readonly<Record<string, string>>;
  readonly help: string;
  readonly type: string;
}

const TIMEOUT_MS = 20_000;
/** Largest answer read: a range of every blkheat series of a big fleet is tens of MB; more is a mistake. */
export const MAX_ANSWER_BYTES = 256 * 1024 ** 2;

/** How the fleet server proves itself to Prometheus (or a proxy in front of it). */
export type PrometheusAuth = { readonly bearer: string } | { readonly user: string; readonly password: string };

export interface PrometheusApiOptions {
  readonly auth?: PrometheusAuth | undefined;
  /** PEM certificates trusted for an https URL besides the system's (a private CA). */
  readonly ca?: string | undefined;
  /** Most requests open at once (default MAX_CONCURRENT_REQUESTS); more wait their turn. */
  readonly maxConcurrent?: number | undefined;
}

/**
 * Requests to Prometheus open at once, at most: a page zooming across a big fleet must not fan
 * out into a burst that slows Prometheus for its other users (rules, alerts, Grafana).
 */
export const MAX_CONCURRENT_REQUESTS = 4;

export class PrometheusApi {
  private readonly base: string;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly agent: HttpsAgent | undefined;
  private readonly authNote: string;
  private readonly maxConcurrent: number;
  private inFlight = 0;
  private readonly queue: (() => void)[] = [];
  private requests = 0;
  private failed = 0;

  constructor(url: string, options: PrometheusApiOptions = {}) {
    this.maxConcurrent = options.maxConcurrent ?? MAX_CONCURRENT_REQUESTS;
    this.base = url.replace(/\/+$/, '');
    const auth = options.auth;
    this.headers = {
      accept: 'application/json',
      ...(auth === undefined
        ? {}
        : 'bearer' in auth
          ? { authorization: `Bearer ${auth.bearer}` }
          : { authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}` }),
    };
    this.authNote =
      auth === undefined
        ? 'none were sent: give --prometheus-bearer-token-file or --prometheus-basic-auth-file'
        : `the ${'bearer' in auth ? 'bearer token' : `basic auth of user ${auth.user}`} sent was refused`;
    this.agent = options.ca === undefined ? undefined : new HttpsAgent({ ca: [...rootCertificates, options.ca], keepAlive: true });
  }

  get url(): string {
    return this.base;
  }

  get stats(): PrometheusRequestStats {
    return { requests: this.requests, failed: this.failed, inFlight: this.inFlight, waiting: this.queue.length };
  }

  /** One request, when a slot is free (at most maxConcurrent open). */
  private async get(path: string, params: Record<string, string>): Promise<unknown> {
    if (this.inFlight >= this.maxConcurrent) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.inFlight++;
    this.requests++;
    try {
      return await this.getNow(path, params);
    } catch (e) {
      this.failed++;
      throw e;
    } finally {
      this.inFlight--;
      this.queue.shift()?.();
    }
  }

  private async getNow(path: string, params: Record<string, string>): Promise<unknown> {
    const qs = new URLSearchParams(params).toString();
    const where = `${this.base}${path}`;
    let res: { status: number; text: string };
    try {
      res = await getText(`${where}${qs ? `?${qs}` : ''}`, this.headers, this.agent);
    } catch (e) {
      const cause = e instanceof Error ? e.message : String(e);
      const hint = /certificate|self.signed|CERT_/i.test(cause) ? '; for a private CA give --prometheus-ca-file' : '';
      throw new PrometheusError(`Prometheus at ${this.base} is unreachable (${cause}${hint})`);
    }
    if (res.status === 401 || res.status === 403) {
      throw new PrometheusError(`Prometheus at ${this.base} asks for credentials (HTTP ${res.status}): ${this.authNote}`);
    }
    let body: { status?: string; data?: unknown; error?: string; errorType?: string };
    try {
      body = JSON.parse(res.text) as typeof body;
    } catch {
      throw new PrometheusError(`${where} answered ${res.status} with something that is not Prometheus' JSON: is ${this.base} Prometheus?`);
    }
    if (body.status !== 'success') {
      throw new PrometheusError(`${where}: ${body.errorType ?? `HTTP ${res.status}`}: ${body.error ?? 'no reason given'}`);
    }
    return body.data;
  }

  /** An instant query whose result is a matrix (a range vector selector: raw samples). */
  async rawSamples(selector: string, windowS: number, time: number): Promise<PromSeries[]> {
    const data = (await this.get('/api/v1/query', { query: `${selector}[${windowS}s]`, time: String(time) })) as {
      resultType: string;
      result: PromSeries[];
    };
    if (data.resultType !== 'matrix') throw new PrometheusError(`${selector}[${windowS}s] gave a ${data.resultType}, not a matrix`);
    return data.result;
  }

  /** An instant query whose result is a vector (aggregations: the fleet's ranking, its disks). */
  async instant(expr: string, time: number): Promise<PromSample[]> {
    const data = (await this.get('/api/v1/query', { query: expr, time: String(time) })) as { resultType: string; result: PromSample[] };
    if (data.resultType !== 'vector') throw new PrometheusError(`${expr} gave a ${data.resultType}, not a vector`);
    return data.result;
  }

  /** An instant query whose answer is native histograms (floats in it are left out). */
  async instantHistograms(expr: string, time: number): Promise<PromHistogramSample[]> {
    const data = (await this.get('/api/v1/query', { query: expr, time: String(time) })) as {
      resultType: string;
      result: (PromHistogramSample | PromSample)[];
    };
    if (data.resultType !== 'vector') throw new PrometheusError(`${expr} gave a ${data.resultType}, not a vector`);
    return data.result.filter((s): s is PromHistogramSample => 'histogram' in s);
  }

  /** A range query: the expression evaluated at start, start + step, … end. */
  async queryRange(expr: string, start: number, end: number, step: number): Promise<PromSeries[]> {
    const data = (await this.get('/api/v1/query_range', {
      query: expr,
      start: String(start),
      end: String(end),
      step: String(step),
    })) as { resultType: string; result: PromSeries[] };
    if (data.resultType !== 'matrix') throw new PrometheusError(`${expr} over a range gave a ${data.resultType}, not a matrix`);
    return data.result;
  }

  /**
   * The label sets of the series matching `match` that have samples in [start, end]: what the
   * series are, without reading a sample of them (discovery at a thousand hosts).
   */
  async series(match: string, start: number, end: number): Promise<Readonly<Record<string, string>>[]> {
    const data = await this.get('/api/v1/series', { 'match[]': match, start: String(start), end: String(end) });
    if (!Array.isArray(data)) throw new PrometheusError(`/api/v1/series?match[]=${match} gave no list`);
    return data as Readonly<Record<string, string>>[];
  }

  async targets(): Promise<PromTarget[]> {
    const data = (await this.get('/api/v1/targets', { state: 'active' })) as { activeTargets?: PromTarget[] };
    return data.activeTargets ?? [];
  }

  /** Each target's HELP and type of `metric`, as its last scrape gave them, with the target's own labels. */
  async targetMetadata(metric: string): Promise<PromTargetMetadata[]> {
    const data = await this.get('/api/v1/targets/metadata', { metric });
    if (!Array.isArray(data)) throw new PrometheusError(`/api/v1/targets/metadata?metric=${metric} gave no list`);
    return data as PromTargetMetadata[];
  }
}

/** GET `url`: its status and body, at most MAX_ANSWER_BYTES, within TIMEOUT_MS. */
function getText(
  url: string,
  headers: Readonly<Record<string, string>>,
  agent: HttpsAgent | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const onAnswer = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) req.destroy(new Error(`its answer is over ${MAX_ANSWER_BYTES / 1024 ** 2} MiB`));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const options = { headers, timeout: TIMEOUT_MS };
    const req = u.protocol === 'https:' ? httpsGet(u, agent ? { ...options, agent } : options, onAnswer) : httpGet(u, options, onAnswer);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
  });
}

/** "15s", "1m", "1m30s", "500ms" -> seconds; undefined for anything else. */
export function promDurationSeconds(text: string): number | undefined {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((acc, p) => acc + Number(p[1]) * (units[p[2] as string] as number), 0);
}

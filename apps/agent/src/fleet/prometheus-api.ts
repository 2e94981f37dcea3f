/**
 * The few calls of Prometheus' HTTP API the fleet view makes: instant queries (raw range
 * vectors: every scraped sample with its timestamp), range queries (increase() per step) and
 * the scrape targets. Every failure becomes a PrometheusError whose message says what was
 * asked of which server and what went wrong, for the log and the page.
 */
import type { PromHistogram } from './native-buckets.js';

export class PrometheusError extends Error {}

/** One series of a matrix answer: float samples or native histogram samples, [unix s, value]. */
export interface PromSeries {
  readonly metric: Readonly<Record<string, string>>;
  readonly values?: readonly (readonly [number, string])[];
  readonly histograms?: readonly (readonly [number, PromHistogram])[];
}

export interface PromTarget {
  readonly labels: Readonly<Record<string, string>>;
  readonly scrapeUrl: string;
  readonly health: string;
  readonly lastError: string;
  /** e.g. "1s", "15s" (Prometheus 2.38+). */
  readonly scrapeInterval?: string;
}

const TIMEOUT_MS = 20_000;

export class PrometheusApi {
  private readonly base: string;

  constructor(
    url: string,
    private readonly headers: Readonly<Record<string, string>> = {},
  ) {
    this.base = url.replace(/\/+$/, '');
  }

  get url(): string {
    return this.base;
  }

  private async get(path: string, params: Record<string, string>): Promise<unknown> {
    const qs = new URLSearchParams(params).toString();
    const where = `${this.base}${path}`;
    let res: Response;
    try {
      res = await fetch(`${where}${qs ? `?${qs}` : ''}`, { headers: this.headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (e) {
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : e instanceof Error ? e.message : String(e);
      throw new PrometheusError(`Prometheus at ${this.base} is unreachable (${cause})`);
    }
    let body: { status?: string; data?: unknown; error?: string; errorType?: string };
    try {
      body = (await res.json()) as typeof body;
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

  async targets(): Promise<PromTarget[]> {
    const data = (await this.get('/api/v1/targets', { state: 'active' })) as { activeTargets?: PromTarget[] };
    return data.activeTargets ?? [];
  }
}

/** "15s", "1m", "1m30s", "500ms" -> seconds; undefined for anything else. */
export function promDurationSeconds(text: string): number | undefined {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((acc, p) => acc + Number(p[1]) * (units[p[2] as string] as number), 0);
}

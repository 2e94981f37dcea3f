/**
 * Agent endpoints, relative to the page (so the dashboard also works behind a proxy under a
 * path prefix), with the token attached the way the agent expects: `?token=` on the
 * WebSocket URL (browsers cannot set headers on an upgrade), `Authorization: Bearer` on fetches.
 */
import { getToken } from './token.js';

export function apiUrl(path: string, params?: Record<string, string | number | undefined>): URL {
  const url = new URL(path.replace(/^\//, ''), document.baseURI);
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

export function streamUrl(): string {
  const url = apiUrl('api/v1/stream');
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const token = getToken();
  if (token) url.searchParams.set('token', token);
  return url.toString();
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** GET with the bearer token; throws HttpError with the agent's message on a non-2xx answer. */
export async function apiFetch(
  path: string,
  params?: Record<string, string | number | undefined>,
  signal?: AbortSignal,
): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(apiUrl(path, params), { headers, signal, cache: 'no-store', credentials: 'same-origin' });
  if (!res.ok) {
    let detail = res.statusText;
    try {
      const body = (await res.json()) as { message?: unknown; error?: unknown };
      const m = body.message ?? body.error;
      if (typeof m === 'string') detail = m;
    } catch {
      // not JSON: keep the status text
    }
    throw new HttpError(res.status, `${res.status} ${detail}`);
  }
  return res;
}

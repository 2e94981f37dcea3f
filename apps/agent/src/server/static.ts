/**
 * The built dashboard (apps/web/dist), read into memory once at start. Serving from a map of
 * known paths makes path traversal impossible by construction (a request can only name a
 * file that was listed at start), and keeps the page served after the agent dropped its
 * privileges, whatever the permissions of the checkout.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface StaticFile {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
  /** Content-hashed build output (vite's assets/) can be cached forever. */
  readonly immutable: boolean;
}

/** Largest dashboard build we load (a sanity bound, the real one is ~1 MB). */
const MAX_SITE_BYTES = 64 * 1024 * 1024;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

export class StaticSite {
  private constructor(
    private readonly files: ReadonlyMap<string, StaticFile>,
    readonly root: string,
  ) {}

  /**
   * Loads every regular, non-hidden file under `root`. Returns undefined when there is no
   * index.html (the dashboard is not built). Symlinks and dotfiles are skipped.
   */
  static load(root: string): StaticSite | undefined {
    const files = new Map<string, StaticFile>();
    let total = 0;
    const walk = (dir: string, urlPrefix: string): void => {
      let entries: string[];
      try {
        entries = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of entries) {
        if (name.startsWith('.')) continue;
        const path = join(dir, name);
        const st = lstatSync(path);
        if (st.isDirectory()) walk(path, `${urlPrefix}${name}/`);
        else if (st.isFile()) {
          total += st.size;
          if (total > MAX_SITE_BYTES) throw new Error(`${root}: more than ${MAX_SITE_BYTES} bytes, not a dashboard build`);
          const body = readFileSync(path);
          files.set(`${urlPrefix}${name}`, {
            body,
            type: TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream',
            etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
            immutable: urlPrefix.startsWith('/assets/'),
          });
        }
      }
    };
    walk(root, '/');
    if (!files.has('/index.html')) return undefined;
    return new StaticSite(files, root);
  }

  get size(): number {
    return this.files.size;
  }

  /** The file for a request path ("/" is index.html), or undefined. */
  lookup(pathname: string): StaticFile | undefined {
    return this.files.get(pathname === '/' ? '/index.html' : pathname);
  }
}

/**
 * Path of a static request, or undefined when it is suspicious: encoded or plain dot
 * segments, backslashes, NUL, or malformed percent-encoding. Such requests get a 400 so
 * they are visibly refused, not just "not found".
 */
export function safeStaticPath(rawPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  if (!decoded.startsWith('/') || decoded.includes('\0') || decoded.includes('\\')) return undefined;
  if (decoded.split('/').some((seg) => seg === '..' || seg === '.')) return undefined;
  if (/(^|\/)\.[^/]/.test(decoded)) return undefined; // dotfiles
  return decoded;
}

export function sendStatic(req: IncomingMessage, res: ServerResponse, file: StaticFile): void {
  res.setHeader('Content-Type', file.type);
  res.setHeader('ETag', file.etag);
  res.setHeader('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  if (req.headers['if-none-match'] === file.etag) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.setHeader('Content-Length', file.body.length);
  res.statusCode = 200;
  res.end(req.method === 'HEAD' ? undefined : file.body);
}

/** The page shown when apps/web/dist is missing. */
export function notBuiltPage(root: string): string {
  const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>blkheat: dashboard not built</title></head><body>',
    '<h1>blkheat: the dashboard is not built</h1>',
    `<p>The agent is running and its API answers, but it found no dashboard build in <code>${esc(root)}</code>.</p>`,
    '<p>Build it from the repository root with <code>node scripts/build.mjs</code> (or <code>sudo ./bootstrap setup</code>), then restart the agent.</p>',
    '</body></html>',
  ].join('\n');
}

/**
 * `blkheat fleet` flags: --prometheus URL, the bucket schema the agents export, and the same
 * listening rules as `serve` (parseListenFlags: loopback unless a token is given).
 */
import { readSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BucketSchema } from '@blkheat/shared-types';
import {
  fail,
  LISTEN_DEFAULTS,
  LISTEN_OPTIONS,
  parseCommandFlags,
  parseListenFlags,
  parseSchemaFlag,
  readFlagFile,
  readSecretLine,
  UsageError,
  type Listening,
} from '../service/flags.js';
import type { PrometheusAuth } from './prometheus-api.js';

export interface FleetOptions extends Listening {
  readonly prometheus: string;
  /** Credentials sent to Prometheus (--prometheus-bearer-token-file, --prometheus-basic-auth-file). */
  readonly prometheusAuth?: PrometheusAuth | undefined;
  /** PEM certificates trusted for an https Prometheus besides the system's (--prometheus-ca-file). */
  readonly prometheusCa?: string | undefined;
  readonly schema: BucketSchema;
  readonly webRoot: string;
}

export const FLEET_DEFAULT_PORT = 7361;

export const summary = 'fleet view: one dashboard for many agents, drawn from Prometheus native histograms (no BPF, no root)';

export function fleetHelpText(): string {
  return `Usage: blkheat fleet --prometheus URL [options]

Serves the blkheat dashboard for a whole fleet: one heat map row per host × disk, drawn
from the native histograms Prometheus scrapes from each host's agent (docs/fleet.md).
Loads no probes and needs no root. Each row links to its host's own agent dashboard
(from the scrape URL Prometheus has for that host) for per-I/O drill-down.

Options:
  --prometheus URL      Prometheus base URL, e.g. http://prometheus:9090 (required). Started
                        with --enable-feature=native-histograms, scraping the agents with
                        honor_labels: true. While it is unreachable or has no blkheat series,
                        the fleet view says so (page, /healthz) and keeps retrying.
  --prometheus-bearer-token-file F
                        send "Authorization: Bearer <first line of F>" to Prometheus (or a
                        proxy in front of it); F must be readable by its owner only (chmod 600)
  --prometheus-basic-auth-file F
                        send basic auth; the first line of F is USER:PASSWORD (chmod 600)
  --prometheus-ca-file F
                        trust the PEM certificates in F for an https --prometheus URL, besides
                        the system's (a private CA)
  --schema N            the agents' bucket schema (their --schema): 2 (default) or 3. A bucket
                        Prometheus returns that is not one of this schema's is an error.
  --host ADDR           address to listen on (default ${LISTEN_DEFAULTS.host}). Any address that is not
                        loopback needs --token or --token-file.
  --port N              TCP port (default ${FLEET_DEFAULT_PORT}; 0 picks a free one, printed at start)
  --token T             require this token on the API and the WebSocket, as for serve; open
                        the dashboard as http://HOST:PORT/#token=T
  --token-file F        read the token from the first line of file F
  --allow-origin O      also accept WebSocket connections from pages served by origin O; repeatable
  --web-root DIR        the built dashboard (default ${LISTEN_DEFAULTS.webRoot})
  -h, --help            show this help

Steps follow the zoom; the finest is Prometheus' scrape interval (a finer request is
answered at it, and the page shows the step it got). The live edge moves every second
with a 1 s scrape interval.`;
}

export function parseFleetArgs(argv: readonly string[]): FleetOptions | 'help' {
  const values = parseCommandFlags('fleet', argv, {
    prometheus: { type: 'string' },
    'prometheus-bearer-token-file': { type: 'string' },
    'prometheus-basic-auth-file': { type: 'string' },
    'prometheus-ca-file': { type: 'string' },
    schema: { type: 'string' },
    ...LISTEN_OPTIONS,
    'web-root': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (values.prometheus === undefined) throw new UsageError("--prometheus URL is required (see 'blkheat fleet --help')");
  let url: URL;
  try {
    url = new URL(values.prometheus);
  } catch {
    throw new UsageError(`--prometheus: "${values.prometheus}" is not a URL like http://prometheus:9090`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--prometheus: "${values.prometheus}" is not an http(s) URL`);
  if (url.search || url.hash) throw new UsageError('--prometheus: give the base URL, without ?query or #fragment');
  const listen = parseListenFlags({ ...values, port: values.port ?? String(FLEET_DEFAULT_PORT) });
  const bearerFile = values['prometheus-bearer-token-file'];
  const basicFile = values['prometheus-basic-auth-file'];
  if (bearerFile !== undefined && basicFile !== undefined)
    fail('--prometheus-bearer-token-file and --prometheus-basic-auth-file: give one, not both');
  let prometheusAuth: PrometheusAuth | undefined;
  if (bearerFile !== undefined) prometheusAuth = { bearer: readSecretLine('prometheus-bearer-token-file', bearerFile, MAX_SECRET_CHARS) };
  if (basicFile !== undefined) {
    const line = readSecretLine('prometheus-basic-auth-file', basicFile, MAX_SECRET_CHARS);
    const colon = line.indexOf(':');
    if (colon <= 0) fail(`--prometheus-basic-auth-file: the first line of ${basicFile} is not USER:PASSWORD`);
    prometheusAuth = { user: line.slice(0, colon), password: line.slice(colon + 1) };
  }
  const caFile = values['prometheus-ca-file'];
  if (caFile !== undefined && url.protocol !== 'https:') fail('--prometheus-ca-file: only for an https --prometheus URL');
  return {
    prometheus: url.toString().replace(/\/+$/, ''),
    ...(prometheusAuth ? { prometheusAuth } : {}),
    ...(caFile !== undefined ? { prometheusCa: readCaFile(caFile) } : {}),
    ...listen,
    schema: parseSchemaFlag(values.schema),
    webRoot: resolve(values['web-root'] ?? LISTEN_DEFAULTS.webRoot),
  };
}

/** Longest credential line taken from a file (a long JWT fits). */
const MAX_SECRET_CHARS = 8192;
/** Largest CA file read (a whole distribution bundle is ~220 KB). */
const MAX_CA_BYTES = 1024 * 1024;

/** The PEM text of --prometheus-ca-file: a regular file of at most MAX_CA_BYTES holding a certificate. */
function readCaFile(path: string): string {
  return readFlagFile('prometheus-ca-file', path, (fd, st) => {
    if (st.size > MAX_CA_BYTES) fail(`--prometheus-ca-file: ${path} is over ${MAX_CA_BYTES / 1024} KiB: not a CA file`);
    const buf = Buffer.alloc(st.size);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const pem = buf.toString('utf8', 0, n);
    if (!pem.includes('-----BEGIN CERTIFICATE-----'))
      fail(`--prometheus-ca-file: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    return pem;
  });
}

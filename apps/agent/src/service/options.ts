/**
 * `blkheat serve` flags: parsing, defaults, validation and --help. The rules `serve` shares
 * with the other commands (listening, --schema, UsageError) are in flags.ts. Every bad value
 * ends in one UsageError whose message says what was wrong and what is expected; nothing here
 * touches the system except reading --token-file.
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { type BucketSchema, CGROUPS_LISTED, DEV_RE, MAX_SPAN_SECONDS } from '@blkheat/shared-types';
import { DEFAULT_SAMPLE_BUDGET, MAX_SAMPLE_BUDGET } from '../collector/types.js';
import { MARKER_FILE } from './datadir.js';
import {
  fail,
  intArg,
  LISTEN_DEFAULTS,
  LISTEN_OPTIONS,
  MAX_TOKEN_CHARS,
  MIN_TOKEN_CHARS,
  parseCommandFlags,
  parseListenFlags,
  parseSchemaFlag,
  type Listening,
} from './flags.js';
import { formatDuration, formatSize, parseDuration, parseSize } from './units.js';

export interface ServeOptions extends Listening {
  readonly historySeconds: number;
  readonly maxHistoryBytes: number;
  /** Most bytes the sampled I/Os kept on disk may take (--max-sample-size). */
  readonly maxSampleBytes: number;
  /** Absolute (a relative --data-dir is resolved against the current directory). */
  readonly dataDir: string;
  /** --adopt-data-dir: keep history in an existing directory that is not blkheat's. */
  readonly adoptDataDir?: boolean;
  /** User to switch to after the probes are attached; undefined = stay as we are. */
  readonly user: string | undefined;
  readonly disks: readonly string[];
  readonly samplesBudget: number;
  /** --no-submit-wait: request-based I/O timed from its request only (CollectorOptions.submitPhase). Default true. */
  readonly submitPhase?: boolean;
  readonly webRoot: string;
  /** The agent's identity in a fleet (--instance; default the hostname): /metrics' instance label. */
  readonly instance: string;
  /** Latency bucket schema (--schema 2|3). */
  readonly schema: BucketSchema;
  /** Cgroups per disk exported with a latency histogram on /metrics (--metrics-cgroups; default 0). */
  readonly metricsCgroups?: number;
}

export const DEFAULTS = Object.freeze({
  ...LISTEN_DEFAULTS,
  historySeconds: 24 * 3600,
  maxHistoryBytes: 512 * 1024 ** 2,
  maxSampleBytes: 512 * 1024 ** 2,
  dataDir: '/var/lib/blkheat',
  user: 'nobody',
  samplesBudget: DEFAULT_SAMPLE_BUDGET,
});

const MIN_HISTORY_S = 600;
/** The frames keep the CGROUPS_LISTED busiest cgroups per disk, one of them "(other)". */
const MAX_METRICS_CGROUPS = CGROUPS_LISTED - 1;
const MIN_HISTORY_BYTES = 16 * 1024 ** 2;

export const summary = 'run the agent: live dashboard, WebSocket stream, history, REST API, Prometheus /metrics';

export function helpText(): string {
  return `Usage: blkheat serve [options]

Loads the block I/O latency probes, then serves the dashboard, the WebSocket stream
(/api/v1/stream), the REST API (/api/v1/...), /healthz and Prometheus /metrics.
Needs root to load the probes; then runs as --user with no capabilities.

Options:
  --host ADDR           address to listen on (default ${DEFAULTS.host}). Any address that is not
                        loopback needs --token or --token-file.
  --port N              TCP port (default ${DEFAULTS.port}; 0 picks a free one, printed at start)
  --token T             require this token on the API and the WebSocket: "Authorization:
                        Bearer T" or ?token=T; open the dashboard as http://HOST:PORT/#token=T.
                        ${MIN_TOKEN_CHARS} to ${MAX_TOKEN_CHARS} printable ASCII characters without spaces (e.g.
                        openssl rand -hex 16). Visible to other users in ps: prefer
                        --token-file. Default: no token (loopback only).
  --token-file F        read the token from the first line of file F (read before dropping
                        root). F must be readable by its owner only (chmod 600 F): a file
                        others may read or write is refused.
  --allow-origin O      also accept WebSocket connections from pages served by origin O
                        (e.g. https://grafana.example.org); repeatable. Default: only the
                        origin the dashboard is served from.
  --history D           how long to keep history: 1 s resolution for the last hour, 10 s and
                        60 s for all of D (default ${formatDuration(DEFAULTS.historySeconds)}; units s, m, h, d; ${formatDuration(MIN_HISTORY_S)} to ${formatDuration(MAX_SPAN_SECONDS)})
  --max-history-size S  most disk space the history files may take; the oldest go first
                        (default ${formatSize(DEFAULTS.maxHistoryBytes)}; units K, M, G; at least ${formatSize(MIN_HISTORY_BYTES)})
  --max-sample-size S   most disk space the sampled I/Os kept for drill-down may take, beside
                        the history (every sample for the last hour, thinned with age like
                        the history; about 70 bytes a sample); the oldest go first
                        (default ${formatSize(DEFAULTS.maxSampleBytes)}; at least ${formatSize(MIN_HISTORY_BYTES)})
  --data-dir DIR        where history is kept (default ${DEFAULTS.dataDir}; a relative DIR is
                        taken from the current directory, and the start-up log prints it).
                        Missing: created (and its missing parents, 0755), owned by --user.
                        Empty, or blkheat's (it holds ${MARKER_FILE}): used. Anything else,
                        or a symbolic link, is refused. blkheat changes the owner of nothing
                        it did not create: an existing DIR --user cannot write is refused.
  --adopt-data-dir      use an existing DIR that is not empty and not blkheat's; nothing in it
                        changes owner (--user must be able to write DIR: chown it yourself)
  --user U              user (name, or uid[:gid]) to switch to once the probes are attached
                        (default ${DEFAULTS.user} when started as root; "root" keeps root: not recommended)
  --disk NAME           trace only this disk (kernel name like vda, or MAJ:MIN); repeatable
                        (default: every disk)
  --samples-budget N    sampled I/O records per second kept by the kernel for drill-down
                        (default ${DEFAULTS.samplesBudget}; 0 = none)
  --metrics-cgroups N   also export, on /metrics, a device latency histogram per disk and
                        cgroup for the N cgroups with the most I/O on it (the rest summed as
                        "(other)"); each is a series a Prometheus keeps (default 0: none;
                        at most ${MAX_METRICS_CGROUPS})
  --no-submit-wait      time I/O from its request only: no submit wait (frozen queue, QoS,
                        waiting for a tag) or total, and no programs on each bio
  --schema N            latency bucket schema (Prometheus native-histogram scale: 2^N buckets
                        per power of two): 2 = 4 per octave, ~19% wide (default); 3 = 8 per
                        octave, ~9% wide (twice the rows, about twice the kernel memory).
                        A data directory keeps history of one schema.
  --instance NAME       this agent's name in a fleet: the instance label of every /metrics
                        series (scrape with honor_labels: true) and the host name the
                        dashboard shows (default: the hostname, ${hostname()})
  --web-root DIR        the built dashboard (default ${DEFAULTS.webRoot})
  -h, --help            show this help

Signals: SIGINT or SIGTERM detach the probes, flush history and close clients (1001).
Protocol and endpoints: docs/protocol.md; snapshot format: docs/snapshot.md.`;
}

/** Parses argv (without "serve"). Returns "help" for -h/--help. Throws UsageError. */
export function parseServeArgs(
  argv: readonly string[],
  env: { isRoot: boolean } = { isRoot: process.getuid?.() === 0 },
): ServeOptions | 'help' {
  const values = parseCommandFlags('serve', argv, {
    ...LISTEN_OPTIONS,
    history: { type: 'string' },
    'max-history-size': { type: 'string' },
    'max-sample-size': { type: 'string' },
    'data-dir': { type: 'string' },
    'adopt-data-dir': { type: 'boolean' },
    user: { type: 'string' },
    disk: { type: 'string', multiple: true },
    'samples-budget': { type: 'string' },
    'metrics-cgroups': { type: 'string' },
    'no-submit-wait': { type: 'boolean' },
    'web-root': { type: 'string' },
    schema: { type: 'string' },
    instance: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';

  const { host, port, token, allowOrigins } = parseListenFlags(values);

  let historySeconds: number = DEFAULTS.historySeconds;
  if (values.history !== undefined) {
    const h = parseDuration(values.history);
    if (h === undefined) fail(`--history: "${values.history}" is not a duration like 90m, 24h or 7d`);
    if (h < MIN_HISTORY_S || h > MAX_SPAN_SECONDS) {
      fail(`--history: ${formatDuration(h)} is outside ${formatDuration(MIN_HISTORY_S)}..${formatDuration(MAX_SPAN_SECONDS)}`);
    }
    historySeconds = h;
  }
  const maxHistoryBytes = sizeFlag('max-history-size', values['max-history-size'], DEFAULTS.maxHistoryBytes);
  const maxSampleBytes = sizeFlag('max-sample-size', values['max-sample-size'], DEFAULTS.maxSampleBytes);

  // resolve('') is the current directory: an empty value (an unset variable) must not make it the data directory.
  if (values['data-dir'] === '') fail(`--data-dir: empty; give a directory, e.g. --data-dir ${DEFAULTS.dataDir}`);
  const dataDir = resolve(values['data-dir'] ?? DEFAULTS.dataDir);
  let user: string | undefined;
  if (values.user !== undefined) {
    if (!/^([a-z_][a-z0-9_.-]{0,31}\$?|\d{1,10}(:\d{1,10})?)$/i.test(values.user))
      fail(`--user: "${values.user}" is not a user name or uid[:gid]`);
    if (!env.isRoot && values.user !== 'root') fail(`--user: switching to ${values.user} needs root, and the agent is not running as root`);
    user = values.user === 'root' ? undefined : values.user;
  } else if (env.isRoot) {
    user = DEFAULTS.user;
  }

  const disks = values.disk ?? [];
  for (const d of disks)
    if (!/^[A-Za-z0-9][A-Za-z0-9_.!+-]{0,63}$/.test(d) && !DEV_RE.test(d)) fail(`--disk: "${d}" is not a disk name or MAJ:MIN`);
  const samplesBudget =
    values['samples-budget'] === undefined
      ? DEFAULTS.samplesBudget
      : intArg('samples-budget', values['samples-budget'], 0, MAX_SAMPLE_BUDGET);

  const metricsCgroups =
    values['metrics-cgroups'] === undefined ? 0 : intArg('metrics-cgroups', values['metrics-cgroups'], 0, MAX_METRICS_CGROUPS);
  const schema = parseSchemaFlag(values.schema);
  const instance = values.instance ?? hostname();
  if (!/^[\x21-\x7e]{1,128}$/.test(instance)) fail(`--instance: "${instance}" must be 1 to 128 printable characters without spaces`);

  return {
    schema,
    instance,
    host,
    port,
    token,
    allowOrigins,
    historySeconds,
    maxHistoryBytes,
    maxSampleBytes,
    dataDir,
    adoptDataDir: values['adopt-data-dir'] ?? false,
    user,
    disks,
    samplesBudget,
    ...(metricsCgroups > 0 ? { metricsCgroups } : {}),
    ...(values['no-submit-wait'] ? { submitPhase: false } : {}),
    webRoot: resolve(values['web-root'] ?? DEFAULTS.webRoot),
  };
}

/** A size flag's bytes (its default when not given); at least MIN_HISTORY_BYTES. */
function sizeFlag(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const s = parseSize(value);
  if (s === undefined) fail(`--${flag}: "${value}" is not a size like 512M or 2G`);
  if (s < MIN_HISTORY_BYTES) fail(`--${flag}: at least ${formatSize(MIN_HISTORY_BYTES)}`);
  return s;
}

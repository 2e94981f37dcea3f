/**
 * What the commands' flags share: the one UsageError, the listening flags of `serve` and
 * `fleet` (a token for anything wider than loopback), --schema, whole-number flags, and
 * parseArgs with the same strictness and error wording. Nothing here touches the system except
 * reading secrets' files (--token-file, and fleet's credentials for Prometheus).
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { type BucketSchema, BUCKET_SCHEMA, schemaOfScale } from '@blkheat/shared-types';
import { isLoopbackHost, normalizeOrigin } from '../server/security.js';

/** A bad command line: the message says what was wrong and what is expected (exit code 2). */
export class UsageError extends Error {}

/** Where the dashboard is served and where its build is looked for, unless told otherwise. */
export const LISTEN_DEFAULTS = Object.freeze({
  host: '127.0.0.1',
  port: 7360,
  webRoot: fileURLToPath(new URL('../../../web/dist/', import.meta.url)),
});

export const MIN_TOKEN_CHARS = 16;
/** Longest token taken (openssl rand -hex 32 is 64): it travels in every request's header or URL. */
export const MAX_TOKEN_CHARS = 256;

/** The flags a command takes, as parseArgs reads them. */
type FlagSpecs = NonNullable<ParseArgsConfig['options']>;
/** The values parseCommandFlags returns for `O`: parseArgs' own typing of a strict parse. */
type ParsedFlags<O extends FlagSpecs> = ReturnType<
  typeof parseArgs<{ args: string[]; strict: true; allowPositionals: false; options: O }>
>['values'];

export function fail(message: string): never {
  throw new UsageError(message);
}

/**
 * argv parsed strictly (no positionals, no unknown flags) against `options`; parseArgs' own
 * complaint becomes a one-line UsageError pointing at `blkheat <command> --help`.
 */
export function parseCommandFlags<O extends FlagSpecs>(command: string, argv: readonly string[], options: O): ParsedFlags<O> {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), strict: true, allowPositionals: false, options }).values;
  } catch (e) {
    fail(e instanceof Error ? e.message.split('\n')[0] + ` (see 'blkheat ${command} --help')` : String(e));
  }
}

/**
 * argv with a value that starts with "-" and a digit joined to the flag before it when that flag
 * takes a value ("-c -1" becomes "--count=-1"): parseArgs would take "-1" for a flag and call the
 * line ambiguous, where the flag's own check says what is wrong with the value. No flag is a digit.
 */
function joinNegativeValues(argv: readonly string[], options: FlagSpecs): string[] {
  const takesValue = new Map<string, string>();
  for (const [name, spec] of Object.entries(options)) {
    if (spec.type !== 'string') continue;
    takesValue.set(`--${name}`, name);
    if (spec.short) takesValue.set(`-${spec.short}`, name);
  }
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = takesValue.get(argv[i] as string);
    const next = argv[i + 1];
    if (name !== undefined && next !== undefined && /^-\d/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(argv[i] as string);
    }
  }
  return out;
}

/** Longest whole number intArg reads (15 digits: every one is exact as a JS number). */
const MAX_INT_ARG = 999_999_999_999_999;

/** --name N: a whole number in min..max (a max of MAX_INT_ARG or more reads as "no upper limit"). */
export function intArg(name: string, text: string, min: number, max: number): number {
  if (!/^\d{1,15}$/.test(text)) fail(`--${name}: expected a whole number, got "${text}"`);
  const n = Number(text);
  if (max >= MAX_INT_ARG && n < min) fail(`--${name}: must be at least ${min}, got ${n}`);
  if (n < min || n > max) fail(`--${name}: ${n} is outside ${min}..${max}`);
  return n;
}

/** parseArgs options of the listening flags `serve` and `fleet` share (read by parseListenFlags). */
export const LISTEN_OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  'allow-origin': { type: 'string', multiple: true },
} as const;

/** The listening flags `serve` and `fleet` share, with the same rules: a token for anything wider than loopback. */
export interface ListenFlags {
  readonly host?: string | undefined;
  readonly port?: string | undefined;
  readonly token?: string | undefined;
  readonly 'token-file'?: string | undefined;
  readonly 'allow-origin'?: string[] | undefined;
}

export interface Listening {
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
  readonly allowOrigins: readonly string[];
}

export function parseListenFlags(values: ListenFlags): Listening {
  const host = values.host ?? LISTEN_DEFAULTS.host;
  if (!(isIP(host) || /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(host))) fail(`--host: "${host}" is not an IP address or host name`);
  const port = values.port === undefined ? LISTEN_DEFAULTS.port : intArg('port', values.port, 0, 65535);

  if (values.token !== undefined && values['token-file'] !== undefined) fail('--token and --token-file: give one, not both');
  let token = values.token;
  if (values['token-file'] !== undefined) token = readSecretLine('token-file', values['token-file']);
  if (token !== undefined) {
    if (token.length < MIN_TOKEN_CHARS) fail(`token: at least ${MIN_TOKEN_CHARS} characters, please (e.g. openssl rand -hex 16)`);
    if (token.length > MAX_TOKEN_CHARS) fail(`token: at most ${MAX_TOKEN_CHARS} characters (e.g. openssl rand -hex 32 gives 64)`);
    if (!/^[\x21-\x7e]+$/.test(token)) fail('token: only printable ASCII without spaces');
  }
  const loopback = isLoopbackHost(host.includes(':') ? `[${host}]` : host);
  if (!loopback && token === undefined) {
    fail(
      `refusing to listen on ${host} without a token: anyone who can reach it would see this machine's I/O. ` +
        'Add --token-file FILE (or --token T), or listen on 127.0.0.1 and use an SSH tunnel.',
    );
  }

  const allowOrigins: string[] = [];
  for (const o of values['allow-origin'] ?? []) {
    const n = normalizeOrigin(o);
    if (!n) fail(`--allow-origin: "${o}" is not an origin like https://example.org or http://host:8080`);
    allowOrigins.push(n);
  }

  return { host, port, token, allowOrigins };
}

/** --schema N (serve and record): 2 or 3; absent = BUCKET_SCHEMA. Throws UsageError. */
export function parseSchemaFlag(text: string | undefined): BucketSchema {
  if (text === undefined) return BUCKET_SCHEMA;
  const schema = /^\d$/.test(text) ? schemaOfScale(Number(text)) : undefined;
  if (!schema) fail(`--schema: expected 2 (4 buckets per octave) or 3 (8 per octave), got "${text}"`);
  return schema;
}

/**
 * Runs `read` on the regular file at `path` given to --flag. The file is opened once
 * (non-blocking, so a FIFO cannot hang start-up) and checked through that descriptor, so what is
 * checked is what is read; any failure is a UsageError naming the flag and the file.
 */
export function readFlagFile<T>(flag: string, path: string, read: (fd: number, st: Stats) => T): T {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    fail(`--${flag}: cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) fail(`--${flag}: ${path} is not a regular file`);
    return read(fd, st);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    fail(`--${flag}: cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The first line of --token-file (or another secret's file: `flag` names it in messages). Like
 * ssh with a private key, a file that others may read or write is refused: its secret would be
 * theirs too. At most maxChars + 2 bytes are read, so a wrong path (a log, a disk image) is
 * refused after one small read.
 */
export function readSecretLine(flag: string, path: string, maxChars = MAX_TOKEN_CHARS): string {
  return readFlagFile(flag, path, (fd, st) => {
    const exposed = exposure(st.mode);
    if (exposed) {
      const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
      fail(`--${flag}: ${path} is ${exposed} (mode ${mode}), so the secret in it is not secret: chmod 600 ${shellWord(path)}`);
    }
    const buf = Buffer.alloc(maxChars + 2);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.toString('latin1', 0, n);
    const end = text.search(/\r?\n/);
    // No line end in what was read of a longer file: its first line is longer than any secret taken.
    if (end < 0 && n === buf.length && st.size > n) {
      fail(`--${flag}: the first line of ${path} is longer than ${maxChars} characters (the most taken)`);
    }
    const line = (end < 0 ? text : text.slice(0, end)).trim();
    if (line === '') fail(`--${flag}: ${path} is empty`);
    return line;
  });
}

/** Who besides the owner may read or write a file of this mode ("readable by others"), or undefined. */
function exposure(mode: number): string | undefined {
  const who = (bits: number): string => [bits & 0o070 ? 'its group' : '', bits & 0o007 ? 'others' : ''].filter(Boolean).join(' and ');
  const readers = who(mode & 0o044);
  const writers = who(mode & 0o022);
  const parts = [readers && `readable by ${readers}`, writers && `writable by ${writers}`].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/** A path as one shell word, for a command the user may paste. */
function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replace(/'/g, "'\\''")}'`;
}

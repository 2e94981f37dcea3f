/**
 * The data directory (--data-dir), and what the agent may do to it. The agent starts as root:
 * whatever it gives to --user, an unprivileged user gains. So it keeps history only in a
 * directory that is its own, and gives --user nothing but what it creates itself.
 *
 * Which directory it uses:
 *  - a missing one: created, its missing parents 0755 and root's, itself 0700 and --user's;
 *  - an empty one (or one holding only lost+found: a fresh filesystem): it holds nothing anyone
 *    could lose, so it becomes blkheat's; given to --user when root owns it, else left as it is;
 *  - blkheat's own: it holds .blkheat-data-dir, or (left by versions before that marker) only
 *    history/ and agent.pid;
 *  - anything else is refused, unless --adopt-data-dir says to use it anyway; a symbolic link
 *    is always refused (its target is what would be taken over; pass the target instead).
 *
 * Owners: every entry the agent creates is --user's from its creation, set through the
 * descriptor it was created with: the directory (when created, or empty and root's), the
 * marker, agent.pid (lock.ts) and history/. Segment files are created only after privileges are
 * dropped, so they are --user's by construction. Nothing that already exists changes owner
 * (chowning entries by their names instead would hand over whatever wears those names, a hard
 * link to a system file included): an existing directory --user cannot write is refused, with
 * the chown that fixes it (checkDataDirWritable).
 */
import { closeSync, lstatSync, readdirSync, readlinkSync, realpathSync, writeSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { chownDir, createDataDirPath, createOwnedDir, createOwnedFile, DataDirError, pathError, removeCreated } from './datadir-fs.js';
import { checkDataDirWritable } from './datadir-probe.js';
import type { TargetUser } from './drop-root.js';
import { LOCK_FILE } from './lock.js';

export { DataDirError } from './datadir-fs.js';

/** The marker: a directory holding it is blkheat's. */
export const MARKER_FILE = '.blkheat-data-dir';
export const HISTORY_DIR = 'history';
const MARKER_TEXT =
  "This is blkheat's data directory (blkheat serve --data-dir): its history/ and agent.pid.\n" +
  'blkheat uses a directory holding this file as its own. Put nothing else here.\n';
/** Entries that do not make a directory non-empty: a fresh filesystem's lost+found. */
const IGNORED = new Set(['lost+found']);

/** How the directory became the agent's: created now, was empty, blkheat's (marked or from an older version), adopted. */
export type DataDirKind = 'created' | 'empty' | 'blkheat' | 'legacy' | 'adopted';

export interface PreparedDataDir {
  readonly path: string;
  readonly kind: DataDirKind;
  /** The history store's directory: exists, and --user can write it. */
  readonly historyDir: string;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function symlinkRefusal(dataDir: string): DataDirError {
  let target: string;
  try {
    target = realpathSync(dataDir);
  } catch {
    target = readlinkSync(dataDir);
  }
  return new DataDirError(
    `--data-dir ${dataDir} is a symbolic link (to ${target}): blkheat does not follow it, so that it never takes over what it points to. ` +
      `Fix: pass the directory itself, --data-dir ${target}.`,
  );
}

function listed(names: readonly string[]): string {
  const shown = names.slice(0, 3).join(', ');
  return names.length > 3 ? `${shown} and ${names.length - 3} more` : shown;
}

/** What is at `dataDir` now: 'missing' or how it would be used; throws a DataDirError refusing it. */
export function classifyDataDir(dataDir: string, adopt: boolean): 'missing' | Exclude<DataDirKind, 'created'> {
  let st: Stats;
  try {
    st = lstatSync(dataDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw pathError(dataDir, 'reaching', dataDir, e);
  }
  if (st.isSymbolicLink()) throw symlinkRefusal(dataDir);
  if (!st.isDirectory()) {
    throw new DataDirError(
      `--data-dir ${dataDir} exists and is not a directory. Fix: pass a directory that is missing (blkheat creates it), empty or blkheat's.`,
    );
  }
  let names: string[];
  try {
    names = readdirSync(dataDir).filter((n) => !IGNORED.has(n));
  } catch (e) {
    throw pathError(dataDir, 'listing', dataDir, e);
  }
  if (names.length === 0) return 'empty';
  if (lstatOrUndefined(join(dataDir, MARKER_FILE))?.isFile()) return 'blkheat';
  const legacy = names.every(
    (n) =>
      (n === HISTORY_DIR && lstatOrUndefined(join(dataDir, n))?.isDirectory()) ||
      (n === LOCK_FILE && lstatOrUndefined(join(dataDir, n))?.isFile()),
  );
  if (legacy) return 'legacy';
  if (adopt) return 'adopted';
  throw new DataDirError(
    `--data-dir ${dataDir} is not empty and is not blkheat's: it holds ${listed(names)} and no ${MARKER_FILE}, and blkheat does not take over a directory it did not create. ` +
      `Fix: pass a --data-dir that is missing (blkheat creates it) or empty, or add --adopt-data-dir to keep history in it anyway (nothing in it changes owner; ${MARKER_FILE}, agent.pid and history/ are added).`,
  );
}

/** history/ as found: absent, or a real directory (a link or a file there is refused). */
function historyExists(dataDir: string, historyDir: string): boolean {
  const st = lstatOrUndefined(historyDir);
  if (!st) return false;
  if (st.isDirectory()) return true;
  const what = st.isSymbolicLink() ? 'a symbolic link (blkheat follows none in its data directory)' : 'not a directory';
  throw new DataDirError(`--data-dir ${dataDir}: ${historyDir} is ${what}. Fix: remove it, or pass another --data-dir.`);
}

/** Marks the directory as blkheat's. A full disk leaves the marker empty or absent: history and agent.pid still mark it. */
function writeMarker(dataDir: string, owner: TargetUser | undefined, log: (line: string) => void): void {
  const path = join(dataDir, MARKER_FILE);
  let fd: number;
  try {
    fd = createOwnedFile(path, 0o644, owner);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      log(`serve: could not create ${path} (${code}); the directory is still taken as blkheat's next time by its history/`);
      return;
    }
    throw pathError(dataDir, 'creating', path, e);
  }
  try {
    writeSync(fd, MARKER_TEXT);
  } catch {
    // Full: an empty marker marks the directory as well.
  } finally {
    closeSync(fd);
  }
}

function describe(kind: DataDirKind, user: TargetUser | undefined, taken: boolean): string {
  const whose = user ? ` for ${user.name}` : '';
  switch (kind) {
    case 'created':
      return `created${whose}`;
    case 'empty':
      return taken ? `was empty: now blkheat's, given to ${user?.name ?? 'this user'}` : `was empty: now blkheat's, its owner unchanged`;
    case 'blkheat':
      return "blkheat's";
    case 'legacy':
      return `blkheat's, from a version before ${MARKER_FILE}: marked now`;
    case 'adopted':
      return `not blkheat's, used as --adopt-data-dir says: nothing in it changed owner${user ? `; what blkheat adds is ${user.name}'s` : ''}`;
  }
}

/**
 * Makes `dataDir` ready for the agent, before anything else is written there: created or
 * recognised (see the top of this file), checked writable by `user`, marked, with a history/.
 * Throws a DataDirError (path, errno, fix) on anything it refuses; a refusal leaves the path as
 * it was found.
 */
export function prepareDataDir(
  dataDir: string,
  user: TargetUser | undefined,
  adopt: boolean,
  log: (line: string) => void,
): PreparedDataDir {
  const found = classifyDataDir(dataDir, adopt);
  const kind: DataDirKind = found === 'missing' ? 'created' : found;
  let undo = (): void => {};
  let taken = false;
  if (found === 'missing') {
    const created = createDataDirPath(dataDir, user);
    undo = () => removeCreated(created);
  } else if (found === 'empty' && user) {
    const before = lstatSync(dataDir);
    // Root's and empty: giving it away costs no one anything. Another user's stays theirs.
    if (before.uid === process.getuid?.()) {
      chownDir(dataDir, dataDir, user);
      taken = true;
      undo = () => chownDir(dataDir, dataDir, { uid: before.uid, gid: before.gid });
    }
  }
  const historyDir = join(dataDir, HISTORY_DIR);
  const hasHistory = historyExists(dataDir, historyDir);
  try {
    checkDataDirWritable(dataDir, user, log, {
      alsoWritable: hasHistory ? [historyDir] : [],
      ownContents: kind === 'created' || kind === 'blkheat' || kind === 'legacy',
    });
  } catch (e) {
    undo();
    throw e;
  }
  if (kind !== 'blkheat') writeMarker(dataDir, user, log);
  if (!hasHistory) createOwnedDir(dataDir, historyDir, 0o700, user);
  log(`serve: data directory ${dataDir} (${describe(kind, user, taken)})`);
  return { path: dataDir, kind, historyDir };
}

/**
 * The host's I/O pressure, from the kernel's PSI (/proc/pressure/io): how long some task ("some")
 * or every non-idle task ("full") was stalled waiting for I/O. It sees waits no block tracepoint
 * can: bios held by blk-throttle before block_bio_queue, page-cache and filesystem waits.
 *
 * The file's `total=` counters are µs of stall since boot. Read once per tick of the collector,
 * the difference from the previous read is the stall in between: measured now, so it goes with
 * the newest second the tick emits (the rule of the in-flight state). The reads are about a
 * second apart; the stall is scaled to exactly one second by the monotonic time between them (so
 * a timer a few ms late does not put more than a second of stall into a second) and clamped to
 * it. No stall is given for the first read (nothing to take it from), for reads more than
 * MAX_INTERVAL_NS apart (the tick ran late: it cannot say which second stalled; up to that, a
 * tick that closes two seconds puts their mean on the newer one), or when a counter went back
 * (reset or wrapped). A kernel without PSI, or with PSI off at boot (psi=0: no file, or a read
 * that fails with EOPNOTSUPP), gives nothing, said once in the log; a file that cannot be read
 * or parsed is a warning, once, and gives nothing for that second.
 */
import { readFileSync } from 'node:fs';
import { type IoPressure, maxStallMicros } from '@blkheat/shared-types';
import { errorText } from '../errors.js';
import { monotonicNs } from './clock.js';

export const PRESSURE_PATH = '/proc/pressure/io';

/** Reads further apart than this give no stall: it cannot be put on one second. */
export const MAX_INTERVAL_NS = 2_000_000_000n;

/** The file's two `total=` counters: µs of stall since boot. */
export interface PressureTotals {
  readonly some: number;
  readonly full: number;
}

/**
 * The `total=` counters of the text of a pressure file (lines like `some avg10=0.12 avg60=0.05
 * avg300=0.01 total=123456`, then `full …`), or what is wrong with it. Lines of other kinds are
 * ignored (a later kernel may add some); `some` and `full` must each be there once.
 */
export function parsePressure(text: string): PressureTotals | { readonly problem: string } {
  const totals = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [kind, ...fields] = line.trim().split(/\s+/);
    if (kind !== 'some' && kind !== 'full') continue;
    if (totals.has(kind)) return { problem: `two "${kind}" lines` };
    const total = fields.find((f) => f.startsWith('total='))?.slice('total='.length);
    if (total === undefined || !/^\d{1,16}$/.test(total) || !Number.isSafeInteger(Number(total)))
      return { problem: `no whole "total=" on the "${kind}" line` };
    totals.set(kind, Number(total));
  }
  const some = totals.get('some');
  const full = totals.get('full');
  if (some === undefined || full === undefined) return { problem: `no "${some === undefined ? 'some' : 'full'}" line` };
  return { some, full };
}

export interface PressureOptions {
  /** The file to read (default PRESSURE_PATH). */
  readonly path?: string;
  /** CLOCK_MONOTONIC in ns (default process.hrtime). */
  readonly now?: () => bigint;
  /** Said once when the kernel has no pressure to read. */
  readonly log?: (line: string) => void;
  /** Said once when the file cannot be read or parsed. */
  readonly warn?: (message: string) => void;
}

/** One reader per collector: each read() gives the stall since the one before, per second. */
export class PressureReader {
  private readonly path: string;
  private readonly now: () => bigint;
  private last: { readonly totals: PressureTotals; readonly at: bigint } | undefined;
  /** The kernel has no pressure to read: never read again. */
  private off = false;
  private warned = false;

  constructor(private readonly options: PressureOptions = {}) {
    this.path = options.path ?? PRESSURE_PATH;
    this.now = options.now ?? monotonicNs;
  }

  /** Whether the kernel turned out to have no pressure file (nothing more will be read). */
  get unavailable(): boolean {
    return this.off;
  }

  /** The stall since the previous read, scaled to one second; undefined when there is none to give (see the file's header). Never throws. */
  read(): IoPressure | undefined {
    if (this.off) return undefined;
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EOPNOTSUPP') {
        this.off = true;
        const why = code === 'ENOENT' ? 'no such file: a kernel without PSI, or PSI off at boot' : 'PSI is off (psi=0 at boot)';
        this.options.log?.(`no I/O pressure (${this.path}: ${why}): frames carry no psi`);
      } else this.problem(`cannot read ${this.path} (${errorText(err)})`);
      return undefined;
    }
    const at = this.now();
    const totals = parsePressure(text);
    if ('problem' in totals) {
      this.problem(`${this.path} is not as expected (${totals.problem})`);
      return undefined;
    }
    const prev = this.last;
    this.last = { totals, at };
    if (!prev) return undefined;
    const elapsed = at - prev.at;
    if (elapsed <= 0n || elapsed > MAX_INTERVAL_NS) return undefined;
    const some = totals.some - prev.totals.some;
    const full = totals.full - prev.totals.full;
    if (some < 0 || full < 0) return undefined; // a counter went back: reset or wrapped
    return { some_us: perSecond(some, elapsed), full_us: perSecond(full, elapsed) };
  }

  /** Gives nothing this time and forgets the previous read (the next delta would span the gap). */
  private problem(message: string): void {
    this.last = undefined;
    if (this.warned) return;
    this.warned = true;
    this.options.warn?.(`${message}: no I/O pressure in the seconds it cannot be read (said once)`);
  }
}

/** µs of stall over `elapsedNs`, scaled to one second, whole and at most a second. */
function perSecond(us: number, elapsedNs: bigint): number {
  return Math.min(maxStallMicros(1), Math.round((us * 1e9) / Number(elapsedNs)));
}

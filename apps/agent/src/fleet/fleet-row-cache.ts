/**
 * The big fleet's fleet row, column by column, kept once final (issue 30: "results cached,
 * memory bounded"). The fleet row is `sum by (class) (increase(m[step]))` evaluated at each
 * column's end (fleet-frames.ts): Prometheus reads every host's samples of the range for it, a
 * second per five minutes of range at a thousand hosts, while its answer is a few series. A
 * range query evaluates at start + k × step, so a column's value is the same whether it was
 * asked alone or inside a longer range; once every scrape in its window is stored
 * (fleet-frames.ts finalAfter), it never changes, and is asked of Prometheus once:
 *  - a range asks Prometheus only for the runs of its columns not kept (the newest ones, mostly);
 *  - the fleet server's live loop keeps the page's default window warm (service.ts), a column
 *    or two per scrape, so a page opening on the fleet finds it kept.
 * Bounded by the numbers it holds (MAX_NUMBERS: ~8 bytes each), oldest kept first out.
 */
import { alignDown, FLEET_ROW_ID, type SparseHist } from '@blkheat/shared-types';
import { NumberBoundedMap } from './number-bounded-map.js';

/** One series' counts in a column: device and queue latency. */
export interface Cell {
  d?: SparseHist;
  q?: SparseHist;
}

/** Where per-column counts go (fleet-frames.ts ColumnBuilder, or a RowRecorder in front of it). */
export interface ColumnSink {
  /** The seconds [from, to) were scraped: their columns exist, empty or not. */
  covered(from: number, to: number): void;
  add(ts: number, dev: string, cls: string, cell: Cell): void;
}

/** Columns [from, to) at step. */
export interface ColumnRange {
  readonly from: number;
  readonly to: number;
  readonly step: number;
}

/** One class's counts in a fleet row column. */
export interface RowCell extends Cell {
  readonly cls: string;
}

/** A final column: whether any scrape covered it (else "not recorded"), and its cells. */
export interface RowColumn {
  readonly covered: boolean;
  readonly cells: readonly RowCell[];
  /**
   * Asked without queue latency (a range that did not name it, protocol 7): its cells have no
   * `q`, which is not "no queue latency". It serves only asks without it, and an ask with queue
   * latency replaces it.
   */
  readonly deviceOnly?: true;
}

/** Numbers (bucket indexes and counts) kept at most: ~32 MB. */
export const MAX_NUMBERS = 4_000_000;

function numbersOf(c: RowColumn): number {
  let n = 2;
  for (const cell of c.cells) n += 2 + (cell.d?.length ?? 0) + (cell.q?.length ?? 0);
  return n;
}

export class FleetRowCache {
  /** `${step}:${ts}` → column, oldest first. */
  private readonly columns: NumberBoundedMap<RowColumn>;
  /** Per step: columns answered from here, and asked of Prometheus, since start. */
  private readonly counts = new Map<number, { kept: number; asked: number }>();

  constructor(maxNumbers = MAX_NUMBERS) {
    this.columns = new NumberBoundedMap(maxNumbers, numbersOf);
  }

  /** The kept column at `ts`; with `queue` (the default), only one that holds queue latency. */
  get(step: number, ts: number, queue = true): RowColumn | undefined {
    const c = this.columns.get(`${step}:${ts}`);
    return c && queue && c.deviceOnly ? undefined : c;
  }

  /** Keeps a final column (a newer answer of the same column replaces it). */
  put(step: number, ts: number, column: RowColumn): void {
    this.columns.set(`${step}:${ts}`, column);
  }

  /** Columns of `step` answered from here (kept) and asked of Prometheus (asked), since start. */
  countsOf(step: number): { kept: number; asked: number } {
    return { ...(this.counts.get(step) ?? { kept: 0, asked: 0 }) };
  }

  /** Counts a column of `step` answered from here (true) or asked of Prometheus. */
  count(step: number, kept: boolean): void {
    const c = this.counts.get(step) ?? { kept: 0, asked: 0 };
    if (kept) c.kept++;
    else c.asked++;
    this.counts.set(step, c);
  }

  /** Whether a column of [from, to) at `step` is not kept with queue latency. */
  lacks(step: number, from: number, to: number): boolean {
    for (let ts = from; ts < to; ts += step) if (!this.get(step, ts)) return true;
    return false;
  }

  /** Over three quarters of its bound: the warm loop adds no more (NumberBoundedMap.nearlyFull). */
  get nearlyFull(): boolean {
    return this.columns.nearlyFull;
  }

  get size(): { columns: number; numbers: number } {
    return { columns: this.columns.count, numbers: this.columns.numbers };
  }
}

/** At most this many runs of columns not kept are asked for apart; more are asked as one. */
const MAX_ROW_RUNS = 4;

/** The fleet row's counts of one run of columns as Prometheus gave them, passed on to `b` and noted. */
class RowRecorder implements ColumnSink {
  readonly coveredColumns = new Set<number>();
  readonly cells = new Map<number, RowCell[]>();

  constructor(
    private readonly b: ColumnSink,
    private readonly step: number,
  ) {}

  covered(from: number, to: number): void {
    this.b.covered(from, to);
    for (let ts = alignDown(from, this.step); ts < to; ts += this.step) this.coveredColumns.add(ts);
  }

  add(ts: number, dev: string, cls: string, cell: Cell): void {
    this.b.add(ts, dev, cls, cell);
    const list = this.cells.get(ts) ?? [];
    list.push({ cls, ...cell });
    this.cells.set(ts, list);
  }
}

/**
 * The fleet row of `range` into `b`: the columns `cache` keeps from there, the others asked of
 * Prometheus by `ask` (in at most MAX_ROW_RUNS runs), and those of them that end by
 * `finalBefore` kept. `queue`: whether `ask` asks queue latency too (a column kept without it
 * serves only an ask without it).
 */
export async function rowFromCache(
  cache: FleetRowCache,
  range: ColumnRange,
  b: ColumnSink,
  finalBefore: number,
  ask: (range: ColumnRange, sink: ColumnSink) => Promise<void>,
  queue = true,
): Promise<void> {
  const { from, to, step } = range;
  let runs: [number, number][] = [];
  for (let ts = from; ts < to; ts += step) {
    if (cache.get(step, ts, queue)) continue;
    const last = runs[runs.length - 1];
    if (last && last[1] === ts) last[1] = ts + step;
    else runs.push([ts, ts + step]);
  }
  // Holes (columns dropped for room) cost a query each: past a few, one query spans them all.
  if (runs.length > MAX_ROW_RUNS) runs = [[(runs[0] as [number, number])[0], (runs[runs.length - 1] as [number, number])[1]]];
  const asked = (ts: number): boolean => runs.some(([a, z]) => ts >= a && ts < z);
  for (let ts = from; ts < to; ts += step) {
    const kept = asked(ts) ? undefined : cache.get(step, ts, queue);
    if (!kept) continue;
    cache.count(step, true);
    if (kept.covered) b.covered(ts, ts + step);
    for (const cell of kept.cells) b.add(ts, FLEET_ROW_ID, cell.cls, cell);
  }
  for (const [a, z] of runs) {
    const rec = new RowRecorder(b, step);
    await ask({ from: a, to: z, step }, rec);
    for (let ts = a; ts < z; ts += step) {
      cache.count(step, false);
      if (ts + step <= finalBefore)
        cache.put(step, ts, {
          covered: rec.coveredColumns.has(ts),
          cells: rec.cells.get(ts) ?? [],
          ...(queue ? {} : { deviceOnly: true }),
        });
    }
  }
}

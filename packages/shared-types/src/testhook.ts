/**
 * The shape of `window.__blkheat`, the dashboard's test hook (Perfetto-style): browser tests,
 * e2e/ and the benchmark wait on `idle()` and read state through these accessors instead of
 * scraping pixels. Here (types only, DOM-free) so that the tests take it from the package,
 * never from apps/web/src; the dashboard's hook implements it (apps/web/src/testhook.ts composes
 * it from readers grouped by what they read, testhook*.ts).
 */

import type { IoSample, LatencyKind } from './frame-model.js';
import type { SamplePick } from './sample-spread.js';

export interface HookRange {
  readonly from: number;
  readonly to: number;
}

export interface HookDiskCounts {
  /** Name as the agent reports it ("loop0"). */
  readonly name: string;
  /** Sum of the heat map's latency histogram over the summary range (class or cgroup filter applied). */
  readonly histogram: number;
  /** Completed I/Os over the summary range, all classes (as /proc/diskstats counts). */
  readonly completed: number;
  readonly byClass: Readonly<Record<string, number>>;
  readonly dropped: number;
}

export interface HookCell {
  readonly dev: string;
  readonly col: number;
  readonly from: number;
  readonly to: number;
  readonly bucket: number;
  readonly count: number;
}

/** One disk and class of the compare view (see BlkheatHook.compare). */
export interface HookCompareRow {
  readonly baseline: readonly number[];
  readonly comparison: readonly number[];
  readonly baselineTotal: number;
  readonly comparisonTotal: number;
  readonly percentiles: Readonly<
    Record<string, { readonly baseline: number | null; readonly comparison: number | null; readonly delta: number | null }>
  >;
  readonly difference: readonly number[] | null;
}

export interface BlkheatHook {
  readonly version: 1;
  /** Resolves once no fetch is pending, no summary is due and no frame is scheduled. */
  idle(timeoutMs?: number): Promise<void>;
  state(): {
    readonly mode: 'live' | 'snapshot';
    readonly connection: string;
    readonly following: boolean;
    /** Visible window (fractional while a gesture runs). */
    readonly view: HookRange;
    /** Range histograms and breakdowns cover: the view widened to whole columns. */
    readonly summaryRange: HookRange | undefined;
    /** Seconds per heat map column. */
    readonly step: number | undefined;
    /** Bucket schema of the heat maps on screen (the source's: hello or snapshot); one row per bucket. */
    readonly schema: { readonly scale: number; readonly minIndex: number; readonly maxIndex: number } | undefined;
    /** Rows [lo, hi) of the heat maps shown (the latency window). */
    readonly latencyWindow: { readonly lo: number; readonly hi: number } | undefined;
    /** Data window held (≈3× the view). */
    readonly window: HookRange | undefined;
    readonly shownDisks: readonly string[];
    readonly classes: readonly string[];
    /** The cgroup filter (a DiskFrame.cg path), undefined when off. */
    readonly cgroup: string | undefined;
    /** The latency phase shown (total, submit, queue or device). */
    readonly kind: LatencyKind;
    readonly colour: string;
    /** 'disk': each heat map on its own colour scale; 'shared': one for all. */
    readonly norm: string;
    readonly lastFrameTs: number | undefined;
    readonly liveCovered: HookRange | undefined;
    readonly gaps: number;
    readonly reconnects: number;
    readonly theme: 'light' | 'dark';
  };
  /** Per shown disk ("MAJ:MIN"), counts over the summary range. */
  counts(): Readonly<Record<string, HookDiskCounts>>;
  /** Dense latency histogram of one disk over the summary range. */
  histogram(dev: string): number[];
  /**
   * p50/p90/p99/p99.9 of one disk over the summary range as the page shows them, seconds: the top
   * of the rank's bucket, or the exact latency where sampled I/Os give it.
   */
  percentiles(dev: string): Readonly<Record<string, number>>;
  /** Per class over the summary range and shown disks: completed I/Os. */
  classCounts(): Readonly<Record<string, number>>;
  /** Per cgroup of one disk over the summary range (the cgroup table): I/Os, busiest first. */
  cgroups(dev: string): readonly { readonly g: string; readonly n: number }[];
  /**
   * Size × latency of one disk over the summary range (the size panel's data, class filter
   * applied): I/Os per size class s (bytes <= 2^s) and the non-empty cells (s, latency bucket).
   */
  sizeLatency(dev: string):
    | {
        readonly sizes: readonly { readonly s: number; readonly n: number }[];
        readonly cells: readonly { readonly s: number; readonly bucket: number; readonly count: number }[];
      }
    | undefined;
  /**
   * What the size panel draws now: its disk, latency rows [lo, hi) and colour scale top, or
   * undefined when it draws nothing.
   */
  sizePanel(): { readonly dev: string; readonly lo: number; readonly hi: number; readonly max: number } | undefined;
  /** Viewport coordinates of the centre of a size panel cell (scrolled into view first), undefined when not drawn. */
  sizeCellCenter(s: number, bucket: number): { x: number; y: number } | undefined;
  /** RGBA drawn at a client point of the size heat map, or undefined outside it. */
  sizePixelAt(clientX: number, clientY: number): [number, number, number, number] | undefined;
  /**
   * What the offset scatter draws now (scrolled into view first): its disk, the time × sector
   * window, the plot's client rect and size, how points are coloured (with the latency window
   * when by latency), whether the samples were truncated, and the samples it was given.
   */
  offsetScatter():
    | {
        readonly dev: string;
        readonly from: number;
        readonly to: number;
        readonly sectorLo: number;
        readonly sectorHi: number;
        readonly left: number;
        readonly top: number;
        readonly width: number;
        readonly height: number;
        readonly dpr: number;
        readonly by: 'latency' | 'class';
        readonly uLo?: number;
        readonly uHi?: number;
        readonly classColours?: Readonly<Record<string, string>>;
        readonly truncated: boolean;
        /** How the samples were chosen when truncated: spread over the range, or the oldest (an agent that cannot spread). */
        readonly pick: SamplePick;
        /** How many matched in all, when the answer said. */
        readonly matched?: number;
        readonly samples: readonly IoSample[];
        /**
         * The latency legend's ends as the page shows them at the same moment (null: coloured by
         * class). Read in the same call, so a live test can tell whether the legend and the
         * drawing are of the same load (React commits the legend a frame before the drawing).
         */
        readonly legend: { readonly lo: string; readonly hi: string } | null;
      }
    | undefined;
  /** RGBA drawn at a client point of the offset scatter, or undefined outside it. */
  offsetPixelAt(clientX: number, clientY: number): [number, number, number, number] | undefined;
  /** The heat map cell at a client point, if the point is over a heat map. */
  cellAt(clientX: number, clientY: number): HookCell | undefined;
  /**
   * Viewport coordinates of the centre of the cell holding (ts, bucket) on a disk's heat map,
   * ready for a pointer: the page is scrolled first when the cell is off screen (or covered by
   * something, e.g. a notice), so the point is always inside the viewport. Undefined when the
   * cell is not drawn (outside the time window or the latency range, or no such heat map).
   */
  cellCenter(dev: string, ts: number, bucket: number): { x: number; y: number } | undefined;
  /** The colour scale a disk's heat map is drawn with right now. */
  scale(dev: string): { readonly max: number; readonly kind: string; readonly shared: boolean } | undefined;
  /**
   * Start seconds of the columns in [from, to) a disk's heat map draws as "no data" (the agent
   * did not record them), as opposed to recorded seconds without I/O.
   */
  unrecorded(dev: string, from: number, to: number): number[];
  /**
   * The counts of the heat map column holding `ts` on a disk, every bucket (dense, whatever the
   * latency window shows), and its step; undefined when the window does not hold that column.
   */
  column(dev: string, ts: number): { readonly from: number; readonly step: number; readonly counts: number[] } | undefined;
  /** The busiest cell of a disk's heat map inside the view (and optional bucket range). */
  hottestCell(dev: string, minBucket?: number, maxBucket?: number): HookCell | undefined;
  /**
   * RGBA of what is drawn at a client point on a disk's heat map (cells layer only), or
   * undefined outside it: lets tests check that the pixels agree with the counts.
   */
  pixelAt(dev: string, clientX: number, clientY: number): [number, number, number, number] | undefined;
  /**
   * What a disk's throughput strip drew last: per column from `from` (`step` s each) IOPS, MB/s,
   * I/Os in flight and the age of the oldest of them in seconds (null: no data), and each lane's
   * scale (its top value) and caption as drawn ("MB/s ≤ 12.3", or "MB/s: no data" when no column
   * in view has the lane's value). `painted`: how its last draw painted the bars, whole or only
   * the columns that changed, the rest slid (added with the slid bars, render/throughput.ts).
   */
  throughput(dev: string):
    | {
        readonly from: number;
        readonly step: number;
        readonly iops: readonly (number | null)[];
        readonly mbps: readonly (number | null)[];
        readonly queue: readonly (number | null)[];
        readonly oldest: readonly (number | null)[];
        readonly scales: { readonly iops: number; readonly mbps: number; readonly queue: number; readonly oldest: number };
        readonly captions: { readonly iops: string; readonly mbps: string; readonly queue: string; readonly oldest: string };
        readonly painted: 'full' | 'incremental';
      }
    | undefined;
  /** RGBA at a client point of a disk's throughput strip, or undefined outside it. */
  throughputPixelAt(dev: string, clientX: number, clientY: number): [number, number, number, number] | undefined;
  /**
   * What the host's I/O pressure strip drew last (undefined: it is not on the page, as for data
   * without `psi`): per column from `from` (`step` s each) the share of the time some task, and
   * every non-idle task, was stalled on I/O (null: no data), and the strip's scale (its top share).
   * With `cgroup` true: the filtered cgroup's strip (its io.pressure, protocol 4 `cg_psi`).
   */
  pressure(cgroup?: boolean):
    | {
        readonly from: number;
        readonly step: number;
        readonly some: readonly (number | null)[];
        readonly full: readonly (number | null)[];
        readonly scale: number;
      }
    | undefined;
  /** RGBA at a client point of the I/O pressure strip, or undefined outside it. */
  pressurePixelAt(clientX: number, clientY: number): [number, number, number, number] | undefined;
  /**
   * The compare (A/B) view as computed (undefined: none open): the ranges summed (whole steps
   * of their frames) and, per disk ("MAJ:MIN") and class ("all": every class shown), both dense
   * histograms, the percentiles (seconds) and the share difference (null: a range without I/O).
   */
  compare():
    | {
        readonly status: string;
        readonly error?: string | undefined;
        /** True when no comparison range is pinned (it is the visible range). */
        readonly followsView: boolean;
        readonly baseline: { readonly from: number; readonly to: number; readonly step: number } | undefined;
        readonly comparison: { readonly from: number; readonly to: number; readonly step: number } | undefined;
        readonly disks: Readonly<Record<string, Readonly<Record<string, HookCompareRow>>>>;
      }
    | undefined;
  /**
   * RGBA where a compare chart of a disk and class ("all" for every class) drew bucket `bucket`
   * at height `value` (a share on the overlay, a share difference on the difference chart), or
   * undefined when that chart is not drawn. The page's own chart geometry places the point.
   */
  comparePixel(
    dev: string,
    c: string,
    chart: 'overlay' | 'difference',
    bucket: number,
    value: number,
  ): [number, number, number, number] | undefined;
  /**
   * Stuck I/O of a disk as its row head judges it (the newest live frame's in-flight I/Os older
   * than the threshold), and the stuck spans its heat map marks (start = frame ts + step − age,
   * end = the end of the newest frame that still saw it in flight).
   */
  stuck(dev: string): {
    readonly thresholdS: number;
    /** The newest live frame judged (undefined: none, or a snapshot on screen). */
    readonly frameTs: number | undefined;
    readonly count: number;
    /** True when more may be stuck than listed (the agent lists the oldest few). */
    readonly atLeast: boolean;
    readonly oldestS: number;
    readonly ios: readonly {
      readonly pid: number;
      readonly comm: string;
      readonly c: string;
      readonly sector: number | null;
      readonly bytes: number;
      readonly ageS: number;
    }[];
    readonly spans: readonly { readonly start: number; readonly end: number; readonly ageS: number; readonly pid: number }[];
  };
  /**
   * Columns of the view (and one either side) of a disk with failed I/Os or requeues, as its heat map marks them: the
   * column's start second, failed I/Os by block status, their sum, and requeues.
   */
  faults(dev: string): readonly {
    readonly ts: number;
    readonly failed: number;
    readonly byStatus: Readonly<Record<string, number>>;
    readonly requeues: number;
  }[];
  /** RGBA at a client point of a disk's heat map overlay (cursor, selection, incident marks). */
  overlayPixelAt(dev: string, clientX: number, clientY: number): [number, number, number, number] | undefined;
  /** Current drill-down selection and its samples. */
  selection():
    | {
        readonly dev: string;
        readonly from: number;
        readonly to: number;
        readonly bucketLo: number;
        readonly bucketHi: number;
        /** The size class of a size × latency cell, when one was clicked. */
        readonly sizeClass?: number | undefined;
        /** The cgroup filter the samples are kept by. */
        readonly cgroup?: string | undefined;
      }
    | undefined;
  samples(): { readonly status: string; readonly count: number; readonly truncated: boolean; readonly error?: string | undefined };
  /** Messages shown to the user (errors and notices). */
  notices(): readonly { readonly kind: string; readonly text: string }[];
  /**
   * Recent draw durations (ms) of a view key ("heat:7:0", "time-axis", ...), and frames drawn.
   * `draws`: each key's draws since the page started (added after 0.4.0): the last
   * `draws₁ - draws₀` timings are those of the draws between two reads.
   */
  renderStats(): {
    readonly frames: number;
    readonly timings: Readonly<Record<string, readonly number[]>>;
    readonly draws: Readonly<Record<string, number>>;
  };
  /**
   * A fleet view's "Stuck now" list as drawn (added after 0.4.0): each row's host, disk, kind and
   * the age it shows now (seconds, and as written), or the text of the empty list; undefined: no
   * list on the page (not a fleet view).
   */
  fleetStuck():
    | {
        readonly status: string;
        /** When the fleet server asked Prometheus for the answer drawn (unix s); undefined before the first. */
        readonly at: number | undefined;
        readonly rows: readonly {
          readonly instance: string;
          readonly disk: string;
          readonly kind: string;
          readonly ageS: number;
          readonly ageText: string;
          readonly kindText: string;
        }[];
        /** The empty list's text (undefined when rows are listed or no answer came yet). */
        readonly empty: string | undefined;
      }
    | undefined;
}

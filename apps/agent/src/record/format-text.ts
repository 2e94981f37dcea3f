/**
 * biolatency -D -F style text for one interval: per disk, per op class, a histogram at the
 * fine buckets (folded to a readable height) with count and p50/p99.
 */
import {
  addSparseInto,
  boundsMicros,
  BUCKET_SCHEMA,
  type BucketSchema,
  denseHist,
  formatLatency,
  quantileSeconds,
  queueChangedText,
  SUBMIT_CAUSE_WAIT,
  SUBMIT_CAUSES,
  tagsFullText,
  wbtWindowsText,
  type ClassSeries,
  type Frame,
  type SparseHist,
} from '@blkheat/shared-types';

export interface TextOptions {
  /**
   * Also print queue-time histograms, and (added with protocol 4, request-based disks) the submit
   * wait and total (bio submitted -> completed) where the data has them.
   */
  readonly queued: boolean;
  /** Most histogram rows per class; adjacent buckets are folded to fit (default 24). */
  readonly maxRows?: number;
  /** Width of the distribution bar (default 40). */
  readonly barWidth?: number;
  /** Bucket schema of the frames (default BUCKET_SCHEMA). */
  readonly schema?: BucketSchema;
}

export function formatIntervalText(frame: Frame, names: ReadonlyMap<string, string>, intervalS: number, options: TextOptions): string {
  const lines: string[] = [];
  const start = new Date(frame.ts * 1000);
  lines.push(`${clock(start)} - ${clock(new Date((frame.ts + intervalS) * 1000))}  (${intervalS} s)`);
  if (frame.disks.length === 0) {
    lines.push('  no block I/O completed');
    return lines.join('\n') + '\n';
  }
  for (const disk of frame.disks) {
    const name = names.get(disk.dev) ?? disk.dev;
    const untimed = Object.entries(disk.untimed ?? {})
      .filter(([, n]) => (n ?? 0) > 0)
      .map(([g, n]) => `${n} ${g}`)
      .join(' ');
    const extra = [
      disk.dropped ? `${disk.dropped} not sampled` : '',
      disk.missed ? `${disk.missed} with unknown start` : '',
      untimed ? `untimed ${untimed}` : '',
      disk.requeues ? `${disk.requeues} requeued` : '',
      disk.inflight?.n ? `${disk.inflight.n} in flight, oldest ${formatLatency(disk.inflight.oldest_ns / 1e9)}` : '',
      disk.inflight?.waiting
        ? `${disk.inflight.waiting} waiting for a request, oldest ${formatLatency((disk.inflight.oldest_wait_ns ?? 0) / 1e9)}`
        : '',
      disk.inflight?.frozen ? 'queue frozen' : '',
      ...SUBMIT_CAUSES.map((c) => (disk.causes?.[c] ? `${disk.causes[c]} waited ${SUBMIT_CAUSE_WAIT[c]}` : '')),
      disk.wbt ? wbtWindowsText(disk.wbt) : '',
      disk.tags_full ? tagsFullText(disk.tags_full) : '',
      disk.queue_changed ? queueChangedText(disk.queue_changed) : '',
    ]
      .filter(Boolean)
      .join(', ');
    lines.push('', `disk = ${name} (${disk.dev})${extra ? `  [${extra}]` : ''}`);
    for (const cls of disk.cls) {
      const errors = Object.entries(cls.e ?? {})
        .map(([status, n]) => `${n} ${status}`)
        .join(' ');
      const label = `${cls.c}${cls.pt ? ' (passthrough, not in diskstats)' : ''}${errors ? ` (failed: ${errors})` : ''}`;
      lines.push(...histogramBlock(label, 'device', cls.n, cls.d, options));
      if (options.queued && cls.q.length > 0) lines.push(...histogramBlock(label, 'queue', cls.n, cls.q, options));
      if (options.queued) lines.push(...submitBlocks(label, cls, options));
    }
    for (const g of disk.cg ?? []) lines.push(`  cgroup ${g.g}  ${percentiles(g.n, g.d, options.schema ?? BUCKET_SCHEMA)}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * The submit wait and total histograms of a class (added in 4; request-based disks, data that has
 * them): their count is `n - wu`, the I/Os whose submission was seen, and the rest are named.
 */
function submitBlocks(label: string, cls: ClassSeries, options: TextOptions): string[] {
  const count = cls.n - (cls.wu ?? 0);
  const unseen = cls.wu ? ` (${cls.wu} submission not seen)` : '';
  const out: string[] = [];
  if (cls.w && cls.w.length > 0) out.push(...histogramBlock(`${label}${unseen}`, 'submit wait', count, cls.w, options));
  if (cls.t && cls.t.length > 0) out.push(...histogramBlock(`${label}${unseen}`, 'total', count, cls.t, options));
  return out;
}

function histogramBlock(cls: string, kind: string, count: number, sparse: SparseHist, options: TextOptions): string[] {
  const schema = options.schema ?? BUCKET_SCHEMA;
  const head = `  ${cls}  ${kind} latency  ${percentiles(count, sparse, schema)}`;
  const rows = foldedRows(sparse, options.maxRows ?? 24, schema);
  if (rows.length === 0) return [head];
  const width = options.barWidth ?? 40;
  const max = Math.max(...rows.map((r) => r.count));
  const out = [head, `  ${'latency'.padStart(19)}  ${'count'.padStart(9)}  distribution`];
  for (const r of rows) {
    const range = `${formatLatency(r.lowerUs / 1e6)} - ${formatLatency(r.upperUs / 1e6)}`;
    const bar = '*'.repeat(max > 0 ? Math.round((r.count / max) * width) : 0).padEnd(width);
    out.push(`  ${range.padStart(19)}  ${String(r.count).padStart(9)}  |${bar}|`);
  }
  return out;
}

/** "count N  p50 X  p99 Y" of a histogram (percentiles left out when it is empty). */
function percentiles(count: number, sparse: SparseHist, schema: BucketSchema): string {
  const dense = denseHist(schema);
  addSparseInto(dense, sparse);
  const p50 = quantileSeconds(dense, 0.5, schema);
  const p99 = quantileSeconds(dense, 0.99, schema);
  return `count ${count}` + (p50 !== undefined ? `  p50 ${formatLatency(p50)}  p99 ${formatLatency(p99 ?? p50)}` : '');
}

export interface HistRow {
  readonly lowerUs: number;
  readonly upperUs: number;
  readonly count: number;
}

/**
 * Rows from the first to the last non-empty bucket, adjacent buckets folded to at most maxRows.
 * A fold is a power of two and its rows start at bucket indexes that are multiples of it, so the
 * rows of two histograms (classes, phases) share their bounds wherever their folds meet: the
 * tables line up.
 */
export function foldedRows(sparse: SparseHist, maxRows: number, schema: BucketSchema = BUCKET_SCHEMA): HistRow[] {
  if (sparse.length === 0) return [];
  const first = sparse[0] as number;
  const last = sparse[sparse.length - 2] as number;
  let fold = 1;
  while (Math.floor(last / fold) - Math.floor(first / fold) + 1 > Math.max(1, maxRows)) fold *= 2;
  const counts = new Map<number, number>();
  for (let k = 0; k < sparse.length; k += 2) counts.set(sparse[k] as number, sparse[k + 1] as number);
  const rows: HistRow[] = [];
  for (let lo = Math.floor(first / fold) * fold; lo <= last; lo += fold) {
    const hi = Math.min(last, lo + fold - 1);
    let count = 0;
    for (let b = lo; b <= hi; b++) count += counts.get(b) ?? 0;
    rows.push({ lowerUs: boundsMicros(lo, schema)[0], upperUs: boundsMicros(hi, schema)[1], count });
  }
  return rows;
}

function clock(d: Date): string {
  return d.toTimeString().slice(0, 8);
}

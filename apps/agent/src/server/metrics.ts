/**
 * /metrics in the Prometheus text exposition format 0.0.4.
 *
 * Latency histograms: one classic histogram per disk x class x phase (device, queue; submit wait
 * and total added in protocol 4, request-based disks), with an
 * `le` bucket for the upper bound (in seconds) of every dense bucket of the bucket schema
 * except overflow, which is `+Inf`. The bounds are exactly the native-histogram schema's,
 * so they never need re-binning. Counts are cumulative since the agent started (the
 * Prometheus norm; a restart is a counter reset). No `_sum` is exported: the kernel keeps
 * histograms, not sums, and an estimate from bucket midpoints would silently skew every
 * average computed from it. Use histogram_quantile() or bucket ratios instead.
 */
import { CGROUP_OTHER, CGROUPS_LISTED, PROTOCOL_VERSION, type ClassSeries, type DiskFrame, type DiskInfo } from '@blkheat/shared-types';
import type { ReadSchedulerStats } from './read-scheduler.js';
import type { AgentContext } from './context.js';
import { cgroupLatencyMetrics } from './cgroup-metrics.js';
import { Exposition, type Labels } from './exposition.js';
import { BUILD_INFO_METRIC, buildInfoHelp } from './instance-help.js';
import { MAX_CONNECTIONS } from './limits.js';

/** The series `blkheat fleet` reads back from Prometheus (fleet/fleet-frames.ts, fleet-disks.ts): named here, where they are written. */
export const DEVICE_LATENCY_METRIC = 'blkheat_device_latency_seconds';
export const QUEUE_LATENCY_METRIC = 'blkheat_queue_latency_seconds';
/** Added in protocol 4 (request-based disks): bio submission -> request allocated, and -> completed. */
export const SUBMIT_LATENCY_METRIC = 'blkheat_submit_latency_seconds';
export const TOTAL_LATENCY_METRIC = 'blkheat_total_latency_seconds';
export const WINDOW_END_METRIC = 'blkheat_histogram_window_end_seconds';

/** Numbers the WebSocket layer keeps about itself. */
export interface StreamStats {
  readonly clients: number;
  readonly framesSent: number;
  readonly framesSkipped: number;
  readonly laggingNotices: number;
  readonly slowClientsClosed: number;
  /** Clients closed (1008) for sending more messages than the rate allows. */
  readonly floodsClosed: number;
  readonly bytesSent: number;
  /** The read scheduler: heavy history reads of every client. */
  readonly reads: ReadSchedulerStats;
  /** Memory given back after bursts of client work (reclaim.ts). */
  readonly memory: { readonly reclaims: number; readonly releasedBytes: number };
  /** Seconds from the end of the newest second to its frame being handed to the sockets. */
  readonly lastFrameLagS: number | null;
  /** Connections closed as they came because MAX_CONNECTIONS were open (http.ts). */
  readonly connectionsDropped?: number;
}

/** Everything /metrics exposes, for either format. */
export function buildMetrics(ctx: AgentContext, stream: StreamStats): Exposition {
  const out = new Exposition(ctx.schema, ctx.host.instance ? { instance: ctx.host.instance } : {});
  const disks = new Map<string, DiskInfo>(ctx.disks().map((d) => [d.dev, d]));
  const totals = ctx.totals.snapshot();
  const series: ClassMetricSeries[] = [];
  for (const d of totals.disks) {
    const info = disks.get(d.dev);
    for (const cls of d.cls) series.push({ labels: { disk: info?.name ?? d.dev, dev: d.dev, class: cls.c }, kind: info?.kind, cls });
  }

  out.family(
    DEVICE_LATENCY_METRIC,
    'histogram',
    'Block I/O device latency (request-based disks: issue to completion; bio-based: queue to completion), since the agent started.',
  );
  for (const s of series) out.histogram(DEVICE_LATENCY_METRIC, s.labels, s.cls.d);
  out.family(
    QUEUE_LATENCY_METRIC,
    'histogram',
    'Block I/O queue latency (request start to issue), request-based disks, since the agent started.',
  );
  for (const s of series) if (s.kind !== 'bio') out.histogram(QUEUE_LATENCY_METRIC, s.labels, s.cls.q);
  submitPhases(out, series);
  out.family(
    'blkheat_ios_total',
    'counter',
    'Completed I/Os per disk and op class since the agent started; passthrough="true" for I/O /proc/diskstats does not count.',
  );
  for (const s of series) out.sample('blkheat_ios_total', { ...s.labels, passthrough: s.cls.pt ? 'true' : 'false' }, s.cls.n);
  out.family(
    'blkheat_io_bytes_total',
    'counter',
    'Bytes moved by the completed I/Os per disk and op class (the size each was issued with), since the agent started.',
  );
  for (const s of series) if (s.cls.b !== undefined) out.sample('blkheat_io_bytes_total', s.labels, s.cls.b);
  out.family('blkheat_io_errors_total', 'counter', 'Failed I/Os (included in blkheat_ios_total) per disk, op class and block status.');
  for (const s of series)
    for (const [status, n] of Object.entries(s.cls.e ?? {})) out.sample('blkheat_io_errors_total', { ...s.labels, status }, n);
  out.family(
    'blkheat_untimed_ios_total',
    'counter',
    'I/Os /proc/diskstats counted that no blkheat probe saw, per disk and op group (docs/accounting.md), since the agent started.',
  );
  out.family('blkheat_requeues_total', 'counter', 'Requests sent back to the queue by the driver, per disk, since the agent started.');
  for (const d of totals.disks) {
    const disk = disks.get(d.dev)?.name ?? d.dev;
    for (const [group, n] of Object.entries(d.untimed ?? {})) out.sample('blkheat_untimed_ios_total', { disk, dev: d.dev, group }, n ?? 0);
    if (d.requeues) out.sample('blkheat_requeues_total', { disk, dev: d.dev }, d.requeues);
  }
  out.family(
    'blkheat_cgroup_ios_total',
    'counter',
    `Completed I/Os counted in /proc/diskstats per disk and the cgroup they were charged to (the ${CGROUPS_LISTED - 1} busiest since start by name, the rest as "${CGROUP_OTHER}"), since the agent started.`,
  );
  for (const d of totals.disks)
    for (const g of d.cg ?? [])
      out.sample('blkheat_cgroup_ios_total', { disk: disks.get(d.dev)?.name ?? d.dev, dev: d.dev, cgroup: g.g }, g.n);
  cgroupLatencyMetrics(out, totals.disks, disks, ctx.metricsCgroups ?? 0, ctx.schema);
  // In flight now: from the newest frame (a total's in-flight state is the worst second, not now).
  const newest = ctx.totals.newest();
  out.family('blkheat_inflight_ios', 'gauge', 'I/Os with the driver when the newest second closed, per disk.');
  out.family('blkheat_inflight_oldest_seconds', 'gauge', 'Age of the oldest I/O with the driver when the newest second closed, per disk.');
  for (const d of newest?.disks ?? []) {
    if (!d.inflight) continue;
    const labels = { disk: disks.get(d.dev)?.name ?? d.dev, dev: d.dev };
    out.sample('blkheat_inflight_ios', labels, d.inflight.n);
    out.sample('blkheat_inflight_oldest_seconds', labels, d.inflight.oldest_ns / 1e9);
  }
  waitingGauges(out, newest?.disks ?? [], totals.disks, disks);
  out.family(
    'blkheat_submit_wait_causes_total',
    'counter',
    'Completed I/Os whose bio met a cause of submit wait (frozen: the queue was frozen at submission; refused: a REQ_NOWAIT submission was turned away for want of a tag, then resubmitted), per disk and cause, since the agent started.',
  );
  for (const d of totals.disks)
    for (const [cause, n] of Object.entries(d.causes ?? {}))
      out.sample('blkheat_submit_wait_causes_total', { disk: disks.get(d.dev)?.name ?? d.dev, dev: d.dev, cause }, n);
  // Marks of a disk's seconds (not counts of I/Os), summed since start; a disk without any has no sample.
  const diskMarks: [string, string, (d: DiskFrame) => number | undefined][] = [
    [
      'blkheat_wbt_limited_windows_total',
      'wbt latency windows in which writeback throttling held buffered writes below its default depth (reads over queue/wbt_lat_usec), per disk, since the agent started.',
      (d) => d.wbt,
    ],
    [
      'blkheat_tags_full_seconds_total',
      'Seconds in which the in-flight scan found tasks asleep for a tag of the disk (every tag in use), per disk, since the agent started.',
      (d) => d.tags_full,
    ],
  ];
  for (const [name, help, mark] of diskMarks) {
    out.family(name, 'counter', help);
    for (const d of totals.disks) {
      const n = mark(d);
      if (n) out.sample(name, { disk: disks.get(d.dev)?.name ?? d.dev, dev: d.dev }, n);
    }
  }

  const w = ctx.totals.window;
  out.single(
    'blkheat_histogram_window_start_seconds',
    'gauge',
    'Unix time of the first second counted in the latency histograms.',
    w?.from ?? ctx.startedAt,
  );
  out.single(
    WINDOW_END_METRIC,
    'gauge',
    'Unix time of the end of the newest second counted in the latency histograms.',
    w?.to ?? ctx.startedAt,
  );

  const cs = ctx.collectorStats();
  if (cs) {
    out.single(
      'blkheat_bpf_ns_per_io',
      'gauge',
      'BPF program run time per traced I/O, ns (needs kernel.bpf_stats_enabled, held by the agent).',
      cs.bpfNsPerIo,
    );
    out.single('blkheat_bpf_run_time_seconds_total', 'counter', 'BPF program run time of every blkheat program.', cs.bpfRunTimeNs / 1e9);
    out.single('blkheat_collector_ios_total', 'counter', 'Completed I/Os counted by the collector.', cs.ios);
    out.single(
      'blkheat_samples_dropped_total',
      'counter',
      'I/Os with no sample record (sampling, per-second budget, ring buffer full).',
      cs.samplesDropped,
    );
    out.single('blkheat_samples_lost_total', 'counter', 'Sample records lost for lack of ring-buffer space.', cs.samplesLost);
    out.single(
      'blkheat_bpf_recursion_misses_total',
      'counter',
      'BPF program runs the kernel skipped because the program was already running on that CPU.',
      cs.recursionMisses,
    );
    out.single(
      'blkheat_collector_frame_lag_seconds',
      'gauge',
      'Seconds from the end of the newest second to the collector emitting its frame.',
      cs.lastFrameLagS,
    );
    out.family(
      'blkheat_kernel_events_total',
      'counter',
      'Kernel-side events the BPF programs counted (requeues, partial completions, lost records, ...).',
    );
    for (const [event, n] of Object.entries(cs.kernel)) out.sample('blkheat_kernel_events_total', { event }, n);
    out.single('blkheat_hooks_info', 'gauge', 'Which tracepoint flavour is attached.', 1, { hooks: cs.hooks });
  }

  out.single(
    'blkheat_frame_lag_seconds',
    'gauge',
    'Seconds from the end of the newest second to its frame being written to the client sockets.',
    stream.lastFrameLagS,
  );
  out.single('blkheat_clients', 'gauge', 'Connected WebSocket clients.', stream.clients);
  out.single('blkheat_stream_frames_sent_total', 'counter', 'Live and backfill frames sent to WebSocket clients.', stream.framesSent);
  out.single(
    'blkheat_stream_frames_skipped_total',
    'counter',
    'Live frames not sent to clients that did not read fast enough.',
    stream.framesSkipped,
  );
  out.single('blkheat_stream_lagging_total', 'counter', '"lagging" notices sent to slow clients.', stream.laggingNotices);
  out.single(
    'blkheat_stream_slow_clients_closed_total',
    'counter',
    'Clients disconnected because their unsent data passed the hard limit.',
    stream.slowClientsClosed,
  );
  out.single(
    'blkheat_stream_floods_closed_total',
    'counter',
    'Clients disconnected (1008) for sending more messages than the rate limit allows.',
    stream.floodsClosed,
  );
  out.single('blkheat_stream_bytes_sent_total', 'counter', 'Bytes of WebSocket messages sent.', stream.bytesSent);
  out.single(
    'blkheat_connections_dropped_total',
    'counter',
    `Connections closed as they came because ${MAX_CONNECTIONS} were open already.`,
    stream.connectionsDropped ?? 0,
  );
  out.single(
    'blkheat_reads_pending',
    'gauge',
    'Backfill pages, range answers and snapshots waiting or being read from history.',
    stream.reads.queued + stream.reads.parked,
  );
  out.single('blkheat_read_bytes_total', 'counter', 'Bytes of frame JSON read from history for clients.', stream.reads.bytesRead);
  out.single(
    'blkheat_reads_refused_total',
    'counter',
    'History reads refused because their client had too many open (answered "busy").',
    stream.reads.refused,
  );
  out.single(
    'blkheat_reads_dropped_total',
    'counter',
    'History reads dropped unfinished, mostly because their client went away.',
    stream.reads.dropped,
  );
  out.single(
    'blkheat_memory_reclaims_total',
    'counter',
    'Full collections and C heap trims run after the agent grew by a burst of client work.',
    stream.memory.reclaims,
  );
  out.single(
    'blkheat_memory_reclaimed_bytes_total',
    'counter',
    'Resident memory those reclaims gave back to the system.',
    stream.memory.releasedBytes,
  );

  const hs = ctx.history.stats();
  out.family('blkheat_history_bytes', 'gauge', 'Bytes of history segment files, per tier (step in seconds).');
  for (const t of hs.tiers) out.sample('blkheat_history_bytes', { step: String(t.step) }, t.bytes);
  out.family('blkheat_history_frames', 'gauge', 'Frames held in history, per tier.');
  for (const t of hs.tiers) out.sample('blkheat_history_frames', { step: String(t.step) }, t.frames);
  out.family('blkheat_history_oldest_timestamp_seconds', 'gauge', 'Unix time of the oldest second history can answer for, per tier.');
  for (const t of hs.tiers)
    if (t.from !== undefined) out.sample('blkheat_history_oldest_timestamp_seconds', { step: String(t.step) }, t.from);
  const health = ctx.history.health();
  out.single(
    'blkheat_history_write_errors_total',
    'counter',
    'History appends that failed in at least one tier (disk full, unwritable files).',
    health.writeErrors,
  );
  out.single(
    'blkheat_history_seconds_not_recorded_total',
    'counter',
    'Seconds sent live that history could not record (they read back as no data).',
    health.secondsNotRecorded,
  );
  out.single(
    'blkheat_history_failing',
    'gauge',
    '1 while history cannot be written (the reason is on /healthz and in the log).',
    health.fault ? 1 : 0,
  );
  const asked = ctx.fleet?.requestStats();
  if (asked) {
    out.single('blkheat_fleet_prometheus_requests_total', 'counter', 'Requests the fleet server made of Prometheus.', asked.requests);
    out.single('blkheat_fleet_prometheus_request_errors_total', 'counter', 'Requests of Prometheus that failed.', asked.failed);
    out.single(
      'blkheat_fleet_prometheus_requests_in_flight',
      'gauge',
      'Requests of Prometheus open now (a few at most, fleet/prometheus-api.ts).',
      asked.inFlight,
    );
    out.single('blkheat_fleet_prometheus_requests_waiting', 'gauge', 'Requests of Prometheus waiting for a free slot.', asked.waiting);
  }
  out.single('blkheat_samples_stored', 'gauge', 'Sampled I/O records held in memory for drill-down.', ctx.samples.count);
  const archived = ctx.samples.archive?.stats();
  if (archived) {
    out.single('blkheat_samples_disk_bytes', 'gauge', 'Bytes of the sampled I/Os kept on disk (--max-sample-size).', archived.bytes);
    out.single(
      'blkheat_samples_write_errors_total',
      'counter',
      'Seconds of sampled I/Os a tier could not write to disk (their drill-down is empty).',
      archived.writeErrors,
    );
  }

  out.single(BUILD_INFO_METRIC, 'gauge', buildInfoHelp(ctx.host.instance), 1, {
    version: ctx.version,
    protocol: String(PROTOCOL_VERSION),
  });
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  out.single('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', mem.rss);
  out.single('process_heap_bytes', 'gauge', 'JavaScript heap in use, bytes.', mem.heapUsed);
  out.single('process_cpu_seconds_total', 'counter', 'User and system CPU time spent, seconds.', (cpu.user + cpu.system) / 1e6);
  out.single('process_start_time_seconds', 'gauge', 'Start time of the process since the unix epoch, seconds.', ctx.startedAt);
  return out;
}

type ClassMetricSeries = { readonly labels: Labels; readonly kind: DiskInfo['kind'] | undefined; readonly cls: ClassSeries };

/**
 * Added in protocol 4, request-based disks, for classes whose data has them: the submit wait and
 * total histograms, and the I/Os whose submission was not seen (in blkheat_ios_total, in neither
 * histogram). A bio-based disk's total is its device latency: read blkheat_device_latency_seconds.
 */
function submitPhases(out: Exposition, series: readonly ClassMetricSeries[]): void {
  const request = series.filter((s) => s.kind !== 'bio');
  out.family(
    SUBMIT_LATENCY_METRIC,
    'histogram',
    'Block I/O submit wait (bio submitted to its request allocated: queue freeze, QoS throttling, tag wait), request-based disks, since the agent started.',
  );
  for (const s of request) if (s.cls.w) out.histogram(SUBMIT_LATENCY_METRIC, s.labels, s.cls.w);
  out.family(
    TOTAL_LATENCY_METRIC,
    'histogram',
    'Block I/O total latency (bio submitted to its request completed), request-based disks, since the agent started.',
  );
  for (const s of request) if (s.cls.t) out.histogram(TOTAL_LATENCY_METRIC, s.labels, s.cls.t);
  out.family(
    'blkheat_submit_unseen_ios_total',
    'counter',
    'Completed I/Os whose bio submission was not seen (in blkheat_ios_total, not in the submit wait and total histograms), request-based disks, since the agent started.',
  );
  for (const s of request) if (s.cls.wu !== undefined) out.sample('blkheat_submit_unseen_ios_total', s.labels, s.cls.wu);
}

/**
 * Added in protocol 4: bios waiting for a request when the newest second closed, on the disks
 * whose submit wait the agent times (a class of the totals has `w`; a frame leaves `waiting` out
 * for none), and whether their queue was frozen; 0 when none waited (as blkheat_inflight_ios).
 */
function waitingGauges(
  out: Exposition,
  newest: readonly DiskFrame[],
  totals: readonly DiskFrame[],
  disks: ReadonlyMap<string, DiskInfo>,
): void {
  out.family(
    'blkheat_inflight_waiting_bios',
    'gauge',
    'Bios submitted and still waiting for a request when the newest second closed, per disk.',
  );
  out.family(
    'blkheat_inflight_waiting_oldest_seconds',
    'gauge',
    'Age of the oldest bio waiting for a request when the newest second closed (0: none), per disk.',
  );
  out.family('blkheat_queue_frozen', 'gauge', "1 when the disk's queue was frozen as the newest second closed, else 0, per disk.");
  const timed = new Set(totals.filter((d) => d.cls.some((c) => c.w)).map((d) => d.dev));
  for (const d of newest) {
    if (!d.inflight || (d.inflight.waiting === undefined && !timed.has(d.dev))) continue;
    const labels = { disk: disks.get(d.dev)?.name ?? d.dev, dev: d.dev };
    out.sample('blkheat_inflight_waiting_bios', labels, d.inflight.waiting ?? 0);
    out.sample('blkheat_inflight_waiting_oldest_seconds', labels, (d.inflight.oldest_wait_ns ?? 0) / 1e9);
    out.sample('blkheat_queue_frozen', labels, d.inflight.frozen ? 1 : 0);
  }
}

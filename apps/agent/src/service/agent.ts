/**
 * The agent as a service: wires collector -> WebSocket hub and history, and owns the order of
 * start-up and shut-down. Live delivery never depends on history: a second that history cannot
 * record still goes to the clients and the totals; history's faults are counted and shown
 * (HistoryHealth: /healthz, /metrics, the log).
 *
 * Start: dashboard files read, data directory prepared (created or recognised as blkheat's,
 * checked writable by --user; what the agent creates there is --user's from its creation:
 * datadir.ts), locked, history opened (torn tails cut), socket bound, probes loaded and
 * attached, privileges dropped. Binding and loading happen as root (ports below 1024, BPF);
 * nothing after that needs privileges. Every refusal of the data directory comes before the
 * probes load.
 * Stop: probes detached (the collector emits the current second first, which is recorded and
 * broadcast), clients closed with 1001, history closed, lock released.
 */
import { hostname, release } from 'node:os';
import { releaseFreeHeap } from '@blkheat/bpf-loader';
import type { DiskInfo, Frame, HostInfo } from '@blkheat/shared-types';
import type { Collector, CollectorOptions } from '../collector/types.js';
import { SampleStore } from '../history/samples.js';
import { SampleArchive } from '../history/sample-archive.js';
import { SampleSource } from '../history/sample-source.js';
import { HistoryStore, segmentSpansFromEnv } from '../history/store.js';
import type { AgentContext } from '../server/context.js';
import { listenOn, type AgentServer } from '../server/http.js';
import { StreamHub } from '../server/hub.js';
import { StaticSite } from '../server/static.js';
import { protobufProblem } from '../server/native-histograms.js';
import { LatencyTotals } from '../server/totals.js';
import { AGENT_VERSION } from '../version.js';
import { prepareDataDir } from './datadir.js';
import { DataDirLock } from './lock.js';
import type { ServeOptions } from './options.js';
import { dropPrivileges, resolveUser, type TargetUser } from './drop-root.js';

/** Samples kept for drill-down: at most this many, for at most this long. */
export const SAMPLES_CAPACITY = 250_000;
export const SAMPLES_WINDOW_S = 3600;

export interface AgentDeps {
  readonly createCollector: (options: CollectorOptions) => Promise<Collector>;
  /** Throws for a --disk name that names no disk here (collector's checkDiskNames); before the data directory is touched. */
  readonly checkDisks?: (names: readonly string[]) => void;
  readonly log: (line: string) => void;
}

export interface RunningAgent {
  readonly url: string;
  readonly port: number;
  readonly context: AgentContext;
  readonly hub: StreamHub;
  /** The user the agent runs as now. */
  readonly user: TargetUser | undefined;
  /** Detaches the probes, closes clients and files. Idempotent. */
  stop(): Promise<void>;
}

export function hostInfo(instance: string = hostname()): HostInfo {
  return { hostname: hostname(), kernel: release(), instance };
}

export async function startAgent(options: ServeOptions, deps: AgentDeps): Promise<RunningAgent> {
  const { log } = deps;
  const site = StaticSite.load(options.webRoot);
  if (!site) log(`serve: no dashboard build in ${options.webRoot}: the page will say how to build it (the API works)`);
  const user = options.user === undefined ? undefined : resolveUser(options.user);
  const segmentSpans = segmentSpansFromEnv(process.env.BLKHEAT_SEGMENT_SPANS);

  // A --disk that is not here fails now, before a data directory is made or taken for it.
  if (options.disks.length > 0) deps.checkDisks?.(options.disks);
  // Before anything is written there: refuse a directory that is not blkheat's, or that the
  // user we become cannot write. Nothing that exists there changes owner, now or later.
  const dataDir = prepareDataDir(options.dataDir, user, options.adoptDataDir ?? false, log);
  const lock = DataDirLock.acquire(dataDir.path, user);
  const cleanups: (() => void | Promise<void>)[] = [() => lock.release()];
  const unwind = async (): Promise<void> => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch (e) {
        log(`serve: while stopping: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    cleanups.length = 0;
  };

  try {
    const history = HistoryStore.open({
      dir: dataDir.historyDir,
      historySeconds: options.historySeconds,
      maxBytes: options.maxHistoryBytes,
      schema: options.schema,
      ...(segmentSpans ? { segmentSpans } : {}),
      log,
    });
    cleanups.push(() => history.close());
    const archive = options.samplesBudget > 0 ? openSampleArchive(options, dataDir.historyDir, segmentSpans, log) : undefined;
    if (archive) cleanups.push(() => archive.close());
    const samples = new SampleSource(
      new SampleStore({ capacity: SAMPLES_CAPACITY, windowSeconds: SAMPLES_WINDOW_S }),
      archive,
      options.samplesBudget,
    );
    const totals = new LatencyTotals(options.schema);
    let collector: Collector | undefined;
    let disks: readonly DiskInfo[] = [];
    const context: AgentContext = {
      version: AGENT_VERSION,
      host: hostInfo(options.instance),
      schema: options.schema,
      history,
      samples,
      totals,
      startedAt: Math.floor(Date.now() / 1000),
      disks: () => disks,
      collectorStats: () => collector?.stats(),
      metricsCgroups: options.metricsCgroups ?? 0,
    };
    const hub = new StreamHub(context, log, { releaseFreeHeap });
    const server: AgentServer = await listenOn(options, { ctx: context, hub, site, log });
    cleanups.push(() => server.close());
    const protoProblem = protobufProblem();
    if (protoProblem) log(`serve: /metrics offers the text format only (no native histograms for Prometheus): ${protoProblem}`);

    collector = await deps.createCollector({
      ...(options.disks.length > 0 ? { disks: options.disks } : {}),
      samples: options.samplesBudget > 0 ? { budgetPerSecond: options.samplesBudget } : false,
      schema: options.schema,
      ...(options.submitPhase === false ? { submitPhase: false } : {}),
      onLog: (line) => log(`collector: ${line}`),
    });
    const running = collector;
    const guard = (what: string, fn: () => void): void => {
      try {
        fn();
      } catch (e) {
        log(`serve: handling a collector ${what} event failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      }
    };
    // Registered in the same tick createCollector resolved in: no frame can be missed.
    disks = running.disks();
    let lastLiveTs = -1;
    const unlisten = running.listen({
      // Listeners run inside the collector's tick: nothing thrown here may reach it.
      frame: (frame: Frame) => {
        // A second is sent once, in order (the collector never goes back; this keeps it so).
        if (frame.ts <= lastLiveTs) return;
        lastLiveTs = frame.ts;
        // History first, so that a client being backfilled gets this second from it; but
        // whatever history does (disk full, files gone), the second still goes live.
        guard('frame (history)', () => history.append(frame, JSON.stringify(frame)));
        if (archive) guard('frame (samples on disk)', () => archive.record(frame.ts));
        guard('frame (totals)', () => totals.add(frame));
        guard('frame (live)', () => hub.broadcastFrame(frame));
        guard('status', () => hub.broadcastStatusIfChanged());
      },
      samples: (batch) =>
        guard('samples', () => {
          samples.ring.add(batch);
          archive?.add(batch);
        }),
      disks: (list) =>
        guard('disks', () => {
          disks = list;
          hub.broadcastDisks(list);
        }),
      warning: (message) => log(`collector: ${message}`),
    });
    // Before history and clients close: the collector's last frame still gets recorded and sent.
    cleanups.push(async () => {
      await running.close();
      unlisten();
      collector = undefined;
    });

    if (user) {
      // Segment files are created from now on, as the user: its own without a chown.
      dropPrivileges(user);
      log(`serve: probes attached; now running as ${user.name} (uid ${user.uid}, gid ${user.gid}) with no capabilities`);
    }

    let stopping: Promise<void> | undefined;
    return {
      url: server.url,
      port: server.address.port,
      context,
      hub,
      user,
      stop: () => (stopping ??= unwind()),
    };
  } catch (e) {
    await unwind();
    throw e;
  }
}

/**
 * The samples on disk, beside the history. One that cannot be opened leaves drill-down to the
 * seconds held in memory, and says so: it must not keep the agent from serving.
 */
function openSampleArchive(
  options: ServeOptions,
  dir: string,
  segmentSpans: readonly [number, number, number] | undefined,
  log: (line: string) => void,
): SampleArchive | undefined {
  try {
    return SampleArchive.open({
      dir,
      historySeconds: options.historySeconds,
      maxBytes: options.maxSampleBytes,
      budgetPerSecond: options.samplesBudget,
      schema: options.schema,
      ...(segmentSpans ? { segmentSpans } : {}),
      log,
    });
  } catch (e) {
    log(
      `serve: WARNING: samples cannot be kept on disk (${e instanceof Error ? e.message : String(e)}); drill-down has the samples held in memory only (at most ${SAMPLES_CAPACITY}, 1 h)`,
    );
    return undefined;
  }
}

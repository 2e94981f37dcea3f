/**
 * In-process agent for unit tests of the server: the real service wiring, history, hub and
 * HTTP server on a real socket, fed by a scripted collector instead of the kernel. (The
 * acceptance tests, serve-*.test.ts, run the real agent binary on the real kernel.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUCKET_SCHEMA, type BucketSchema, type DiskInfo, type Frame, type IoSample } from '@blkheat/shared-types';
import { COUNTER_NAMES, type CounterName } from '../src/collector/abi/kernel-abi.js';
import type { Collector, CollectorListener, CollectorOptions, CollectorStats } from '../src/collector/types.js';
import { startAgent, type RunningAgent } from '../src/service/agent.js';
import { DEFAULTS, type ServeOptions } from '../src/service/options.js';

export class ScriptedCollector implements Collector {
  private readonly listeners = new Set<CollectorListener>();
  private diskList: DiskInfo[];
  closed = false;
  ios = 0;
  readonly schema: BucketSchema;

  constructor(
    readonly options: CollectorOptions,
    disks: DiskInfo[],
  ) {
    this.diskList = disks;
    this.schema = options.schema ?? BUCKET_SCHEMA;
  }

  disks(): readonly DiskInfo[] {
    return this.diskList;
  }

  stats(): CollectorStats {
    return {
      ios: this.ios,
      bpfRunTimeNs: this.ios * 200,
      bpfNsPerIo: this.ios > 0 ? 200 : null,
      samplesDropped: 0,
      samplesLost: 0,
      recursionMisses: 0,
      hooks: 'tp_btf',
      kernel: Object.fromEntries(COUNTER_NAMES.map((n) => [n, 0])) as Record<CounterName, number>,
      lastFrameLagS: 0.01,
      harvestLost: 0,
      lateIos: 0,
    };
  }

  listen(listener: CollectorListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  emit(frame: Frame): void {
    for (const d of frame.disks) for (const c of d.cls) this.ios += c.n;
    for (const l of this.listeners) l.frame?.(frame);
  }

  emitSamples(samples: readonly IoSample[]): void {
    for (const l of this.listeners) l.samples?.(samples);
  }

  setDisks(disks: DiskInfo[]): void {
    this.diskList = disks;
    for (const l of this.listeners) l.disks?.(disks);
  }
}

export const TEST_DISKS: DiskInfo[] = [
  { dev: '7:0', name: 'loop0', kind: 'request', present: true },
  { dev: '7:1', name: 'loop1', kind: 'request', present: true },
  { dev: '8:0', name: 'sda', kind: 'request', present: true },
  { dev: '253:0', name: 'dm-0', kind: 'bio', present: true },
];

export interface TestAgent {
  readonly agent: RunningAgent;
  readonly collector: ScriptedCollector;
  readonly dataDir: string;
  readonly webRoot: string;
  readonly base: string;
  readonly streamUrl: string;
  readonly logs: string[];
}

/** Starts an in-process agent on 127.0.0.1:<free port> with a temp data dir and a tiny dashboard build. */
export async function startTestAgent(
  t: { after(fn: () => void | Promise<void>): void },
  overrides: Partial<ServeOptions> & { withSite?: boolean; collectorDisks?: DiskInfo[] } = {},
): Promise<TestAgent> {
  const dataDir = mkdtempSync(join(tmpdir(), 'blkheat-agent-'));
  const webRoot = mkdtempSync(join(tmpdir(), 'blkheat-web-'));
  if (overrides.withSite !== false) {
    mkdirSync(join(webRoot, 'assets'));
    writeFileSync(
      join(webRoot, 'index.html'),
      '<!doctype html><title>blkheat</title><script type="module" src="/assets/app-1234.js"></script>',
    );
    writeFileSync(join(webRoot, 'assets', 'app-1234.js'), 'console.log("dashboard");');
    writeFileSync(join(webRoot, '.secret'), 'hidden');
  }
  let collector: ScriptedCollector | undefined;
  const logs: string[] = [];
  const { withSite: _ignored, collectorDisks = TEST_DISKS, ...rest } = overrides;
  const options: ServeOptions = {
    host: '127.0.0.1',
    port: 0,
    token: undefined,
    allowOrigins: [],
    historySeconds: DEFAULTS.historySeconds,
    maxHistoryBytes: DEFAULTS.maxHistoryBytes,
    maxSampleBytes: DEFAULTS.maxSampleBytes,
    dataDir,
    user: undefined,
    disks: [],
    samplesBudget: 100,
    webRoot,
    schema: BUCKET_SCHEMA,
    instance: 'test-host',
    ...rest,
  };
  const agent = await startAgent(options, {
    createCollector: async (o) => (collector = new ScriptedCollector(o, collectorDisks.slice())),
    log: (l) => logs.push(l),
  });
  t.after(async () => {
    await agent.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(webRoot, { recursive: true, force: true });
  });
  const base = agent.url.replace(/\/$/, '');
  return {
    agent,
    collector: collector as ScriptedCollector,
    dataDir,
    webRoot,
    base,
    streamUrl: `${base.replace(/^http/, 'ws')}/api/v1/stream`,
    logs,
  };
}

/** Unix second now. */
export function nowS(): number {
  return Math.floor(Date.now() / 1000);
}

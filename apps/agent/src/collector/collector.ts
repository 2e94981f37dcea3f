/**
 * The block I/O collector: loads and attaches blkheat's kernel programs (loader.ts), and once per
 * second (just after each wall-clock second closes) harvests that second's histograms from the
 * kernel (decode/harvest.ts), drains the sampled I/O records (decode/sample-drain.ts), measures the
 * untimed I/Os against /proc/diskstats (decode/untimed.ts; 2 ms after each second closes, by
 * decode/untimed-tracker.ts), scans what is in flight (decode/inflight.ts), reads the host's I/O
 * pressure and the disks' marks (decode/second-marks.ts), and emits one Frame per second, in
 * order, no gaps. This file is the per-second cycle itself: the harvest, the late entries, the
 * sample ledger and the untimed books advance together here, second by second.
 */
import { enableStats, possibleCpus, type StatsHandle } from '@blkheat/bpf-loader';
import { BUCKET_SCHEMA, type BucketSchema, type DiskInfo, type Frame } from '@blkheat/shared-types';
import { CgroupNamer } from './host/cgroups.js';
import { ClassNamer } from './decode/classes.js';
import { WallClock } from './host/clock.js';
import { DeviceRegistry } from './host/devices.js';
import { DiskScope } from './host/disk-scope.js';
import { errorText } from './errors.js';
import { buildFrame, type SlotEntry } from './decode/frame-builder.js';
import { histTableOf, HistogramHarvester } from './decode/harvest.js';
import { type InflightScan, InflightScanner } from './decode/inflight.js';
import { SecondMarkReader } from './decode/second-marks.js';
import { KernelControls } from './decode/kernel-controls.js';
import { kernelFactsOf } from './host/kernel-facts.js';
import { readKernelAbi, type KernelAbi } from './abi/kernel-abi.js';
import { parseDevString, zeroCounters } from './abi/layout.js';
import { attachBioPrograms, checkLayout, defaultObjectPath, loadObject, objectPathFor, programRunStats, type Loaded } from './loader.js';
import { SampleDrain } from './decode/sample-drain.js';
import { SampleBudget, SampleLedger } from './decode/sampling.js';
import { DEFAULT_SAMPLE_BUDGET, type Collector, type CollectorListener, type CollectorOptions, type CollectorStats } from './types.js';
import { UntimedMeter } from './decode/untimed.js';
import { UntimedTracker } from './decode/untimed-tracker.js';

/** How long after a second closes it is harvested: every program that saw an I/O of that second has long finished. */
const HARVEST_DELAY_MS = 120;
/**
 * How long after a second closes the untimed I/Os are measured: as soon as possible, so that
 * what is found is dated to the second that just closed (see decode/untimed.ts), and no sooner than a
 * timer of ms resolution can be trusted to have passed the second's end.
 */
const MEASURE_DELAY_MS = 2;
const RESCAN_EVERY_TICKS = 5;

export async function createCollector(options: CollectorOptions = {}): Promise<Collector> {
  const collector = new BlockCollector(options);
  await collector.start();
  return collector;
}

class BlockCollector implements Collector {
  readonly schema: BucketSchema;
  private abi!: KernelAbi;
  private readonly devices = new DeviceRegistry();
  private readonly listeners = new Set<CollectorListener>();
  private readonly budget: SampleBudget | undefined;
  private namer!: ClassNamer;
  private readonly cgroups = CgroupNamer.forThisMachine();
  private scope!: DiskScope;
  private loaded!: Loaded;
  private harvester!: HistogramHarvester;
  private controls!: KernelControls;
  private samples: SampleDrain | undefined;
  private statsHandle: StatsHandle | undefined;
  private clock!: WallClock;
  private nextSlot = 0;
  private lastIos = 0;
  private tickCount = 0;
  private tickTimer: NodeJS.Timeout | undefined;
  private measureTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private bioAttached = false;
  private inflight: InflightScanner | undefined;
  private marks!: SecondMarkReader;
  private untimed!: UntimedMeter;
  private untimedTracker!: UntimedTracker;
  private readonly seenDevs = new Set<number>();
  /** Entries of seconds already emitted, or of a frame that failed to build: counted in the next second emitted. */
  private lateEntries: SlotEntry[] = [];
  private totals = { ios: 0, samplesDropped: 0, lastFrameLagS: null as number | null, lateIos: 0 };
  private knownDisks: readonly DiskInfo[] = [];

  constructor(private readonly options: CollectorOptions) {
    this.schema = options.schema ?? BUCKET_SCHEMA;
    defaultObjectPath(this.schema); // an unknown scale is refused here, before anything starts
    const samples = options.samples ?? { budgetPerSecond: DEFAULT_SAMPLE_BUDGET };
    this.budget = samples === false ? undefined : new SampleBudget(samples.budgetPerSecond);
  }

  async start(): Promise<void> {
    const facts = kernelFactsOf(this.options.btf);
    this.abi = readKernelAbi(objectPathFor(this.schema));
    this.namer = new ClassNamer(facts.reqOps, this.abi.classBits);
    this.scope = DiskScope.of(this.devices, this.options.disks ?? [], this.options.partitions === true);
    const cpus = possibleCpus();
    this.untimed = new UntimedMeter(undefined, this.scope.partitions ? (dev) => this.devices.devsOfDisk(dev).slice(1) : undefined);
    this.loaded = await loadObject(facts, {
      options: this.options,
      schema: this.schema,
      abi: this.abi,
      samples: this.budget !== undefined,
      filterDisks: this.scope.only !== undefined,
      namer: this.namer,
      log: (line) => this.log(line),
    });
    const { object } = this.loaded;
    this.harvester = new HistogramHarvester({
      table: histTableOf(object),
      abi: this.abi,
      namer: this.namer,
      cgroups: this.cgroups,
      scope: this.scope,
      untimed: this.untimed,
      warn: (message) => this.warn(message),
    });
    this.scope.syncKernelFilter(object);
    this.controls = new KernelControls(object, this.abi, cpus, this.budget);
    this.untimedTracker = new UntimedTracker({
      meter: this.untimed,
      controls: this.controls,
      scope: this.scope,
      disks: () => this.knownDisks,
      warn: (message) => this.warn(message),
      diskCountSlots: this.abi.diskCountSlots,
    });
    checkLayout(object, this.abi, this.budget !== undefined);
    const say = { log: (line: string) => this.log(line), warn: (message: string) => this.warn(message) };
    this.marks = new SecondMarkReader(object, this.abi, this.loaded.wbtEvents, this.cgroups.source, say);
    if (facts.hasInflightScan) this.inflight = new InflightScanner(object, this.abi);
    else this.log('kernel too old for the in-flight scan (no bpf_loop): I/Os in flight are not reported');
    if (facts.hidesInitContext) {
      this.log(
        "note: this kernel runs no BPF program on top of pid 1's threads (bpf_prog_aux.init_owned): I/Os that complete there are shown as untimed",
      );
    }

    if (this.options.bpfStats !== false) {
      try {
        this.statsHandle = enableStats();
      } catch (err) {
        this.warn(`BPF run-time statistics unavailable (${errorText(err)}); BPF ns per I/O will not be reported`);
      }
    }
    this.clock = new WallClock();
    this.controls.writeSettings(this.clock.offsetNs, 0);
    const now = this.clock.slotNow();
    for (let s = now; s < now + this.abi.budgetSlots; s++) this.controls.resetBudget(s);
    this.nextSlot = now;
    if (this.budget) {
      this.samples = new SampleDrain({
        ring: object.openRingBuffer('samples', { maxQueued: 1 << 16 }),
        abi: this.abi,
        ledger: new SampleLedger(this.budget.perSecond),
        scope: this.scope,
        namer: this.namer,
        cgroups: this.cgroups,
        clock: this.clock,
        submitPhase: this.loaded.submitPhase,
        warn: (message) => this.warn(message),
      });
    }
    this.devices.rescan();
    this.knownDisks = this.devices.list(this.seenDevs);
    this.syncBioHooks();
    this.scheduleTick();
    this.scheduleMeasure();
  }

  disks(): readonly DiskInfo[] {
    return this.knownDisks;
  }

  listen(listener: CollectorListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stats(): CollectorStats {
    const { runTimeNs, recursionMisses } = programRunStats(this.loaded);
    const counters = this.controls.readCounters();
    return {
      ios: this.totals.ios,
      bpfRunTimeNs: runTimeNs,
      bpfNsPerIo: this.statsHandle && this.totals.ios > 0 ? runTimeNs / this.totals.ios : null,
      samplesDropped: this.totals.samplesDropped,
      samplesLost: (counters?.ringLost ?? 0) + (this.samples?.dropped ?? 0),
      recursionMisses,
      hooks: this.loaded.flavour,
      kernel: counters ?? zeroCounters(),
      lastFrameLagS: this.totals.lastFrameLagS,
      harvestLost: this.harvester.harvestLost,
      lateIos: this.totals.lateIos,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.tickTimer);
    clearTimeout(this.measureTimer);
    this.samples?.stopTimer();
    try {
      // Emit everything recorded, the current (partial) second included.
      this.untimedTracker.measureNow(this.clock.slotNow());
      this.tick(this.clock.slotNow() + 1);
    } catch (err) {
      this.warn(`final harvest failed: ${errorText(err)}`);
    }
    this.samples?.close();
    for (const link of this.loaded.links) link.close();
    this.loaded.object.close();
    this.statsHandle?.close();
  }

  // ---- per second ----

  private scheduleTick(): void {
    if (this.closed) return;
    const now = Date.now();
    const delay = 1000 - (now % 1000) + HARVEST_DELAY_MS;
    this.tickTimer = setTimeout(() => {
      try {
        this.tick(this.clock.slotNow());
      } catch (err) {
        this.warn(`harvest failed, will retry next second: ${errorText(err)}`);
      }
      this.scheduleTick();
    }, delay);
  }

  private scheduleMeasure(): void {
    if (this.closed) return;
    const delay = 1000 - (Date.now() % 1000) + MEASURE_DELAY_MS;
    this.measureTimer = setTimeout(() => {
      this.untimedTracker.measureNow(this.clock.slotNow() - 1);
      this.scheduleMeasure();
    }, delay);
  }

  /** Harvests and emits every second before `current`. */
  private tick(current: number): void {
    this.samples?.drain();
    // Only when the per-disk table cannot be trusted: diskstats first, then every count of ours
    // (see decode/untimed.ts for why the order matters).
    const kernelCounts = this.untimedTracker.atHarvest ? this.untimed.snapshot() : undefined;
    // The programs' own running count, read before the map: every I/O in it is in the map by now.
    const counters = this.controls.readCounters();
    const { bySlot, open, openCount } = this.harvester.harvest(current, this.nextSlot, this.lateEntries);
    this.harvester.audit(counters, openCount);
    // From here on the closed seconds' kernel entries are deleted: nothing below may lose them.
    // A step that fails is reported and skipped; the seconds are emitted all the same.
    if (kernelCounts) this.untimedTracker.measureAtHarvest(kernelCounts, open, current - 1);
    let inflight: InflightScan | undefined;
    try {
      inflight = this.scanInflight();
    } catch (err) {
      this.warn(`in-flight scan failed: ${errorText(err)}`);
    }
    // Measured now too, so they go with the newest second; read only when a second is emitted.
    const marks = this.nextSlot < current ? this.marks.read(this.knownDisks, bySlot) : undefined;
    let lastCount = this.lastIos;
    for (let slot = this.nextSlot; slot < current; slot++) {
      let entries = bySlot.get(slot) ?? [];
      if (this.lateEntries.length > 0) {
        // Entries for seconds already emitted (only possible after a clock step): never lost,
        // counted in the next second we emit.
        for (const e of this.lateEntries) this.totals.lateIos += e.value.count;
        entries = entries.concat(this.lateEntries);
        this.lateEntries = [];
      }
      // Untimed I/Os go with the second they were found after; the in-flight state was measured
      // now: it goes with the newest second.
      const newest = slot === current - 1;
      let frame: Frame;
      try {
        frame = buildFrame(
          slot,
          entries,
          this.devices,
          this.namer,
          {
            partitions: this.scope.partitions,
            schema: this.schema,
            submitPhase: this.loaded.submitPhase,
            ...(this.scope.only ? { only: this.scope.only } : {}),
          },
          {
            extraDropped: this.samples?.refusedIn(slot),
            untimed: this.untimedTracker.found(slot),
            ...(newest ? { inflight: inflight?.byDisk, tagSleepers: inflight?.tagSleepers, ...marks } : {}),
          },
        );
      } catch (err) {
        // Its entries are kept and counted in the next second emitted, never lost.
        this.warn(`building the frame of second ${slot} failed (its I/Os go into the next second): ${errorText(err)}`);
        this.lateEntries.push(...entries);
        continue;
      }
      this.untimedTracker.emitted(slot);
      let count = 0;
      for (const e of entries) {
        count += e.value.count;
        if (e.value.count > 0) this.seenDevs.add(this.devices.resolve(e.dev).wholeDev);
      }
      for (const d of frame.disks) this.totals.samplesDropped += d.dropped ?? 0;
      this.totals.ios += count;
      lastCount = count;
      // A disk seen for the first time is announced (with its name) before its first frame.
      if (frame.disks.some((d) => !this.knownDisks.some((k) => k.dev === d.dev))) this.rescanDevices();
      this.emitSamples(slot);
      this.totals.lastFrameLagS = this.clock.nowSeconds() - (slot + 1);
      this.emitFrame(frame);
    }
    this.nextSlot = Math.max(this.nextSlot, current);
    this.lastIos = lastCount;
    if (this.closed) return;
    this.clock.resync();
    this.controls.writeSettings(this.clock.offsetNs, lastCount);
    this.controls.resetBudget(current + 1);
    if (++this.tickCount % RESCAN_EVERY_TICKS === 0 || this.knownDisks.length === 0) this.rescanDevices();
  }

  private scanInflight(): InflightScan | undefined {
    if (!this.inflight) return undefined;
    try {
      // A request or bio the scan reads through a stale slot (a loop device detached since: its
      // requests' memory freed and reused) can name a device number no disk has; one seen once
      // on a frame of the flush-heavy conservation test. Only present devices have I/O in flight.
      return this.inflight.scan(
        (dev) => (this.devices.resolve(dev).present ? this.scope.shownDev(dev) : undefined),
        (cls) => this.namer.name(cls),
      );
    } catch (err) {
      this.inflight = undefined;
      this.warn(`the in-flight scan failed and is off until restart: ${errorText(err)}`);
      return undefined;
    }
  }

  private emitSamples(slot: number): void {
    // Samples of seconds before this one that were not emitted (clock steps) go out now too.
    for (const samples of this.samples?.release(slot) ?? []) for (const l of this.listeners) l.samples?.(samples);
  }

  private emitFrame(frame: Frame): void {
    for (const l of this.listeners) {
      try {
        l.frame?.(frame);
      } catch (err) {
        this.warn(`frame listener failed: ${errorText(err)}`);
      }
    }
  }

  private rescanDevices(): void {
    this.devices.rescan();
    this.scope.syncKernelFilter(this.loaded.object); // partitions created since start
    const disks = this.devices.list(this.seenDevs);
    if (JSON.stringify(disks) !== JSON.stringify(this.knownDisks)) {
      this.knownDisks = disks;
      for (const l of this.listeners) l.disks?.(disks);
    }
    this.syncBioHooks();
  }

  /**
   * Attaches the bio-based disks' programs once a traced bio-based disk (zram, dm, md, bcache)
   * has a size. Until then no program runs for each bio's end on the blk-mq disks (nor, without
   * the submit phase, for each bio's submission): block_bio_complete fires for every bio, and a
   * program there costs every I/O of every disk. A disk sized after
   * start is traced from the next rescan (within RESCAN_EVERY_TICKS s); its I/O before that is
   * not timed.
   */
  private syncBioHooks(): void {
    // With the submit phase their hooks are attached from the start (Loaded.bioPrograms is empty).
    if (this.bioAttached || this.closed || this.loaded.bioPrograms.length === 0) return;
    const wanted = this.knownDisks.find(
      (d) => d.kind === 'bio' && d.present && (d.sizeBytes ?? 0) > 0 && this.scope.includes(parseDevString(d.dev) ?? -1),
    );
    if (!wanted) return;
    let attached: number;
    try {
      attached = attachBioPrograms(this.loaded);
    } catch (err) {
      this.warn(`cannot trace bio-based disks such as ${wanted.name}: ${errorText(err)}`);
      return;
    }
    this.bioAttached = true;
    this.log(`attached ${attached} bio programs for bio-based disks (${wanted.name}): ${this.loaded.bioPrograms.join(', ')}`);
  }

  private log(line: string): void {
    this.options.onLog?.(line);
  }

  private warn(message: string): void {
    this.log(`warning: ${message}`);
    for (const l of this.listeners) l.warning?.(message);
  }
}

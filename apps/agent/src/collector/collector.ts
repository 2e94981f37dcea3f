/**
 * The block I/O collector: loads and attaches blkheat's kernel programs (loader.ts), and once
 * per second (just after each wall-clock second closes) harvests that second's histograms from
 * the kernel, drains the sampled I/O records, measures the untimed I/Os against /proc/diskstats,
 * scans what is in flight, and emits one Frame per second, in order, no gaps.
 * Over 400 lines because the per-second cycle is one state machine: the harvest, the late
 * entries, the sample ledger and the untimed meter must advance together, second by second, and
 * splitting them would spread that invariant across files.
 */
import { enableStats, loadKernelBtf, possibleCpus, type BpfMap, type Link, type RingBuffer, type StatsHandle } from '@blkheat/bpf-loader';
import { BUCKET_SCHEMA, type BucketSchema, type DiskInfo, type Frame, type InflightState, type OpGroup } from '@blkheat/shared-types';
import { CgroupNamer } from './cgroups.js';
import { CollectorError, errorText } from './errors.js';
import { checkLayout, loadObject, type Loaded } from './loader.js';
import { ClassNamer } from './classes.js';
import { monotonicNs, slotOf, wallMicros, wallOffsetNs } from './clock.js';
import { DeviceRegistry } from './devices.js';
import { InflightScanner } from './inflight.js';
import { UntimedMeter, zeroGroups, type GroupCounts } from './untimed.js';
import { buildFrame, type SlotEntry } from './frame-builder.js';
import { readKernelFacts, type KernelFacts } from './kernel-facts.js';
import {
  addPerCpuHist,
  BUDGET_SLOTS,
  COUNTERS_SIZE,
  decodeCounters,
  decodeHistKey,
  decodeSample,
  devString,
  parseDevString,
  perCpuCount,
  u32,
  emptyHistValue,
  encodeBudget,
  encodeSettings,
  schemaLayout,
  type SchemaLayout,
  SAMPLE_OUTLIER,
  SAMPLE_QUEUE_KNOWN,
  SAMPLE_SIZE,
  type CounterName,
  type HistValue,
} from './layout.js';
import { DEFAULT_SAMPLE_BUDGET, SampleBudget, SampleLedger } from './sampling.js';
import type { Collector, CollectorListener, CollectorOptions, CollectorStats } from './types.js';

/** How long after a second closes it is harvested: every program that saw an I/O of that second has long finished. */
const HARVEST_DELAY_MS = 120;
/** Samples are drained this often so the ring buffer never fills at the default budget. */
const DRAIN_INTERVAL_MS = 200;
const RESCAN_EVERY_TICKS = 5;
/** Re-sync the clock offset when it drifted by more than this (NTP slews, steps). */
const OFFSET_TOLERANCE_NS = 500_000n;

export async function createCollector(options: CollectorOptions = {}): Promise<Collector> {
  const collector = new BlockCollector(options);
  await collector.start();
  return collector;
}

class BlockCollector implements Collector {
  readonly schema: BucketSchema;
  private readonly layout: SchemaLayout;
  private readonly devices = new DeviceRegistry();
  private readonly listeners = new Set<CollectorListener>();
  private readonly budget: SampleBudget | undefined;
  private namer!: ClassNamer;
  private readonly cgroups = CgroupNamer.forThisMachine();
  private loaded!: Loaded;
  private hists!: BpfMap;
  private settingsMap!: BpfMap;
  private budgetMap!: BpfMap;
  private countersMap!: BpfMap;
  private ring: RingBuffer | undefined;
  private statsHandle: StatsHandle | undefined;
  private only: Set<number> | undefined;
  private cpus = 1;
  private offsetNs = 0n;
  private nextSlot = 0;
  private lastIos = 0;
  private tickCount = 0;
  private tickTimer: NodeJS.Timeout | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private bioAttached = false;
  private inflight: InflightScanner | undefined;
  private untimed!: UntimedMeter;
  /** Untimed I/Os found but not yet put in a frame (found when no second closed). */
  private untimedPending = new Map<number, Partial<GroupCounts>>();
  private readonly seenDevs = new Set<number>();
  private readonly ledger: SampleLedger | undefined;
  private lateEntries: SlotEntry[] = [];
  /** Closed-second keys read and emitted whose delete failed (hex): skipped, never counted twice. */
  private readonly harvestedKeys = new Set<string>();
  private totals = { ios: 0, samplesDropped: 0, lastFrameLagS: null as number | null };
  private knownDisks: readonly DiskInfo[] = [];

  constructor(private readonly options: CollectorOptions) {
    this.schema = options.schema ?? BUCKET_SCHEMA;
    try {
      this.layout = schemaLayout(this.schema.scale);
    } catch (err) {
      throw new CollectorError(errorText(err));
    }
    const samples = options.samples ?? { budgetPerSecond: DEFAULT_SAMPLE_BUDGET };
    this.budget = samples === false ? undefined : new SampleBudget(samples.budgetPerSecond);
    this.ledger = this.budget && new SampleLedger(this.budget.perSecond);
  }

  async start(): Promise<void> {
    const facts = this.kernelFacts();
    this.namer = new ClassNamer(facts.reqOps);
    this.only = this.resolveDiskFilter();
    this.cpus = possibleCpus();
    this.untimed = new UntimedMeter(undefined, this.options.partitions ? (dev) => this.devices.devsOfDisk(dev).slice(1) : undefined);
    this.loaded = await loadObject(facts, {
      options: this.options,
      schema: this.schema,
      layout: this.layout,
      samples: this.budget !== undefined,
      filterDisks: this.only !== undefined,
      log: (line) => this.log(line),
    });
    const { object } = this.loaded;
    this.hists = object.map('hists');
    this.syncDiskFilter();
    this.settingsMap = object.map('settings');
    this.budgetMap = object.map('budget');
    this.countersMap = object.map('counters');
    checkLayout(object, this.layout, this.budget !== undefined);
    if (facts.hasInflightScan) this.inflight = new InflightScanner(object);
    else this.log('kernel too old for the in-flight scan (no bpf_loop): I/Os in flight are not reported');

    if (this.options.bpfStats !== false) {
      try {
        this.statsHandle = enableStats();
      } catch (err) {
        this.warn(`BPF run-time statistics unavailable (${errorText(err)}); BPF ns per I/O will not be reported`);
      }
    }
    this.offsetNs = wallOffsetNs();
    this.writeSettings(0);
    const now = slotOf(monotonicNs(), this.offsetNs);
    for (let s = now; s < now + BUDGET_SLOTS; s++) this.resetBudget(s);
    this.nextSlot = now;
    if (this.budget) {
      this.ring = object.openRingBuffer('samples', { maxQueued: 1 << 16 });
      this.drainTimer = setInterval(() => this.drainSamples(), DRAIN_INTERVAL_MS);
      this.drainTimer.unref();
    }
    this.devices.rescan();
    this.knownDisks = this.devices.list(this.seenDevs);
    this.syncBioHooks();
    this.scheduleTick();
  }

  disks(): readonly DiskInfo[] {
    return this.knownDisks;
  }

  listen(listener: CollectorListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stats(): CollectorStats {
    let runTimeNs = 0;
    let recursionMisses = 0;
    for (const name of this.loaded.programs) {
      try {
        const s = this.loaded.object.program(name).stats();
        runTimeNs += s.runTimeNs;
        recursionMisses += s.recursionMisses;
      } catch {
        // A closed object has no stats; report what we have.
      }
    }
    const counters = this.readCounters();
    return {
      ios: this.totals.ios,
      bpfRunTimeNs: runTimeNs,
      bpfNsPerIo: this.statsHandle && this.totals.ios > 0 ? runTimeNs / this.totals.ios : null,
      samplesDropped: this.totals.samplesDropped,
      samplesLost: (counters?.ringLost ?? 0) + (this.ring?.dropped ?? 0),
      recursionMisses,
      hooks: this.loaded.flavour,
      kernel: counters ?? decodeCounters(Buffer.alloc(COUNTERS_SIZE), COUNTERS_SIZE, 1),
      lastFrameLagS: this.totals.lastFrameLagS,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.tickTimer);
    clearInterval(this.drainTimer);
    try {
      // Emit everything recorded, the current (partial) second included.
      this.tick(slotOf(monotonicNs(), this.offsetNs) + 1);
    } catch (err) {
      this.warn(`final harvest failed: ${errorText(err)}`);
    }
    this.ring?.close();
    for (const link of this.loaded.links) link.close();
    this.loaded.object.close();
    this.statsHandle?.close();
  }

  // ---- start-up ----

  private kernelFacts(): KernelFacts {
    let btf;
    const path = this.options.btf ?? '/sys/kernel/btf/vmlinux';
    try {
      btf = loadKernelBtf(this.options.btf);
    } catch (err) {
      throw new CollectorError(
        `cannot read the kernel's BTF (${path}): ${errorText(err)}. blkheat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, or a BTF file for this kernel (--btf PATH)`,
        err,
      );
    }
    try {
      return readKernelFacts(btf);
    } finally {
      btf.close();
    }
  }

  private resolveDiskFilter(): Set<number> | undefined {
    const names = this.options.disks ?? [];
    if (names.length === 0) return undefined;
    const devs = new Set<number>();
    for (const name of names) {
      const dev = this.devices.lookup(name);
      if (dev === undefined) {
        throw new CollectorError(`disk '${name}' does not exist (disks here: ${this.devices.listWholeDisks().join(', ') || 'none'})`);
      }
      const id = this.devices.resolve(dev);
      if (!this.options.partitions) devs.add(id.wholeDev);
      // With partitions a whole disk names itself and its partitions, each shown on its own.
      else for (const d of id.isPartition ? [dev] : this.devices.devsOfDisk(dev)) devs.add(d);
    }
    return devs;
  }

  // ---- per second ----

  private scheduleTick(): void {
    if (this.closed) return;
    const now = Date.now();
    const delay = 1000 - (now % 1000) + HARVEST_DELAY_MS;
    this.tickTimer = setTimeout(() => {
      try {
        this.tick(slotOf(monotonicNs(), this.offsetNs));
      } catch (err) {
        this.warn(`harvest failed, will retry next second: ${errorText(err)}`);
      }
      this.scheduleTick();
    }, delay);
  }

  /** Harvests and emits every second before `current`. */
  private tick(current: number): void {
    this.drainSamples();
    // diskstats first, then every count of ours: see untimed.ts for why the order matters.
    const kernelCounts = this.untimed.snapshot();
    const { bySlot, open } = this.harvest(current);
    // From here on the closed seconds' kernel entries are deleted: nothing below may lose them.
    // A step that fails is reported and skipped; the seconds are emitted all the same.
    try {
      for (const [dev, found] of this.untimed.measure(kernelCounts, open, this.measuredDisks())) {
        const pending = this.untimedPending.get(dev) ?? {};
        for (const [g, n] of Object.entries(found) as [OpGroup, number][]) pending[g] = (pending[g] ?? 0) + n;
        this.untimedPending.set(dev, pending);
      }
    } catch (err) {
      this.warn(`measuring untimed I/Os failed (found next second instead): ${errorText(err)}`);
    }
    let inflight: Map<number, InflightState> | undefined;
    try {
      inflight = this.scanInflight();
    } catch (err) {
      this.warn(`in-flight scan failed: ${errorText(err)}`);
    }
    let lastCount = this.lastIos;
    for (let slot = this.nextSlot; slot < current; slot++) {
      let entries = bySlot.get(slot) ?? [];
      if (this.lateEntries.length > 0) {
        // Entries for seconds already emitted (only possible after a clock step): never lost,
        // counted in the next second we emit.
        entries = entries.concat(this.lateEntries);
        this.lateEntries = [];
      }
      // Untimed I/Os and the in-flight state were measured now: they go with the newest second.
      const newest = slot === current - 1;
      let frame: Frame;
      try {
        frame = buildFrame(
          slot,
          entries,
          this.devices,
          this.namer,
          { partitions: this.options.partitions === true, schema: this.schema, ...(this.only ? { only: this.only } : {}) },
          {
            extraDropped: this.ledger?.refusedIn(slot),
            ...(newest ? { untimed: this.untimedPending, inflight } : {}),
          },
        );
      } catch (err) {
        // Its entries are kept and counted in the next second emitted, never lost.
        this.warn(`building the frame of second ${slot} failed (its I/Os go into the next second): ${errorText(err)}`);
        this.lateEntries.push(...entries);
        continue;
      }
      if (newest) this.untimedPending = new Map();
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
      this.totals.lastFrameLagS = Number(monotonicNs() + this.offsetNs) / 1e9 - (slot + 1);
      this.emitFrame(frame);
    }
    this.nextSlot = Math.max(this.nextSlot, current);
    this.lastIos = lastCount;
    if (this.closed) return;
    this.resyncClock();
    this.writeSettings(lastCount);
    this.resetBudget(current + 1);
    if (++this.tickCount % RESCAN_EVERY_TICKS === 0 || this.knownDisks.length === 0) this.rescanDevices();
  }

  /**
   * Reads and deletes every histogram entry of a closed second (slot < current), and reads
   * (without deleting) the counts of the seconds still open, per shown disk and op group. Every
   * closed entry read is counted in the untimed books here, emitted or not.
   */
  private harvest(current: number): { bySlot: Map<number, SlotEntry[]>; open: Map<number, GroupCounts> } {
    const stride = this.hists.valueBufferSize / this.cpus;
    const bySlot = new Map<number, SlotEntry[]>();
    const open = new Map<number, GroupCounts>();
    const closedKeys: Buffer[] = [];
    // get_next_key + lookup walk the hash under RCU without taking bucket locks (a batch lookup
    // would lock buckets and size its buffer for the whole map: tens of MB per second).
    for (const keyBuf of this.hists.keys()) {
      if (this.harvestedKeys.size > 0 && this.harvestedKeys.has(keyBuf.toString('hex'))) {
        try {
          this.hists.delete(keyBuf);
          this.harvestedKeys.delete(keyBuf.toString('hex'));
        } catch {
          // Still there: still skipped.
        }
        continue;
      }
      const valueBuf = this.hists.lookup(keyBuf);
      if (!valueBuf) continue;
      const key = decodeHistKey(keyBuf);
      const group = this.namer.group(key.cls);
      const shown = this.shownDev(key.dev);
      if (key.slot >= current) {
        const n = group && shown !== undefined ? perCpuCount(valueBuf, stride, this.cpus) : 0;
        if (group && shown !== undefined && n > 0) {
          let counts = open.get(shown);
          if (!counts) open.set(shown, (counts = zeroGroups()));
          counts[group] += n;
        }
        continue;
      }
      const value: HistValue = emptyHistValue(this.layout.nrBuckets);
      addPerCpuHist(value, valueBuf, 0, stride, this.cpus);
      if (group && shown !== undefined && value.count > 0) this.untimed.addCounted(shown, group, value.count);
      const entry: SlotEntry = { dev: key.dev, cls: key.cls, size: key.size, cgroup: this.cgroups.name(key.cgroup), value };
      if (key.slot < this.nextSlot) this.lateEntries.push(entry);
      else {
        const list = bySlot.get(key.slot);
        if (list) list.push(entry);
        else bySlot.set(key.slot, [entry]);
      }
      closedKeys.push(keyBuf);
    }
    // Closed seconds are never written again, so deleting after reading loses nothing. A key
    // that cannot be deleted is remembered and skipped when read again: never counted twice.
    for (const keyBuf of closedKeys) {
      try {
        this.hists.delete(keyBuf);
      } catch (err) {
        this.harvestedKeys.add(keyBuf.toString('hex'));
        this.warn(`deleting a harvested histogram entry failed (it will not be counted again): ${errorText(err)}`);
      }
    }
    return { bySlot, open };
  }

  /** The disk an I/O of kernel dev_t `dev` is shown on (whole disk, or itself with --partitions); undefined if filtered out. */
  private shownDev(dev: number): number | undefined {
    const shown = this.options.partitions ? dev : this.devices.resolve(dev).wholeDev;
    return this.only && !this.only.has(shown) ? undefined : shown;
  }

  /** Disks whose untimed I/Os are measured: request-based ones (bio-based disks are timed per bio, see docs/accounting.md). */
  private *measuredDisks(): Iterable<number> {
    for (const d of this.knownDisks) {
      if (d.kind !== 'request' || !d.present) continue;
      const dev = parseDevString(d.dev);
      if (dev === undefined) continue;
      const devs = this.options.partitions ? this.devices.devsOfDisk(dev) : [dev];
      for (const x of devs) if (!this.only || this.only.has(x)) yield x;
    }
  }

  private scanInflight(): Map<number, InflightState> | undefined {
    if (!this.inflight) return undefined;
    try {
      return this.inflight.scan(
        (dev) => this.shownDev(dev),
        (cls) => this.namer.name(cls),
      ).byDisk;
    } catch (err) {
      this.inflight = undefined;
      this.warn(`the in-flight scan failed and is off until restart: ${errorText(err)}`);
      return undefined;
    }
  }

  private drainSamples(): void {
    const ledger = this.ledger;
    if (!this.ring || !ledger) return;
    let records: Buffer[];
    try {
      records = this.ring.consume();
    } catch (err) {
      this.warn(`draining samples failed: ${errorText(err)}`);
      return;
    }
    for (const rec of records) {
      if (rec.length < SAMPLE_SIZE) continue;
      const raw = decodeSample(rec);
      const slot = raw.slot;
      const id = this.devices.resolve(raw.dev);
      const diskDev = this.options.partitions ? raw.dev : id.wholeDev;
      if (this.only && !this.only.has(diskDev)) continue;
      ledger.offer(slot, diskDev, () => {
        // The kernel's slot is the truth; keep the displayed time inside it even if the clock
        // offset moved by a fraction of a millisecond since the kernel used it.
        const tsUs = Math.min(Math.max(wallMicros(raw.tsNs, this.offsetNs), slot * 1e6), slot * 1e6 + 999_999);
        return {
          ts_us: tsUs,
          dev: this.options.partitions ? devString(raw.dev) : devString(id.wholeDev),
          c: this.namer.name(raw.cls),
          sector: raw.sector,
          bytes: raw.bytes,
          q_ns: raw.flags & SAMPLE_QUEUE_KNOWN ? raw.queueNs : null,
          d_ns: raw.deviceNs,
          pid: raw.pid,
          comm: raw.comm,
          cgroup: Number(raw.cgroupId),
          cg: this.cgroups.name(raw.cgroupId),
          outlier: (raw.flags & SAMPLE_OUTLIER) !== 0,
        };
      });
    }
  }

  private emitSamples(slot: number): void {
    // Samples of seconds before this one that were not emitted (clock steps) go out now too.
    for (const samples of this.ledger?.release(slot) ?? []) for (const l of this.listeners) l.samples?.(samples);
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

  /** Tells the kernel which dev_t to trace under --disk: the disks and their partitions. */
  private syncDiskFilter(): void {
    if (!this.only) return;
    const filter = this.loaded.object.map('disk_filter');
    for (const dev of this.only) {
      const devs = this.options.partitions ? [dev] : this.devices.devsOfDisk(dev);
      for (const d of devs) filter.update(u32(d), Buffer.from([1]));
    }
  }

  private rescanDevices(): void {
    this.devices.rescan();
    this.syncDiskFilter(); // partitions created since start
    const disks = this.devices.list(this.seenDevs);
    if (JSON.stringify(disks) !== JSON.stringify(this.knownDisks)) {
      this.knownDisks = disks;
      for (const l of this.listeners) l.disks?.(disks);
    }
    this.syncBioHooks();
  }

  /**
   * Attaches the bio-based disks' programs once a traced bio-based disk (zram, dm, md, bcache)
   * has a size. Until then no program runs for each bio of the blk-mq disks: block_bio_queue
   * fires for every bio, and a program there costs every I/O of every disk. A disk sized after
   * start is traced from the next rescan (within RESCAN_EVERY_TICKS s); its I/O before that is
   * not timed.
   */
  private syncBioHooks(): void {
    if (this.bioAttached || this.closed) return;
    const wanted = this.knownDisks.find(
      (d) => d.kind === 'bio' && d.present && (d.sizeBytes ?? 0) > 0 && (!this.only || this.only.has(parseDevString(d.dev) ?? -1)),
    );
    if (!wanted) return;
    const links: Link[] = [];
    try {
      for (const name of this.loaded.bioPrograms) links.push(this.loaded.object.attach(name));
    } catch (err) {
      for (const link of links) link.close();
      this.warn(`cannot trace bio-based disks such as ${wanted.name}: ${errorText(err)}`);
      return;
    }
    this.loaded.links.push(...links);
    this.bioAttached = true;
    this.log(`attached ${links.length} bio programs for bio-based disks (${wanted.name}): ${this.loaded.bioPrograms.join(', ')}`);
  }

  // ---- kernel settings ----

  private resyncClock(): void {
    const fresh = wallOffsetNs();
    const drift = fresh - this.offsetNs;
    if (drift > OFFSET_TOLERANCE_NS || drift < -OFFSET_TOLERANCE_NS) this.offsetNs = fresh;
  }

  private writeSettings(expectedIos: number): void {
    const settings = encodeSettings({
      wallOffsetNs: this.offsetNs,
      fairThreshold: this.budget?.fairThreshold(expectedIos) ?? 0,
      fairBudget: this.budget?.fairBudget ?? 0,
      outlierBudget: this.budget?.outlierBudget ?? 0,
    });
    this.settingsMap.update(u32(0), settings);
  }

  /** Prepares the budget counters of a coming second (its array entry last served 4 s ago). */
  private resetBudget(slot: number): void {
    this.budgetMap.update(u32(slot % BUDGET_SLOTS), encodeBudget(slot));
  }

  private readCounters(): Record<CounterName, number> | undefined {
    try {
      const value = this.countersMap.lookup(u32(0));
      return value ? decodeCounters(value, this.countersMap.valueBufferSize / this.cpus, this.cpus) : undefined;
    } catch {
      return undefined;
    }
  }

  private log(line: string): void {
    this.options.onLog?.(line);
  }

  private warn(message: string): void {
    this.log(`warning: ${message}`);
    for (const l of this.listeners) l.warning?.(message);
  }
}

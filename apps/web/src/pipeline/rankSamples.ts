/**
 * Sampled I/Os at the visible range's percentile ranks: for each shown disk whose percentiles sit
 * in buckets of few I/Os (model/sampledRanks.ts says which), the samples of those buckets, asked
 * of the agent live or matched in an imported snapshot (fetchSamples, as the samples table), under
 * the phase and filters the heat maps are drawn with. With every I/O of a bucket in hand, its
 * percentiles are shown exact (shownQuantiles in store/shownWindow.ts); without, as bounds.
 *
 * Cheap to keep up with a live view: a question covers only the seconds whose heat map columns
 * hold I/Os of those buckets; the answers are kept (per disk: the seconds and buckets they cover)
 * and each new summary is served from them, a live view asking only for its newest seconds; and
 * one question is out at a time (the newest summary waits for it). What is published for a
 * summary is what the kept answers say of its range, so a count check per bucket (model/
 * sampledRanks.ts) is all it takes to know whether they are every I/O of it.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import { type BucketSchema, samplePhaseNs } from '@blkheat/shared-types';
import { cgroupInForce } from '../model/cgroups.js';
import { bucketRangeNs } from '../model/latency.js';
import { byBucket, columnsWithRows, EXACT_QUERY_MAX, rankBucketRange, type SampledByBucket } from '../model/sampledRanks.js';
import { type SamplesQuery, scopeQuery } from '../model/samples.js';
import type { Summary } from '../model/summary.js';
import type { RankSamplesSlice, SliceStore } from '../store/pipelineStore.js';
import type { UiReader } from '../store/uiStore.js';
import type { Busy } from './busy.js';
import { fetchSamples } from './selectedSamples.js';
import type { AgentSource, DataSource } from './source.js';

export interface RankSamplesOptions {
  readonly ui: UiReader;
  readonly store: SliceStore<RankSamplesSlice>;
  readonly client?: AgentSource | undefined;
  readonly source: DataSource;
  readonly busy: Busy;
}

/** One disk's sampled I/Os in buckets lo..hi over seconds [from, to), as answered. */
interface Held {
  readonly from: number;
  readonly to: number;
  readonly lo: number;
  readonly hi: number;
  /** Completion time (µs) and latency of the phase asked (ns) of each. */
  readonly samples: readonly { readonly tsUs: number; readonly ns: number }[];
  /** More matched than an answer holds: nothing exact to be had from it. */
  readonly incomplete: boolean;
}

/**
 * A question for one disk: seconds [from, to) of buckets lo..hi, replacing what is held, or
 * (`keepFrom` set) added to it, whose samples before `keepFrom` are dropped (the summary has no
 * I/O of those buckets before it, so they can say nothing of it).
 */
interface Ask {
  readonly dev: string;
  readonly from: number;
  readonly to: number;
  readonly lo: number;
  readonly hi: number;
  readonly keepFrom?: number | undefined;
}

export class RankSamples {
  /** What the held answers were asked under (source, phase, filters): any change drops them. */
  private heldKey: string | undefined;
  private held = new Map<string, Held>();
  private generation = 0;
  private asking = false;
  /** The newest summary that came while a question was out. */
  private waiting: Summary | undefined;

  constructor(private readonly o: RankSamplesOptions) {}

  /** Forgets everything held (a new source). */
  reset(): void {
    this.heldKey = undefined;
    this.held = new Map();
    this.generation++;
    this.asking = false;
    this.waiting = undefined;
    this.o.store.setState({ rankSamples: undefined });
  }

  /** A new summary is on screen: publishes what is held for it, and asks for what it lacks. */
  async update(summary: Summary | undefined): Promise<void> {
    if (!summary) return;
    const scope = this.scope();
    if (scope.key !== this.heldKey) {
      this.heldKey = scope.key;
      this.held = new Map();
    }
    this.publish(summary);
    const asks = this.asksFor(summary);
    if (asks.length === 0) return;
    if (this.asking) {
      this.waiting = summary;
      return;
    }
    this.asking = true;
    const gen = this.generation;
    const schema = this.o.source.schema();
    await this.o.busy.during(async () => {
      const answers = await Promise.all(asks.map((a) => this.ask(a, scope, schema)));
      if (gen !== this.generation) return;
      this.asking = false;
      if (scope.key === this.heldKey) answers.forEach((held, i) => held && this.held.set((asks[i] as Ask).dev, held));
      const waited = this.waiting;
      this.waiting = undefined;
      // The summary on screen now, served with the answers; one that came meanwhile and lacked
      // more is asked for now (a question that failed is asked again with the next summary, not at once).
      const current = this.o.store.getState().summary;
      if (!current) return;
      if (waited === current) await this.update(current);
      else this.publish(current);
    });
  }

  /** The phase and filters the heat maps are drawn with (pipeline/heatMaps.ts: a cgroup replaces the class filter), and their key. */
  private scope(): { key: string; kind: SamplesQuery['kind']; classes: readonly string[]; cgroup: string | undefined } {
    const ui = this.o.ui.getState();
    const cgroup = cgroupInForce(ui.cgroup, ui.kind, this.o.store.getState().cgroupPhases);
    const classes = cgroup === undefined ? ui.classes : [];
    const snapshot = this.o.source.snapshot;
    const key = JSON.stringify([snapshot ? `snapshot:${snapshot.createdAt}` : 'live', ui.kind, classes, cgroup ?? null]);
    return { key, kind: ui.kind, classes, cgroup };
  }

  /** What `summary` needs that is not held: per disk, the seconds holding I/Os of its few-I/O percentile buckets. */
  private asksFor(summary: Summary): Ask[] {
    const window = this.o.store.getState().window;
    const asks: Ask[] = [];
    for (const [dev, h] of summary.perDisk) {
      const range = rankBucketRange(h.quantiles, h.hist);
      const m = window?.matrices.get(dev);
      if (!range || !m || m.step !== summary.step) continue;
      const cols = columnsWithRows((c, r) => m.count(c, r), summary.from / summary.step, summary.to / summary.step, range.lo, range.hi);
      if (!cols) continue;
      const [from, to] = [cols[0] * summary.step, cols[1] * summary.step];
      const held = this.held.get(dev);
      const buckets = held !== undefined && held.lo <= range.lo && held.hi >= range.hi;
      if (buckets && held.from <= from && held.to >= to) continue;
      if (buckets && held.incomplete) continue; // more than an answer holds: not asked again until its buckets change
      if (buckets && held.from <= from && held.to > from) asks.push({ dev, from: held.to, to, lo: held.lo, hi: held.hi, keepFrom: from });
      else asks.push({ dev, from, to, lo: range.lo, hi: range.hi });
    }
    return asks;
  }

  /** Asks one question; what is held for its disk afterwards (undefined: no answer, asked again next time). */
  private async ask(a: Ask, scope: ReturnType<RankSamples['scope']>, schema: BucketSchema): Promise<Held | undefined> {
    const { minNs, maxNs } = bucketRangeNs(a.lo, a.hi, schema);
    const query = scopeQuery(
      { dev: a.dev, from: a.from, to: a.to, kind: scope.kind, classes: scope.classes, cgroup: scope.cgroup },
      minNs,
      maxNs,
    );
    try {
      const { rows, truncated } = await fetchSamples(this.o.source, this.o.client, query, EXACT_QUERY_MAX);
      const samples = rows.flatMap((s) => {
        const ns = samplePhaseNs(s, scope.kind);
        return ns === null ? [] : [{ tsUs: s.ts_us, ns }];
      });
      const before = a.keepFrom !== undefined ? this.held.get(a.dev) : undefined;
      if (!before || a.keepFrom === undefined) return { from: a.from, to: a.to, lo: a.lo, hi: a.hi, samples, incomplete: truncated };
      const keepUs = a.keepFrom * 1e6;
      return {
        ...before,
        from: Math.max(before.from, a.keepFrom),
        to: a.to,
        samples: [...before.samples.filter((x) => x.tsUs >= keepUs), ...samples],
        incomplete: truncated,
      };
    } catch {
      // No samples to be had now (not connected): the bounds stay.
      return undefined;
    }
  }

  /** Publishes, for `summary`, the held samples inside its range by bucket. */
  private publish(summary: Summary): void {
    // Nothing held and nothing shown: nothing to publish (no redraw for it).
    if (this.held.size === 0 && (this.o.store.getState().rankSamples?.byDev.size ?? 0) === 0) return;
    const schema = this.o.source.schema();
    const from = summary.from * 1e6;
    const to = summary.to * 1e6;
    const byDev = new Map<string, SampledByBucket>();
    for (const [dev, held] of this.held) {
      if (held.incomplete || !summary.perDisk.has(dev)) continue;
      byDev.set(
        dev,
        byBucket(
          held.samples.filter((s) => s.tsUs >= from && s.tsUs < to).map((s) => s.ns),
          schema,
        ),
      );
    }
    this.o.store.setState({ rankSamples: { summary, byDev } });
  }
}

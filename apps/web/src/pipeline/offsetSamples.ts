/**
 * The offset scatter's samples: every sampled I/O of the panel disk in the visible range
 * (whole seconds), under the class and cgroup filters and of the latency kind on screen, asked
 * of the agent live or matched in an imported snapshot (fetchSamples, as the samples table).
 * Bounded: at most OFFSET_SAMPLE_LIMIT, `truncated` when more exist; then spread over the whole
 * range with the slowest kept (`pick: 'spread'`), or the oldest from an agent that cannot
 * spread (`pick` says which). An answer for a query no longer current is dropped; the same query
 * is not asked twice in a row.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import { type SampleScope, type SamplesQuery, scopeQuery } from '../model/samples.js';
import type { OffsetSamplesSlice, OffsetSamplesState } from '../store/pipelineStore.js';
import { fetchSamples, type SamplesPartOptions } from './selectedSamples.js';

export const OFFSET_SAMPLE_LIMIT = 2000;

/** What the scatter asks for: the panel disk's samples of the visible range, of any latency. */
export type OffsetRequest = SampleScope;

/** The scatter's query: whole seconds around the visible range, every latency, spread over it. */
export function offsetQuery(r: OffsetRequest): SamplesQuery {
  return { ...scopeQuery({ ...r, from: Math.floor(r.from), to: Math.ceil(r.to) }, 0, Number.MAX_SAFE_INTEGER), pick: 'spread' };
}

function keyOf(r: OffsetRequest, sourceKey: string): string {
  const q = offsetQuery(r);
  return JSON.stringify([sourceKey, r.dev, q.from, q.to, r.kind, r.classes, r.cgroup ?? null]);
}

export type OffsetSamplesOptions = SamplesPartOptions<OffsetSamplesSlice>;

export class OffsetSamples {
  private key: string | undefined;
  private generation = 0;

  constructor(private readonly o: OffsetSamplesOptions) {}

  /** Forgets what was asked (a new source). */
  reset(): void {
    this.key = undefined;
    this.generation++;
    this.o.store.setState({ offset: undefined });
  }

  async load(r: OffsetRequest): Promise<void> {
    const snapshot = this.o.source.snapshot;
    const key = keyOf(r, snapshot ? `snapshot:${snapshot.createdAt}` : 'live');
    if (key === this.key) return;
    this.key = key;
    const gen = ++this.generation;
    const query = offsetQuery(r);
    const prev = this.o.store.getState().offset;
    // The previous points stay on screen while the next answer comes (live: every second).
    const base = { dev: r.dev, from: query.from, to: query.to, kind: r.kind };
    const loading: OffsetSamplesState =
      prev?.dev === r.dev
        ? { ...base, status: 'loading', rows: prev.rows, truncated: prev.truncated, pick: prev.pick, matched: prev.matched }
        : { ...base, status: 'loading', rows: [], truncated: false, pick: 'spread' };
    this.o.store.setState({ offset: loading });
    await this.o.busy.during(async () => {
      let next: OffsetSamplesState;
      try {
        const { rows, truncated, pick, matched } = await fetchSamples(this.o.source, this.o.client, query, OFFSET_SAMPLE_LIMIT);
        next = { ...base, status: 'done', rows, truncated, pick, matched };
      } catch (e) {
        next = { ...base, status: 'error', rows: [], truncated: false, pick: 'spread', error: e instanceof Error ? e.message : String(e) };
        // Asked again next time (the agent may be back).
        this.key = undefined;
      }
      if (gen === this.generation) this.o.store.setState({ offset: next });
    });
  }
}

/**
 * The offset scatter's samples: every sampled I/O of the panel disk in the visible range
 * (whole seconds), under the class and cgroup filters and of the latency kind on screen, asked
 * of the agent live or matched in an imported snapshot (fetchSamples, as the samples table).
 * Bounded: at most OFFSET_SAMPLE_LIMIT, `truncated` when more exist. An answer for a query no
 * longer current is dropped; the same query is not asked twice in a row.
 */
import type { LatencyKind } from '@blkheat/shared-types';
import type { SamplesQuery } from '../model/samples.js';
import type { Busy } from './busy.js';
import type { OffsetSamplesSlice, OffsetSamplesState, SliceStore } from './dataStore.js';
import { fetchSamples } from './selectedSamples.js';
import type { AgentSource, DataSource } from './source.js';

export const OFFSET_SAMPLE_LIMIT = 2000;

/** What the scatter asks for. */
export interface OffsetRequest {
  readonly dev: string;
  readonly from: number;
  readonly to: number;
  readonly kind: LatencyKind;
  readonly classes: readonly string[];
  readonly cgroup?: string | undefined;
}

export function offsetQuery(r: OffsetRequest): SamplesQuery {
  return {
    from: Math.floor(r.from),
    to: Math.ceil(r.to),
    kind: r.kind,
    minNs: 0,
    maxNs: Number.MAX_SAFE_INTEGER,
    disks: [r.dev],
    ...(r.classes.length > 0 ? { classes: r.classes } : {}),
    ...(r.cgroup !== undefined ? { cgroup: r.cgroup } : {}),
  };
}

function keyOf(r: OffsetRequest, sourceKey: string): string {
  const q = offsetQuery(r);
  return JSON.stringify([sourceKey, r.dev, q.from, q.to, r.kind, r.classes, r.cgroup ?? null]);
}

export interface OffsetSamplesOptions {
  readonly store: SliceStore<OffsetSamplesSlice>;
  readonly client?: AgentSource | undefined;
  readonly source: DataSource;
  readonly busy: Busy;
}

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
    this.o.store.setState({ offset: { ...base, status: 'loading', rows: prev?.dev === r.dev ? prev.rows : [], truncated: false } });
    await this.o.busy.during(async () => {
      let next: OffsetSamplesState;
      try {
        const { rows, truncated } = await fetchSamples(this.o.source, this.o.client, query, OFFSET_SAMPLE_LIMIT);
        next = { ...base, status: 'done', rows, truncated };
      } catch (e) {
        next = { ...base, status: 'error', rows: [], truncated: false, error: e instanceof Error ? e.message : String(e) };
        // Asked again next time (the agent may be back).
        this.key = undefined;
      }
      if (gen === this.generation) this.o.store.setState({ offset: next });
    });
  }
}

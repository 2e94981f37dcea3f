/**
 * The cells the user selected (a click, a box, Enter on the keyboard cursor) and their sampled
 * I/Os: asked of the agent when live, matched in the file's samples in a snapshot. Publishes the
 * selection and the answer; an answer for a selection no longer current is dropped.
 */
import { type IoSample, MAX_SAMPLES_PER_ANSWER } from '@blkheat/shared-types';
import { type CellSelection, localFilter, matchSamples, selectionQuery } from '../model/samples.js';
import type { Busy } from './busy.js';
import { NO_SAMPLES, type SamplesSlice, type SliceStore } from './dataStore.js';
import type { AgentSource, DataSource } from './source.js';

const SAMPLE_LIMIT = 2000;

export interface SelectedSamplesOptions {
  readonly store: SliceStore<SamplesSlice>;
  readonly client?: AgentSource | undefined;
  readonly source: DataSource;
  readonly busy: Busy;
}

export class SelectedSamples {
  private readonly store: SliceStore<SamplesSlice>;
  private readonly client: AgentSource | undefined;
  private readonly source: DataSource;
  private readonly busy: Busy;

  constructor(options: SelectedSamplesOptions) {
    this.store = options.store;
    this.client = options.client;
    this.source = options.source;
    this.busy = options.busy;
  }

  clear(): void {
    const s = this.store.getState();
    if (s.selection !== undefined || s.samples !== NO_SAMPLES) this.store.setState({ selection: undefined, samples: NO_SAMPLES });
  }

  async select(sel: CellSelection): Promise<void> {
    this.store.setState({ selection: sel, samples: { status: 'loading', rows: [], truncated: false } });
    const query = selectionQuery(sel);
    const still = (): boolean => this.store.getState().selection === sel;
    await this.busy.during(async () => {
      try {
        let rows: IoSample[];
        let truncated: boolean;
        const snapshot = this.source.snapshot;
        if (snapshot) {
          const r = matchSamples(snapshot.samples, query, SAMPLE_LIMIT);
          rows = r.samples;
          truncated = r.truncated;
        } else {
          if (!this.client?.connected) throw new Error('not connected to the agent');
          const answer = await this.client.request({
            t: 'samples',
            from: query.from,
            to: query.to,
            kind: query.kind,
            minNs: query.minNs,
            maxNs: Math.min(query.maxNs, Number.MAX_SAFE_INTEGER),
            disks: [...query.disks],
            ...(query.classes ? { classes: [...query.classes] } : {}),
            // Filtered here afterwards: ask for as many as an answer may carry.
            limit: localFilter(query) ? MAX_SAMPLES_PER_ANSWER : Math.min(SAMPLE_LIMIT, MAX_SAMPLES_PER_ANSWER),
          });
          // The request cannot name a cgroup or a size class: those are kept from the answer here.
          const keep = localFilter(query);
          rows = keep ? answer.samples.filter(keep) : [...answer.samples];
          truncated = answer.truncated;
        }
        if (still()) this.store.setState({ samples: { status: 'done', rows, truncated } });
      } catch (e) {
        if (still())
          this.store.setState({
            samples: { status: 'error', rows: [], truncated: false, error: e instanceof Error ? e.message : String(e) },
          });
      }
    });
  }
}

/**
 * The cells the user selected (a click, a box, Enter on the keyboard cursor) and their sampled
 * I/Os: asked of the agent when live, matched in the file's samples in a snapshot. Publishes the
 * selection and the answer; an answer for a selection no longer current is dropped.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import {
  type HelloMessage,
  type IoSample,
  MAX_SAMPLES_PER_ANSWER,
  type SamplePick,
  type SamplesAnswer,
  type SamplesKept,
} from '@blkheat/shared-types';
import {
  type CellSelection,
  localFilter,
  matchSamplesInSteps,
  type SamplesQuery,
  selectionQuery,
  spreadSamples,
} from '../model/samples.js';
import { NO_SAMPLES, type SamplesSlice, type SliceStore } from '../store/pipelineStore.js';
import type { Busy } from './busy.js';
import type { AgentSource, DataSource } from './source.js';
import { runStepsAcrossTasks } from './steps.js';

const SAMPLE_LIMIT = 2000;
/** Snapshot samples looked at between two checks of the clock while matching. */
const SAMPLES_PER_STEP = 1000;
/** About how long one task matches a snapshot's samples before letting the page go on. */
const MATCH_TASK_MS = 12;

/** The protocol that added the samples request's `pick`: older agents refuse the field. */
const PICK_PROTOCOL = 4;
/** The protocol that added the samples request's `cgroups` and `sizeClasses`: before it they are filtered here. */
const FILTERS_PROTOCOL = 5;
/** Connections (by their hello) whose agent refused `pick` (a protocol 4 agent built before it): not asked again. */
const refusedPick = new WeakSet<HelloMessage>();

/** What fetchSamples found: `pick` is how the rows were chosen when more matched ('first': the oldest). */
export interface FetchedSamples {
  readonly rows: IoSample[];
  readonly truncated: boolean;
  readonly pick: SamplePick;
  /** How many matched in all, when known. */
  readonly matched?: number | undefined;
  /** Which samples the agent keeps for those seconds (protocol 5), to tell why none matched. */
  readonly kept?: SamplesKept | undefined;
}

/**
 * The sampled I/Os a query asks for, at most `limit` (truncated: more matched): matched in an
 * imported snapshot's samples, else asked of the agent, the cgroup and size class (which the
 * request cannot name) kept from its answer here. A spread query (query.pick) is spread by the
 * agent when it can; an agent that cannot answers with the oldest, and `pick` says so.
 */
export async function fetchSamples(
  source: DataSource,
  client: AgentSource | undefined,
  query: SamplesQuery,
  limit: number,
): Promise<FetchedSamples> {
  const snapshot = source.snapshot;
  if (snapshot) {
    // Matched a slice of samples per task: the 50 MB file of snapshot-import.test.ts holds 190,800,
    // matched and spread in 50-80 ms of one task on a loaded 2-CPU machine, and a scavenge of the
    // just-imported heap (100 ms there) landing in that task made it 199 ms. The caller may also
    // be the task that shows a newly imported snapshot (the offset scatter asks as it mounts).
    const r = await runStepsAcrossTasks(matchSamplesInSteps(snapshot.samples, query, limit, SAMPLES_PER_STEP), MATCH_TASK_MS);
    return { rows: r.samples, truncated: r.truncated, pick: query.pick ?? 'first', matched: r.matched };
  }
  if (!client?.connected) throw new Error('not connected to the agent');
  const hello = client.hello;
  // An agent that filters by cgroup and size answers exactly the query: `limit` and `truncated` mean what they say.
  const agentFilters = hello !== undefined && hello.protocol >= FILTERS_PROTOCOL;
  const keep = agentFilters ? undefined : localFilter(query);
  const ask = (pick: SamplePick | undefined): Promise<SamplesAnswer> =>
    client.request({
      t: 'samples',
      from: query.from,
      to: query.to,
      kind: query.kind,
      minNs: query.minNs,
      maxNs: Math.min(query.maxNs, Number.MAX_SAFE_INTEGER),
      disks: [...query.disks],
      ...(query.classes ? { classes: [...query.classes] } : {}),
      ...(agentFilters && query.cgroup !== undefined ? { cgroups: [query.cgroup] } : {}),
      ...(agentFilters && query.sizeClass !== undefined ? { sizeClasses: [query.sizeClass] } : {}),
      // Filtered here afterwards: ask for as many as an answer may carry.
      limit: keep ? MAX_SAMPLES_PER_ANSWER : Math.min(limit, MAX_SAMPLES_PER_ANSWER),
      ...(pick ? { pick } : {}),
    });
  const pick = query.pick === 'spread' && hello && hello.protocol >= PICK_PROTOCOL && !refusedPick.has(hello) ? query.pick : undefined;
  let answer: SamplesAnswer;
  try {
    answer = await ask(pick);
  } catch (e) {
    // An agent that does not know the field names it in its refusal: ask for the oldest instead.
    if (!pick || !hello || !(e instanceof Error) || !/\bpick\b/.test(e.message)) throw e;
    refusedPick.add(hello);
    answer = await ask(undefined);
  }
  const spread = answer.pick === 'spread';
  const rows = keep ? answer.samples.filter(keep) : [...answer.samples];
  if (spread && rows.length > limit) {
    // Narrowed here (cgroup, size class) and still too many: thinned as the agent spreads.
    const r = spreadSamples(rows, query, limit);
    return { rows: r.items, truncated: true, pick: 'spread', kept: answer.kept };
  }
  return {
    kept: answer.kept,
    rows: rows.slice(0, limit),
    truncated: answer.truncated || rows.length > limit,
    pick: spread ? 'spread' : 'first',
    // The agent's count is of what it matched: with a local filter it says nothing of what this one keeps.
    matched: spread && !keep ? answer.matched : spread && !answer.truncated ? rows.length : undefined,
  };
}

/** What a part that asks for samples (this one, the offset scatter's) is given: its slice, and what fetchSamples reads. */
export interface SamplesPartOptions<Slice> {
  readonly store: SliceStore<Slice>;
  readonly client?: AgentSource | undefined;
  readonly source: DataSource;
  readonly busy: Busy;
}

export type SelectedSamplesOptions = SamplesPartOptions<SamplesSlice>;

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

  /**
   * Shows samples already in hand as the selection (a box brushed on the offset scatter): the
   * table lists exactly the points inside it, not a new answer that might differ.
   */
  show(sel: CellSelection, rows: readonly IoSample[], truncated: boolean): void {
    this.store.setState({ selection: sel, samples: { status: 'done', rows, truncated } });
  }

  async select(sel: CellSelection): Promise<void> {
    this.store.setState({ selection: sel, samples: { status: 'loading', rows: [], truncated: false } });
    const still = (): boolean => this.store.getState().selection === sel;
    await this.busy.during(async () => {
      try {
        const { rows, truncated, kept } = await fetchSamples(this.source, this.client, selectionQuery(sel), SAMPLE_LIMIT);
        if (still()) this.store.setState({ samples: { status: 'done', rows, truncated, kept } });
      } catch (e) {
        if (still())
          this.store.setState({
            samples: { status: 'error', rows: [], truncated: false, error: e instanceof Error ? e.message : String(e) },
          });
      }
    });
  }
}

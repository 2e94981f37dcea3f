/**
 * A fleet view's ranked table: the fleet server's answer (GET /api/v1/fleet/ranking, computed
 * by Prometheus) for the visible range and the ranking filters, asked again when either moves.
 * Following live, the range is the live span up to a scrape interval ago by this page's clock,
 * not the page's edge: a big fleet has no live frames to move that edge (docs/fleet.md), and
 * Prometheus has the fleet's scrapes up to then whatever the page holds. The range is taken in
 * whole scrape intervals (model/fleetRanking.ts rankingRange), so a page following live asks
 * once a scrape interval (a timer), not once a second. One question at a time: a newer one
 * aborts the older. Not a fleet view, or a snapshot on screen: no table.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import type { FleetRanking } from '@blkheat/shared-types';
import { rankingParams, rankingQuantum, rankingRange } from '../model/fleetRanking.js';
import { liveView } from '../model/view.js';
import type { FleetRankingSlice, SliceStore } from '../store/pipelineStore.js';
import type { UiReader } from '../store/uiStore.js';
import type { Busy } from './busy.js';

export type RankingFetcher = (params: Readonly<Record<string, string | number>>, signal: AbortSignal) => Promise<FleetRanking>;

export interface FleetRankingOptions {
  readonly ui: UiReader;
  readonly store: SliceStore<FleetRankingSlice>;
  readonly busy: Busy;
  /** How the table is asked for (app.ts: the fleet server's route); none: no table. */
  readonly fetch?: RankingFetcher | undefined;
  /** This page's clock, ms (tests give their own). */
  readonly now?: (() => number) | undefined;
}

export class FleetRankingPart {
  private key: string | undefined;
  private asking: AbortController | undefined;
  /** Following live: asks again when the next quantum may have a new answer. */
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly o: FleetRankingOptions) {}

  /** Asks for the table of the visible range and filters, unless that is what was asked last. */
  refresh(): void {
    const ui = this.o.ui.getState();
    const d = this.o.store.getState();
    const fleet = ui.agent?.fleet;
    clearTimeout(this.timer);
    let visible = d.visible;
    if (fleet && ui.view.following) {
      const nowS = Math.floor((this.o.now ?? Date.now)() / 1000);
      visible = liveView(nowS - Math.ceil(fleet.scrapeInterval), ui.view.span);
      if (d.mode === 'live' && this.o.fetch) this.timer = setTimeout(() => this.refresh(), rankingQuantum(fleet.scrapeInterval) * 1000);
    }
    const range = fleet && d.mode === 'live' && this.o.fetch ? rankingRange(visible.from, visible.to, fleet.scrapeInterval) : undefined;
    if (!range) {
      if (!fleet || d.mode !== 'live' || !this.o.fetch) this.reset();
      return;
    }
    const params = rankingParams(range, ui.rankFilter);
    const key = JSON.stringify(params);
    if (key === this.key) return;
    this.key = key;
    this.asking?.abort();
    const asking = new AbortController();
    this.asking = asking;
    const prev = d.fleetRanking?.ranking;
    this.o.store.setState({ fleetRanking: { status: 'loading', params, ranking: prev } });
    void this.o.busy.during(async () => {
      try {
        const fetchRanking = this.o.fetch;
        if (!fetchRanking) return;
        const ranking = await fetchRanking(params, asking.signal);
        if (this.asking === asking) this.o.store.setState({ fleetRanking: { status: 'ready', params, ranking } });
      } catch (e) {
        if (this.asking !== asking) return;
        // Asked again at the next change (Prometheus may be back).
        this.key = undefined;
        this.o.store.setState({
          fleetRanking: { status: 'error', params, ranking: prev, error: e instanceof Error ? e.message : String(e) },
        });
      }
    });
  }

  /** No table (not a fleet view, or a snapshot on screen). */
  reset(): void {
    clearTimeout(this.timer);
    this.asking?.abort();
    this.asking = undefined;
    this.key = undefined;
    if (this.o.store.getState().fleetRanking !== undefined) this.o.store.setState({ fleetRanking: undefined });
  }
}

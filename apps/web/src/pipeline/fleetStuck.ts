/**
 * A fleet view's "Stuck now" list: the fleet server's answer (GET /api/v1/fleet/stuck), asked
 * when the page becomes a live fleet view and again every scrape interval (the fleet hello's),
 * sooner when a listed row's host is due for its next scrape (model/fleetStuck.ts), whatever the
 * view shows: it is about now, not the visible range. One question at a time; an
 * answer keeps the time it arrived, so the view can grow each row's age between answers
 * (model/fleetStuck.ts). Not a fleet view, or a snapshot on screen: no list.
 * A part of the data pipeline (dataLayer.ts composes it): it publishes into its own slice of the
 * pipeline store (store/pipelineStore.ts).
 */
import type { FleetStuck } from '@blkheat/shared-types';
import { stuckNextAskSeconds, stuckParams } from '../model/fleetStuck.js';
import type { FleetStuckSlice, SliceStore } from '../store/pipelineStore.js';
import type { UiReader } from '../store/uiStore.js';

export type StuckFetcher = (params: Readonly<Record<string, string | number>>, signal: AbortSignal) => Promise<FleetStuck>;

export interface FleetStuckOptions {
  readonly ui: UiReader;
  readonly store: SliceStore<FleetStuckSlice>;
  /** How the list is asked for (app.ts: the fleet server's route); none: no list. */
  readonly fetch?: StuckFetcher | undefined;
  /** This page's clock, ms (tests give their own). */
  readonly now?: (() => number) | undefined;
}

export class FleetStuckPart {
  private asking: AbortController | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The scrape interval the polling runs at (undefined: not polling). */
  private polling: number | undefined;

  constructor(private readonly o: FleetStuckOptions) {}

  /** Starts (or keeps) polling on a live fleet view; stops otherwise. Cheap to call on every change. */
  refresh(): void {
    const interval = this.o.ui.getState().agent?.fleet?.scrapeInterval;
    const live = this.o.store.getState().mode === 'live';
    if (interval === undefined || !live || !this.o.fetch) {
      this.reset();
      return;
    }
    if (this.polling === interval) return;
    this.polling = interval;
    clearTimeout(this.timer);
    this.ask();
  }

  private ask(): void {
    const fetchStuck = this.o.fetch;
    const interval = this.polling;
    if (!fetchStuck || interval === undefined) return;
    this.asking?.abort();
    const asking = new AbortController();
    this.asking = asking;
    const params = stuckParams();
    const prev = this.o.store.getState().fleetStuck;
    this.o.store.setState({ fleetStuck: { ...(prev ?? { answer: undefined, receivedAtMs: 0 }), status: 'loading', error: undefined } });
    void fetchStuck(params, asking.signal)
      .then(
        (answer) => {
          if (this.asking !== asking) return;
          this.o.store.setState({ fleetStuck: { status: 'ready', answer, receivedAtMs: (this.o.now ?? Date.now)() } });
        },
        (e: unknown) => {
          if (this.asking !== asking) return;
          const last = this.o.store.getState().fleetStuck;
          this.o.store.setState({
            fleetStuck: {
              status: 'error',
              answer: last?.answer,
              receivedAtMs: last?.receivedAtMs ?? 0,
              error: e instanceof Error ? e.message : String(e),
            },
          });
        },
      )
      .finally(() => {
        if (this.asking !== asking || this.polling !== interval) return;
        const next = stuckNextAskSeconds(this.o.store.getState().fleetStuck?.answer, interval);
        this.timer = setTimeout(() => this.ask(), next * 1000);
      });
  }

  /** No list (not a fleet view, or a snapshot on screen). */
  reset(): void {
    clearTimeout(this.timer);
    this.asking?.abort();
    this.asking = undefined;
    this.polling = undefined;
    if (this.o.store.getState().fleetStuck !== undefined) this.o.store.setState({ fleetStuck: undefined });
  }
}

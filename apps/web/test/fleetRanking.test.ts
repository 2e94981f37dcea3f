// A fleet view's ranked table on the page side: its filters in the URL (checked, round-tripped),
// the range it asks for (whole scrape intervals: a live view asks once a quantum, not once a
// second), and the pipeline part that asks (one question at a time; none outside a fleet view).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FleetRanking } from '@blkheat/shared-types';
import { rankingParams, rankingRange, sparkScale, withRankFilter } from '../src/model/fleetRanking.ts';
import { decodeUrlState, DEFAULT_URL_STATE, encodeUrlState } from '../src/model/urlstate.ts';
import { fixedView, liveView } from '../src/model/view.ts';
import { Busy } from '../src/pipeline/busy.ts';
import { FleetRankingPart } from '../src/pipeline/fleetRanking.ts';
import { createDataStore } from '../src/store/pipelineStore.ts';
import { createUiStore } from '../src/store/uiStore.ts';

// A multiple of 15 (and of 5): quanta start here.
const T0 = 1_700_000_100;

test('ranking filters: in the URL as rjob, rinstance, rdisk, rclass; bad ones dropped and named', () => {
  const rankFilter = { job: 'blkheat', instance: 'db-*', disk: 'nvme?n1', class: 'Sync-Write' };
  const q = encodeUrlState({ ...DEFAULT_URL_STATE, rankFilter });
  assert.equal(q, 'rjob=blkheat&rinstance=db-*&rdisk=nvme%3Fn1&rclass=Sync-Write');
  const back = decodeUrlState(`?${q}`);
  assert.deepEqual(back.rankFilter, rankFilter);
  assert.deepEqual(back.problems, []);
  assert.equal(encodeUrlState(back), q);
  const bad = decodeUrlState(`?rinstance=${'x'.repeat(129)}&rdisk=a%0Ab&rjob=`);
  assert.equal(bad.rankFilter, undefined, 'nothing kept');
  assert.equal(bad.problems.length, 3, bad.problems.join('; '));
  assert.match(bad.problems[0] ?? '', /^rjob: job filter: empty/);
  assert.match(bad.problems[1] ?? '', /^rinstance: instance filter: longer than 128 characters/);
  assert.match(bad.problems[2] ?? '', /^rdisk: disk filter: control characters/);
  assert.deepEqual(withRankFilter({ job: 'a', disk: 'sd*' }, 'disk', '  '), { job: 'a' }, 'empty text clears');
  assert.deepEqual(withRankFilter({}, 'instance', ' db-* '), { instance: 'db-*' }, 'trimmed');
});

test('ranking range: the visible range in whole quanta (the scrape interval, 5 s at least)', () => {
  assert.deepEqual(rankingRange(T0 + 3, T0 + 303, 1), { from: T0, to: T0 + 300 });
  assert.deepEqual(rankingRange(T0 + 3, T0 + 303, 15), { from: T0, to: T0 + 300 });
  assert.deepEqual(rankingRange(T0 + 14, T0 + 314, 15), { from: T0, to: T0 + 300 }, 'a live view moving 11 s asks the same');
  assert.deepEqual(rankingRange(T0 + 15, T0 + 315, 15), { from: T0 + 15, to: T0 + 315 });
  assert.equal(rankingRange(T0 + 1, T0 + 4, 5), undefined, 'less than a quantum: nothing to ask');
  assert.deepEqual(rankingParams({ from: T0, to: T0 + 60 }, { disk: 'sd*', job: 'j' }), {
    from: T0,
    to: T0 + 60,
    limit: 50,
    job: 'j',
    disk: 'sd*',
  });
});

test('spark scale: one log span for every row, from the smallest to the largest p99 of any step', () => {
  const row = (spark: (number | null)[]) => ({
    instance: 'a',
    disk: 'sda',
    dev: '8:0',
    p99: 1,
    p999: 1,
    ios: 1,
    errors: 0,
    oldestInflightS: null,
    untimed: 0,
    spark,
  });
  const r: FleetRanking = {
    from: T0,
    to: T0 + 60,
    filter: {},
    hosts: [],
    prometheusQueries: 7,
    disks: [row([0.001, null, 0.02]), row([null, 0.0004])],
  };
  assert.deepEqual(sparkScale(r), { lo: 0.0004, hi: 0.02 });
  assert.equal(sparkScale({ ...r, disks: [row([null, null])] }), undefined);
});

/** The hello's agent part of a fleet server whose hosts are scraped every `scrapeInterval` s. */
function fleetAgent(scrapeInterval: number) {
  return {
    version: '0',
    protocol: 6,
    host: { hostname: 'fleet', kernel: 'k' },
    tiers: [1],
    historyFrom: 0,
    fleet: { prometheus: 'http://p', scrapeInterval },
  };
}

function answer(params: Readonly<Record<string, string | number>>): FleetRanking {
  return { from: Number(params.from), to: Number(params.to), filter: {}, hosts: [], disks: [], prometheusQueries: 1 };
}

test('the ranking part: following live, the live span up to a scrape interval ago, asked again each quantum by itself; again for a filter; never outside a fleet view', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const ui = createUiStore();
  const store = createDataStore();
  const asked: Readonly<Record<string, string | number>>[] = [];
  let nowMs = (T0 + 315) * 1000;
  const part = new FleetRankingPart({
    ui,
    store,
    busy: new Busy(),
    now: () => nowMs,
    fetch: async (params) => {
      asked.push(params);
      return answer(params);
    },
  });
  ui.setState({ view: liveView(T0 + 300, 300) });
  // The page's own edge stands still (a big fleet has no live frames): the table follows the clock.
  store.setState({ visible: liveView(T0 - 600, 300) });
  part.refresh();
  assert.equal(asked.length, 0, 'not a fleet view: nothing asked');
  assert.equal(store.getState().fleetRanking, undefined);

  ui.setState({ agent: fleetAgent(15) });
  part.refresh();
  await Promise.resolve();
  assert.equal(asked.length, 1);
  assert.deepEqual(asked[0], { from: T0, to: T0 + 300, limit: 50 }, 'the last 300 s up to a scrape interval ago, in whole 15 s');
  await new Promise<void>((r) => setImmediate(r));
  assert.equal(store.getState().fleetRanking?.status, 'ready');
  for (let s = 1; s < 15; s++) {
    nowMs += 1000;
    part.refresh();
  }
  assert.equal(asked.length, 1, 'the clock moving within a scrape interval asks nothing');
  nowMs += 1000;
  t.mock.timers.tick(15_000);
  assert.equal(asked.length, 2, 'a quantum later it asks by itself');
  assert.deepEqual(asked[1], { from: T0 + 15, to: T0 + 315, limit: 50 });
  ui.setState({ rankFilter: { instance: 'db-*' } });
  part.refresh();
  assert.deepEqual(asked[2], { from: T0 + 15, to: T0 + 315, limit: 50, instance: 'db-*' });
  await new Promise<void>((r) => setImmediate(r));
  assert.deepEqual(store.getState().fleetRanking?.params, asked[2]);

  // Paused: the visible range, whatever the clock.
  ui.setState({ view: fixedView(T0 - 60, T0) });
  store.setState({ visible: fixedView(T0 - 60, T0) });
  part.refresh();
  assert.deepEqual(asked[3], { from: T0 - 60, to: T0, limit: 50, instance: 'db-*' });
  t.mock.timers.tick(60_000);
  assert.equal(asked.length, 4, 'paused: not asked again');

  store.setState({ mode: 'snapshot' });
  part.refresh();
  assert.equal(store.getState().fleetRanking, undefined, 'a snapshot on screen: no table');
  assert.equal(asked.length, 4);
});

test('the ranking part: a newer question aborts the older, whose answer is dropped; an error is kept with the last table', async () => {
  const ui = createUiStore();
  const store = createDataStore();
  ui.setState({ agent: fleetAgent(1) });
  const pending: { params: Readonly<Record<string, string | number>>; signal: AbortSignal; settle: (fail?: string) => void }[] = [];
  const part = new FleetRankingPart({
    ui,
    store,
    busy: new Busy(),
    fetch: (params, signal) =>
      new Promise<FleetRanking>((resolve, reject) =>
        pending.push({ params, signal, settle: (fail) => (fail ? reject(new Error(fail)) : resolve(answer(params))) }),
      ),
  });
  ui.setState({ view: fixedView(T0, T0 + 60) });
  store.setState({ visible: fixedView(T0, T0 + 60) });
  part.refresh();
  store.setState({ visible: fixedView(T0 + 60, T0 + 120) });
  part.refresh();
  assert.equal(pending.length, 2);
  assert.ok(pending[0]?.signal.aborted && !pending[1]?.signal.aborted, 'the older question aborted');
  pending[1]?.settle();
  pending[0]?.settle();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(store.getState().fleetRanking?.ranking?.from, T0 + 60, 'the newer answer stays');
  store.setState({ visible: fixedView(T0 + 120, T0 + 180) });
  part.refresh();
  pending[2]?.settle('502 Prometheus at http://p is unreachable');
  await new Promise((r) => setTimeout(r, 0));
  const s = store.getState().fleetRanking;
  assert.equal(s?.status, 'error');
  assert.equal(s?.error, '502 Prometheus at http://p is unreachable');
  assert.equal(s?.ranking?.from, T0 + 60, 'the last table stays on screen under the error');
  part.refresh();
  assert.equal(pending.length, 4, 'after an error the same range is asked again');
});

// Fleet mode at a 15 s scrape on real components (issue 30's acceptance): three real agents
// (testkit's startScrapedHosts; host-c on a FUSE-delayed loop device), a real Prometheus
// (Debian's 2.42, native histograms) scraping them every 15 s, `blkheat fleet` over it, and the
// fleet page in chromium. After a drag zoom over at least 3 scrapes, each host's zoomed range
// equals its agent's own counts for the same scrapes, bucket for bucket: the agent's seconds (its
// REST range at 1 s) grouped by the window ends of the scrapes Prometheus stored, the differences
// that start in the range (docs/fleet.md, "What a cell counts"). fleet-dashboard.test.ts does the
// same at 1 s. Screenshots go to artifacts/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOfSeconds } from '@blkheat/shared-types';
import { hook, prometheusUnavailable, sleep, startAgentProcess, startFio, startScrapedHosts } from '@blkheat/testkit';
import { canRun, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';
import { agentCountsByScrapes, dragZoom } from './lib/fleet-zoom.ts';

const missing = prometheusUnavailable();
const SCRAPE_S = 15;
/** Scrape differences the zoomed range holds at least. */
const ZOOM_SCRAPES = 3;
/**
 * Columns the drag spans: from the middle of the first to the middle of the fifth, 60 s, the
 * narrowest view the page zooms to at this step (4 columns); the zoomed range is the view
 * widened to whole columns, 5 of them.
 */
const ZOOM_COLUMNS = 5;
/** Each host's first differences are left out: a disk's class series may begin a scrape after its window gauge. */
const SKIP_SCRAPES = 2;

test(
  'fleet mode at a 15 s scrape: after a drag zoom over 3 scrapes or more, each host’s counts equal its agent’s, bucket for bucket',
  { timeout: 300_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t) => {
    if (!canRun(t, { fuse: true, fio: true })) return;
    const started = Date.now();
    const { hosts, agents, prometheus: prom } = await startScrapedHosts(t, (args) => startAgent(t, args), { scrapeIntervalS: SCRAPE_S });
    const [plainA, plainB, slow] = hosts;
    const fleet = await startAgentProcess({ command: 'fleet', args: ['--prometheus', prom.url] });
    t.after(() => fleet.stop());
    startFio({ filename: plainA.path, rw: 'randread', runtimeS: 240, rateIops: 300 }, t);
    startFio({ filename: plainB.path, rw: 'randrw', runtimeS: 240, rateIops: 200 }, t);
    // One read at a time: each waits its 5 ms and no other (the loop device serves them in turn).
    startFio({ filename: slow.path, rw: 'randread', runtimeS: 240, rateIops: 100 }, t);

    // Whole 15 s columns every host has whole: from the column after each host's first
    // SKIP_SCRAPES differences to the last column ending at or before its newest scrape (the
    // difference starting last in the range must be stored).
    const columns = async (): Promise<{ from: number; to: number; ends: number[][] }> => {
      const ends = await Promise.all(hosts.map((h) => prom.windowEnds(h.instance)));
      const from = Math.ceil(Math.max(...ends.map((e) => e[SKIP_SCRAPES] ?? Infinity)) / SCRAPE_S) * SCRAPE_S;
      const to = Math.floor(Math.min(...ends.map((e) => e[e.length - 1] ?? -Infinity)) / SCRAPE_S) * SCRAPE_S;
      return { from, to, ends };
    };
    const deadline = Date.now() + 200_000;
    let whole = await columns();
    // One column more than the drag's, so that the live edge is past the last one dragged over.
    while (!(whole.to - whole.from >= (ZOOM_COLUMNS + 1) * SCRAPE_S)) {
      assert.ok(Date.now() < deadline, `no ${ZOOM_COLUMNS + 1} whole columns yet: ${JSON.stringify(whole)}`);
      await sleep(1000);
      whole = await columns();
    }
    t.diagnostic(
      `${((Date.now() - started) / 1000).toFixed(0)} s in: every host whole over [${whole.from}, ${whole.to}); stored scrapes ` +
        hosts.map((h, i) => `${h.instance} ${whole.ends[i]?.length}`).join(', '),
    );

    const s = await openDashboard(t, fleet.url);
    const page = s.page;
    const h = hook(page);
    await waitFor(page, 'three host × disk rows', async () => (await h.state()).shownDisks.length === 3, 30_000);
    await h.idle();
    const devs: string[] = [];
    for (const host of hosts) {
      const row = page.locator(`[data-testid="disk-row-${host.instance}/${host.disk}"]`);
      assert.equal(await row.count(), 1, `a row for ${host.instance}/${host.disk}`);
      devs.push((await row.getAttribute('data-dev')) ?? '');
    }
    const live = await h.state();
    t.diagnostic(`live: view [${live.view.from}, ${live.view.to}), step ${live.step} s`);
    await shot(page, 'fleet-15s-1-live');

    const mid = whole.from + SCRAPE_S / 2;
    await dragZoom(page, h, devs[0] as string, mid, mid + (ZOOM_COLUMNS - 1) * SCRAPE_S, bucketOfSeconds(0.0001));
    await waitFor(page, 'the zoom', async () => !(await h.state()).following, 10_000);
    await h.idle();
    const zoomed = await h.state();
    const range = zoomed.summaryRange;
    assert.ok(range && zoomed.schema, 'a zoomed range and its schema');
    t.diagnostic(
      `zoomed: view [${zoomed.view.from.toFixed(1)}, ${zoomed.view.to.toFixed(1)}), range [${range.from}, ${range.to}) ` +
        `(${(range.to - range.from) / SCRAPE_S} columns), step ${zoomed.step} s, ${zoomed.kind} latency`,
    );
    assert.equal(zoomed.step, SCRAPE_S, 'zoomed in, a column is a scrape interval');
    assert.equal(zoomed.kind, 'device', 'the fleet page draws device latency (the histograms Prometheus has)');
    assert.ok(
      range.from >= whole.from && range.to <= whole.to,
      `the zoomed range [${range.from}, ${range.to}) is in [${whole.from}, ${whole.to})`,
    );
    assert.ok(range.to - range.from < live.view.to - live.view.from, 'the view narrowed');

    const counts = await h.counts();
    const verdicts: (() => void)[] = [];
    for (const [i, host] of hosts.entries()) {
      const agent = agents[i];
      const dev = devs[i] as string;
      assert.ok(agent);
      const want = await agentCountsByScrapes(agent.url, await prom.windowEnds(host.instance), range, zoomed.schema, SCRAPE_S);
      const shown = await h.histogram(dev);
      const buckets = Math.max(shown.length, want.device.length);
      const differing: string[] = [];
      let used = 0;
      for (let b = 0; b < buckets; b++) {
        const got = shown[b] ?? 0;
        const exp = want.device[b] ?? 0;
        if (got > 0 || exp > 0) used++;
        if (got !== exp) differing.push(`bucket ${b}: page ${got}, agent ${exp}`);
      }
      const completed = counts[dev]?.completed;
      t.diagnostic(
        `${host.instance}: page ${completed} I/Os in [${range.from}, ${range.to}), agent ${want.ios} over ${want.groups.length} scrapes ` +
          `(${want.groups.map(([a, b]) => `[${a}, ${b})`).join(' ')}; ${want.merged} late); ${buckets} buckets compared, ` +
          `${used} non-empty, ${differing.length} differ${differing.length > 0 ? `: ${differing.slice(0, 6).join('; ')}` : ''}`,
      );
      verdicts.push(() => {
        assert.ok(want.groups.length >= ZOOM_SCRAPES, `${host.instance}: the range holds ${want.groups.length} scrapes`);
        assert.ok(want.ios > 0, `${host.instance} did I/O in the zoomed range`);
        assert.equal(completed, want.ios, `${host.instance}: the zoomed range's count equals its agent's`);
        assert.deepEqual(differing, [], `${host.instance}: bucket for bucket`);
      });
    }
    await shot(page, 'fleet-15s-2-zoomed');
    for (const v of verdicts) v();
    assert.deepEqual(s.errors, [], 'no console errors');
    t.diagnostic(`took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  },
);

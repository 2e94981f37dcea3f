// Fleet mode on real components: three real agents stand in for three hosts (each its own
// --instance and --disk; host-c's disk is a FUSE-delayed loop device at 5 ms), a real Prometheus
// (Debian's 2.42, native histograms) scrapes them every second, and `blkheat fleet --prometheus
// URL` serves the dashboard from it, opened in chromium. The page shows the three hosts' rows, each
// linking to its agent; host-c's band sits in the 4–8 ms rows; a drag zooms, and each row's count
// of the zoomed range equals what its agent counted, grouped by the scrapes Prometheus stored (the
// fleet view dates each scrape's increase by the agent's window end: docs/fleet.md). Screenshots go
// to artifacts/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOfSeconds } from '@blkheat/shared-types';
import { hook, prometheusUnavailable, sleep, startAgentProcess, startFio, startScrapedHosts } from '@blkheat/testkit';
import { canRun, openDashboard, shot, startAgent, waitFor } from './lib/dashboard.ts';
import { agentCountsByScrapes, dragZoom } from './lib/fleet-zoom.ts';

const missing = prometheusUnavailable();

test(
  'fleet mode over a real Prometheus and three real agents: rows, links, the 5 ms band, zoom with counts that follow',
  { timeout: 300_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t) => {
    if (!canRun(t, { fuse: true, fio: true })) return;
    const { hosts, agents, prometheus: prom } = await startScrapedHosts(t, (args) => startAgent(t, args));
    const [plainA, plainB, slow] = hosts;
    const scrapingSince = Math.ceil(Date.now() / 1000);
    const fleet = await startAgentProcess({ command: 'fleet', args: ['--prometheus', prom.url] });
    t.after(() => fleet.stop());

    startFio({ filename: plainA.path, rw: 'randread', runtimeS: 120, rateIops: 300 }, t);
    startFio({ filename: plainB.path, rw: 'randrw', runtimeS: 120, rateIops: 200 }, t);
    // One read at a time: each waits its 5 ms and no other (the loop device serves them in turn).
    startFio({ filename: slow.path, rw: 'randread', runtimeS: 120, rateIops: 100 }, t);
    // Forty seconds of scrapes, so the live view has columns to draw and to zoom into.
    await sleep(40_000);

    const s = await openDashboard(t, fleet.url);
    const page = s.page;
    const h = hook(page);
    await waitFor(page, 'three host × disk rows', async () => (await h.state()).shownDisks.length === 3, 30_000);
    await h.idle();

    // One row per host × disk, each linking to its own agent.
    const devs: string[] = [];
    for (const [i, host] of hosts.entries()) {
      const name = `${host.instance}/${host.disk}`;
      const row = page.locator(`[data-testid="disk-row-${name}"]`);
      assert.equal(await row.count(), 1, `a row for ${name}`);
      devs.push((await row.getAttribute('data-dev')) ?? '');
      const href = await page.locator(`[data-testid="agent-link-${name}"]`).getAttribute('href');
      assert.equal(href, agents[i]?.url, `${name} links to its host's agent`);
    }
    await shot(page, 'fleet-1-live');

    // 2. host-c's reads in the 4–8 ms rows.
    const slowDev = devs[2] as string;
    const hist = await h.histogram(slowDev);
    const total = hist.reduce((a, b) => a + b, 0);
    const lo = bucketOfSeconds(0.004);
    const hi = bucketOfSeconds(0.008);
    const band = hist.slice(lo, hi + 1).reduce((a, b) => a + b, 0);
    const below = hist.slice(0, lo).reduce((a, b) => a + b, 0);
    t.diagnostic(`host-c: ${band} of ${total} reads in [4 ms, 8 ms], ${below} below, ${total - band - below} above`);
    assert.ok(total > 1000 && band / total >= 0.95, `host-c: only ${band} of ${total} reads drawn in the 4–8 ms rows`);
    const hot = await h.hottestCell(slowDev);
    assert.ok(hot && hot.bucket >= lo && hot.bucket <= hi, `host-c's hottest cell is in bucket ${hot?.bucket}, not ${lo}..${hi}`);

    // 3. A drag zooms into the middle of the data; each row's count follows, equal to its agent's.
    const before = await h.state();
    const span = before.view.to - before.view.from;
    // From 8 s after Prometheus began scraping to 10 s before now: seconds every host has data for.
    await dragZoom(page, h, devs[0] as string, scrapingSince + 8, Math.floor(Date.now() / 1000) - 10, bucketOfSeconds(0.0001));
    await waitFor(page, 'the zoom', async () => !(await h.state()).following, 10_000);
    await h.idle();
    const zoomed = await h.state();
    const range = zoomed.summaryRange;
    assert.ok(range, 'a zoomed range');
    assert.ok(range.to - range.from < span * 0.6, `the view narrowed: ${span} s → ${range.to - range.from} s`);
    assert.equal(zoomed.step, 1, 'a 1 s scrape interval gives 1 s columns when zoomed in');
    const counts = await h.counts();
    assert.ok(zoomed.schema, 'the page has a schema');
    for (const [i, host] of hosts.entries()) {
      const agent = agents[i];
      assert.ok(agent);
      // The agent's own seconds, grouped by the scrapes Prometheus stored: a group [e0, e1) is
      // drawn at e0, so the range holds the groups that start in it. Timed I/Os only: the fleet
      // server has no untimed counts (docs/fleet.md).
      const { ios: want, merged } = await agentCountsByScrapes(agent.url, await prom.windowEnds(host.instance), range, zoomed.schema, 1);
      const shown = counts[devs[i] as string]?.completed;
      t.diagnostic(`${host.instance}: fleet view ${shown} I/Os in [${range.from}, ${range.to}), agent ${want} (${merged} late scrapes)`);
      assert.ok(want > 0, `${host.instance} did I/O in the zoomed range`);
      assert.equal(shown, want, `${host.instance}: the zoomed range's count equals its agent's`);
    }
    await shot(page, 'fleet-2-zoomed');
    assert.deepEqual(s.errors, [], 'no console errors');
  },
);

// Fleet mode in a real browser (headless chromium), no kernel: the fleet server over a real
// Prometheus scraping three fake exporters (test/lib/fleet-rig.ts). The page shows one row per
// host × disk with a link to that host's agent, the delayed host's reads in the 4–8 ms rows
// (counts and pixels), and after a drag zooms in, the counts of the zoomed range equal what
// the exporters counted in it. Needs apps/web/dist, chromium and prometheus.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Frame } from '@blkheat/shared-types';
import { CHROMIUM, hook, type Hooked, idle, importSnapshot, launch, prometheusUnavailable, screenshot } from '@blkheat/testkit';
import { B_100US, B_5MS, FLEET_HOSTS, startFleetRig, WEB_ROOT } from './lib/fleet-rig.js';

const missing = prometheusUnavailable();

test(
  'fleet view in chromium: three hosts’ rows, links, the 5 ms band, drag zoom with counts that follow',
  { timeout: 150_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t: TestContext) => {
    if (!existsSync(CHROMIUM)) return void t.skip(`no chromium at ${CHROMIUM}`);
    if (!existsSync(join(WEB_ROOT, 'index.html'))) return void t.skip('apps/web is not built');
    const rig = await startFleetRig(t);
    // Thirty seconds of scrapes first, so the live tail has columns to draw and to zoom into.
    await new Promise((r) => setTimeout(r, 30_000));
    const s = await launch({ colorScheme: 'light', height: 1400 });
    t.after(() => s.close());
    const page = s.page;
    await page.goto(rig.fleet.url);
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().shownDisks.length === 3, undefined, {
      timeout: 30_000,
    });
    await idle(page);

    // One row per host × disk, each linking to its host's own agent.
    const devs: Record<string, string> = {};
    for (const [i, h] of FLEET_HOSTS.entries()) {
      const name = `${h.instance}/${h.disk}`;
      const row = page.locator(`[data-testid="disk-row-${name}"]`);
      assert.equal(await row.count(), 1, `a row for ${name}`);
      devs[h.instance] = (await row.getAttribute('data-dev')) ?? '';
      const href = await page.locator(`[data-testid="agent-link-${name}"]`).getAttribute('href');
      assert.equal(href, `http://127.0.0.1:${rig.exporters[i]?.port}/`, `${name} links to its host's agent`);
    }
    assert.match(
      (await page.locator('[data-testid="fleet-source"]').textContent()) ?? '',
      /3 hosts · Prometheus http:\/\/127\.0\.0\.1:\d+ · scraped every 1 s/,
    );
    assert.equal(await page.locator('[data-testid^="host-chip-"]').count(), 3, 'a host picker with the three hosts');
    assert.equal(await page.locator('[data-testid="fleet-problem"]').count(), 0, 'no problem shown once Prometheus answers');
    // The panels the fleet has no data for say why: the fleet, not old agents.
    assert.match(
      (await page.locator('[data-testid="size-empty"]').textContent()) ?? '',
      /^The fleet view has no I\/O sizes: it reads only the agents' disk histograms/,
    );
    assert.match(
      (await page.locator('[data-testid="cgroup-empty"]').textContent()) ?? '',
      /^The fleet view has no per-cgroup split: it reads only the agents' disk histograms/,
    );
    assert.match(
      (await page.locator('[data-testid="offset-hint"]').textContent()) ?? '',
      /^The fleet view has no sampled I\/Os: it reads only the agents' disk histograms/,
    );

    // The host picker hides and shows all of a host's disks.
    await page.click('[data-testid="host-chip-host-b"]');
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().shownDisks.length === 2, undefined, {
      timeout: 10_000,
    });
    assert.equal(await page.locator('[data-testid="disk-row-host-b/sda"]').count(), 0, "host-b's row is hidden");
    assert.equal(await page.locator('[data-testid="host-chip-host-b"]').getAttribute('aria-pressed'), 'false');
    await page.click('[data-testid="host-chip-host-b"]');
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().shownDisks.length === 3, undefined, {
      timeout: 10_000,
    });
    await idle(page);

    // Drag across host-a's heat map, over seconds the exporters made: a fixed, zoomed range.
    const devA = devs['host-a'] ?? '';
    const first = rig.exporters[0]?.frames[0]?.ts ?? 0;
    const xAt = async (ts: number): Promise<{ x: number; y: number }> => {
      const at = await hook(page).cellCenter(devA, ts, B_100US);
      assert.ok(at, `host-a's column ${ts} is on screen`);
      return at;
    };
    // Not the exporters' first seconds: Prometheus counts from its first scrape of each, a few
    // seconds in (what came before has no scrape to date it, and is drawn as not recorded).
    const a = await xAt(first + 9);
    const b = await xAt(first + 24);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move(b.x, b.y, { steps: 8 });
    await page.mouse.up();
    await page.waitForFunction(() => !(globalThis as unknown as Hooked).__blkheat.state().following, undefined, { timeout: 10_000 });
    await idle(page);
    const state = await hook(page).state();
    const range = state.summaryRange;
    assert.ok(range, 'a summary range');
    t.diagnostic(`zoomed to [${range.from}, ${range.to}) at ${state.step} s per column`);
    assert.equal(state.step, 1, 'a 1 s scrape interval gives 1 s columns when zoomed in');
    const counts = await hook(page).counts();
    for (const h of FLEET_HOSTS) {
      // The exporter's seconds, grouped by the scrapes Prometheus stored (one second each unless
      // a scrape came late), whose first second lies in the range.
      const groups: [number, Frame][] = [...(await rig.attributed(h.instance)).bySecond.entries()].filter(
        ([ts]) => ts >= range.from && ts < range.to,
      );
      const want: number = groups.reduce((a: number, [, f]) => a + (f.disks[0]?.cls ?? []).reduce((b, c) => b + c.n, 0), 0);
      assert.equal(counts[devs[h.instance] ?? '']?.completed, want, `${h.instance}: the zoomed range's I/Os equal what its agent counted`);
    }

    // The delayed host: every I/O in the 4–8 ms bucket, drawn there and nowhere below.
    const slowDev = devs['host-c'] ?? '';
    const hist = await hook(page).histogram(slowDev);
    assert.equal(hist[B_5MS], counts[slowDev]?.completed);
    assert.ok((hist[B_5MS] ?? 0) > 0);
    const mid = Math.floor((range.from + range.to) / 2);
    const pixel = async (bucket: number): Promise<[number, number, number, number] | undefined> => {
      const at = await hook(page).cellCenter(slowDev, mid, bucket);
      assert.ok(at, `cell ${bucket} at ${mid} is on screen`);
      return hook(page).pixelAt(slowDev, at.x, at.y);
    };
    const band = await pixel(B_5MS);
    const below = await pixel(B_100US);
    t.diagnostic(`host-c pixels: 5 ms row ${JSON.stringify(band)}, 100 µs row ${JSON.stringify(below)}`);
    assert.ok(band && band[3] > 0, 'the 4–8 ms cell is painted');
    assert.ok(!below || below[3] === 0, 'the 100 µs cell of host-c is empty');

    await screenshot(page, 'fleet-view', 'web-browser');

    // Export the zoomed range and import it again: the same rows, links and counts, offline.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-json]')]);
    const file = join(mkdtempSync(join(tmpdir(), 'blkheat-fleet-snap-')), 'fleet.json');
    t.after(() => rmSync(dirname(file), { recursive: true, force: true }));
    await download.saveAs(file);
    await importSnapshot(page, file);
    await idle(page);
    const imported = await hook(page).counts();
    for (const [i, h] of FLEET_HOSTS.entries()) {
      const name = `${h.instance}/${h.disk}`;
      const dev = devs[h.instance] ?? '';
      assert.equal(imported[dev]?.completed, counts[dev]?.completed, `${name}: the imported snapshot counts what the live view did`);
      const href = await page.locator(`[data-testid="agent-link-${name}"]`).getAttribute('href');
      assert.equal(href, `http://127.0.0.1:${rig.exporters[i]?.port}/`, `${name} still links to its agent in the snapshot`);
    }
    assert.equal(await page.locator('[data-testid^="host-chip-"]').count(), 3, 'the host picker in the snapshot');
    await screenshot(page, 'fleet-snapshot', 'web-browser');
    assert.deepEqual(s.errors, [], 'no console errors');
  },
);

// The dashboard in headless chromium draws the bucket schema the data names: the fake agent
// restarts on schema 3 (8 buckets per octave, 210 rows) and the page rebuilds its heat maps at
// that size, drawing loop0's ~5.3 ms I/Os in the schema-3 row of 5.3 ms, with y axis labels at
// the rows of their latencies; an imported schema-3 snapshot draws the same way while live is
// schema 2. Screenshots in artifacts/web-browser/. Needs apps/web/dist and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, bucketOfSeconds, FINE_BUCKET_SCHEMA, lowerBoundSeconds, upperBoundSeconds } from '@blkheat/shared-types';
import { secondsToU } from '../../src/model/latency.ts';
import { hook, type Hooked, idle, importSnapshot, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { jsonFile, openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { defaultDisks, syntheticSource } from '../fixtures/synthetic.ts';

/** The bits of the DOM read in the page. */
interface El {
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { top: number; height: number };
  querySelectorAll(q: string): Iterable<El>;
}

const FINE = FINE_BUCKET_SCHEMA;
/** loop0's median device latency in the synthetic data (log-normal, sigma 0.08). */
const LOOP0_MEDIAN = 5.3e-3;

const state = (page: Page) => hook(page).state();

/** "500ns", "10µs", "2ms", "1s" → seconds. */
function labelSeconds(label: string): number {
  const m = /^([\d.]+)(ns|µs|ms|s)$/.exec(label);
  assert.ok(m, `a latency label: "${label}"`);
  return Number(m[1]) * { ns: 1e-9, µs: 1e-6, ms: 1e-3, s: 1 }[m[2] as 'ns' | 'µs' | 'ms' | 's'];
}

/**
 * loop0 is drawn in the schema-3 row of its latency: the busiest cell near 5.3 ms is in that
 * row, drawn, and the y axis's labelled ticks sit at the rows of their latencies, the cell
 * between the ticks around 5.3 ms.
 */
async function checkLoop0Drawn(page: Page, t: TestContext): Promise<void> {
  const st = await state(page);
  assert.deepEqual(st.schema, FINE, 'the heat maps are of schema 3');
  const win = st.latencyWindow;
  assert.ok(win && win.hi <= 210 && win.hi - win.lo >= 48, `latency window ${JSON.stringify(win)}`);
  const mode = bucketOfSeconds(LOOP0_MEDIAN, FINE);
  const band: [number, number] = [bucketOfSeconds(3e-3, FINE), bucketOfSeconds(9e-3, FINE)];
  const hist = await hook(page).histogram('7:0');
  assert.equal(hist.length, 210, 'a histogram of 210 buckets');
  const peak = hist.indexOf(Math.max(...hist.slice(band[0], band[1] + 1)));
  assert.ok(Math.abs(peak - mode) <= 1, `histogram peak in row ${peak}, 5.3 ms is row ${mode}`);
  const p50 = (await hook(page).percentiles('7:0'))['p50'];
  assert.ok(p50 !== undefined && Math.abs(Math.log2(p50 / LOOP0_MEDIAN)) <= 1 / 8 + 0.05, `p50 ${p50} within a schema-3 bucket of 5.3 ms`);

  const seen = await page.evaluate(
    ({ band }: { band: [number, number] }) => {
      const blkheat = (globalThis as unknown as Hooked).__blkheat;
      const hot = blkheat.hottestCell('7:0', band[0], band[1]);
      if (!hot) return undefined;
      // Where the cell is, what is drawn there and two octaves below, and the axis, in one turn
      // of the page (a live second in between scrolls the view by a column).
      const c = blkheat.cellCenter('7:0', hot.from, hot.bucket);
      const below = blkheat.cellCenter('7:0', hot.from, hot.bucket - 16);
      const doc = (globalThis as unknown as { document: { querySelector(q: string): El | null } }).document;
      const svg = doc.querySelector('section.disk-row[data-dev="7:0"] svg.y-axis');
      const top = svg?.getBoundingClientRect().top ?? NaN;
      const ticks = [...(svg?.querySelectorAll('.tick') ?? [])].map((el) => ({
        label: el.textContent ?? '',
        y: top + Number(/translate\([^,]+,([^)]+)\)/.exec(el.getAttribute('transform') ?? '')?.[1]),
      }));
      return {
        hot,
        c,
        px: c ? blkheat.pixelAt('7:0', c.x, c.y) : undefined,
        empty: below ? blkheat.pixelAt('7:0', below.x, below.y) : undefined,
        hit: c ? blkheat.cellAt(c.x, c.y) : undefined,
        ticks,
        height: svg?.getBoundingClientRect().height ?? NaN,
        top,
      };
    },
    { band },
  );
  assert.ok(seen, 'a busy loop0 cell near 5.3 ms');
  const { hot, c, px, empty, hit, ticks, height, top } = seen;
  assert.ok(Math.abs(hot.bucket - mode) <= 1, `busiest cell in row ${hot.bucket}, 5.3 ms is row ${mode}`);
  assert.ok(lowerBoundSeconds(hot.bucket, FINE) < 7e-3 && upperBoundSeconds(hot.bucket, FINE) > 4e-3);
  assert.ok(c && px && px[3] > 0, 'the cell is drawn');
  assert.ok(empty && empty.join() !== px.join(), `two octaves below (no I/O) looks different: ${empty?.join()} vs ${px.join()}`);
  assert.equal(hit?.bucket, hot.bucket, 'hit-testing the drawn cell finds its row');

  const labelled = ticks.filter((k) => k.label !== '');
  t.diagnostic(
    `y axis: ${labelled.map((k) => `${k.label}@${(k.y - top).toFixed(1)}`).join(' ')}; cell row ${hot.bucket} at ${(c.y - top).toFixed(1)}`,
  );
  assert.ok(labelled.length >= 2, 'labelled latency ticks');
  for (const k of labelled) {
    const u = secondsToU(labelSeconds(k.label), FINE);
    const want = top + (height * (win.hi - u)) / (win.hi - win.lo);
    assert.ok(Math.abs(k.y - want) < 1.5, `tick ${k.label} at y ${k.y}, its schema-3 row is at ${want}`);
  }
  const under = labelled
    .filter((k) => labelSeconds(k.label) <= LOOP0_MEDIAN)
    .sort((a, b) => labelSeconds(b.label) - labelSeconds(a.label))[0];
  const over = labelled
    .filter((k) => labelSeconds(k.label) >= LOOP0_MEDIAN)
    .sort((a, b) => labelSeconds(a.label) - labelSeconds(b.label))[0];
  assert.ok(under && over, 'ticks below and above 5.3 ms');
  assert.ok(
    c.y < under.y && c.y > over.y,
    `the 5.3 ms cell (y ${c.y}) is drawn between ${under.label} (y ${under.y}) and ${over.label} (y ${over.y})`,
  );
}

test(
  'schema 3 live: an agent restarted on schema 3 is drawn at 8 rows per octave, loop0 in its latency row',
  { timeout: 120_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { agent, session: s, page } = await openFakeAgent(t, {}, { colorScheme: 'dark' });
    await page.goto(`${agent.url}?live=300`);
    await waitLive(page, 20_000);
    await idle(page);
    assert.deepEqual((await state(page)).schema, BUCKET_SCHEMA, 'schema 2 first');
    assert.equal((await hook(page).histogram('7:0')).length, 106);

    // The agent comes back with --schema 3: same disks and latencies, hello.schema and frames of schema 3.
    const started = agent.historyFrom + 3600;
    agent.restartWith(syntheticSource({ disks: defaultDisks(started - 260), schema: FINE }));
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().schema?.scale === 3, undefined, {
      timeout: 30_000,
    });
    await waitLive(page, 20_000);
    await idle(page);
    const st = await state(page);
    assert.ok(st.liveCovered && st.liveCovered.to - st.liveCovered.from >= 590, 'backfilled afresh in the new schema');
    await checkLoop0Drawn(page, t);
    await screenshot(page, 'schema3-live', 'web-browser');
    assert.deepEqual(
      (await hook(page).notices()).filter((n) => n.kind === 'error'),
      [],
      'no error notice',
    );
    assert.deepEqual(unexpectedErrors(s), []);
  },
);

test('schema 3 snapshot: a schema-3 file imported while live is schema 2 is drawn in its own rows', { timeout: 120_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const T0 = 1_700_000_000;
  const file = jsonFile(t, 'fine-snapshot.json', syntheticSource({ disks: defaultDisks(T0), schema: FINE }).snapshot(T0, T0 + 300));
  const { agent, session: s, page } = await openFakeAgent(t);
  await page.goto(agent.url);
  await waitLive(page, 20_000);
  await idle(page);
  assert.deepEqual((await state(page)).schema, BUCKET_SCHEMA, 'live is schema 2');
  await importSnapshot(page, file, 30_000);
  await idle(page);
  await checkLoop0Drawn(page, t);
  await screenshot(page, 'schema3-snapshot', 'web-browser');
  assert.deepEqual(unexpectedErrors(s), []);
});

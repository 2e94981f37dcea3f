// The cgroup table and filter, in headless chromium with the fake agent serving frames with
// per-cgroup data of known shape (fixtures/incident.ts: on loop0 PG has every Read and half the
// Writes, BACKUP the other Writes; vda is all PG's; zram0 has no `cg`). Over a fixed past range,
// at 1 s and at a coarse step (merged frames), and in an imported snapshot: the table's counts are
// the source's sums; a click on a cgroup filters the heat maps (totals, rows and pixels are
// that cgroup's), the samples, and the URL; the op-class table and queue latency say they are
// not split by cgroup; a bad cgroup in a link is refused with a notice. Needs apps/web/dist and
// chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOfSeconds } from '@blkheat/shared-types';
import { hook, type Hooked, idle, importSnapshot, screenshot, waitFrame, waitLive } from '@blkheat/testkit';
import { jsonFile, openSummed, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { type FakeAgent, startFakeAgent } from '../fixtures/fakeAgent.ts';
import { BACKUP, cgroupSums, classSums, LOOP0, PG, pgWrites, SLOW_S, FAST_S, VDA, withIncident, ZRAM0 } from '../fixtures/incident.ts';
import { defaultDisks, syntheticSource, type SyntheticSource } from '../fixtures/synthetic.ts';

/** An element as evaluateAll hands it over (the DOM types are not in the tests' lib). */
type El = { getAttribute(name: string): string | null; textContent: string | null };

async function start(t: TestContext): Promise<{ agent: FakeAgent; source: SyntheticSource; started: number }> {
  const started = Math.floor(Date.now() / 1000);
  const source = withIncident(syntheticSource({ disks: defaultDisks(started - 260) }));
  const agent = await startFakeAgent({ source });
  t.after(() => agent.close());
  return { agent, source, started };
}

const state = (page: Page) => hook(page).state();

/** PG and BACKUP of loop0 over [from, to), from the source's classes second by second (not from its `cg`). */
function expectedLoop0(source: SyntheticSource, from: number, to: number): Map<string, number> {
  let pg = 0;
  let backup = 0;
  for (let ts = from; ts < to; ts++) {
    const c = classSums(source, LOOP0, ts, ts + 1);
    const writes = c.get('Write') ?? 0;
    pg += (c.get('Read') ?? 0) + pgWrites(writes);
    backup += writes - pgWrites(writes);
  }
  return new Map([
    [PG, pg],
    [BACKUP, backup],
  ]);
}

/** The table as the page shows it: cgroup → count (from the rows' attributes and text). */
async function table(page: Page): Promise<Map<string, number>> {
  const rows = await page
    .locator('[data-testid=cgroup-row]')
    .evaluateAll((els: El[]) =>
      els.map((e) => ({ g: e.getAttribute('data-cgroup') ?? '', n: Number(e.getAttribute('data-count')), text: e.textContent ?? '' })),
    );
  for (const r of rows) assert.ok(r.text.includes(r.n.toLocaleString('en-US')), `row ${r.g} shows ${r.n}: ${r.text}`);
  return new Map(rows.map((r) => [r.g, r.n]));
}

test(
  'cgroups: table counts are the source sums (1 s and coarse steps); a click filters heat maps, samples and URL',
  { timeout: 120_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { agent, source, started } = await start(t);
    const from = started - 400;
    const to = started - 280;
    const page = await openSummed(t, `${agent.url}?from=${from}&to=${to}`);
    const st = await state(page);
    assert.equal(st.step, 1);
    assert.deepEqual(st.summaryRange, { from, to });

    // The table (panel disk: the first shown, loop0) against sums from the source's classes.
    const want = expectedLoop0(source, from, to);
    assert.deepEqual(await table(page), want);
    assert.deepEqual(new Map((await hook(page).cgroups(LOOP0)).map((r) => [r.g, r.n])), want);
    const total = (want.get(PG) ?? 0) + (want.get(BACKUP) ?? 0);
    const all = (await hook(page).counts())[LOOP0];
    assert.equal(all?.histogram, total, 'unfiltered: the heat map holds every I/O of loop0');
    await screenshot(page, 'cgroups-table', 'web-browser');

    // Another disk in the panel: vda is all PG's; zram0 says it has no per-cgroup data.
    await page.selectOption('[data-testid=cgroup-disk]', VDA);
    assert.deepEqual(await table(page), cgroupSums(source, VDA, from, to));
    assert.equal(await page.locator('[data-testid=cgroup-row]').count(), 1);
    await page.selectOption('[data-testid=cgroup-disk]', ZRAM0);
    assert.match((await page.locator('[data-testid=cgroup-empty]').textContent()) ?? '', /no per-cgroup split/);
    await page.selectOption('[data-testid=cgroup-disk]', LOOP0);

    // Click BACKUP: every heat map draws BACKUP's device latency.
    await page.locator(`[data-testid=cgroup-row][data-cgroup="${BACKUP}"] [data-testid=cgroup-button]`).click();
    await page.waitForFunction((g) => (globalThis as unknown as Hooked).__blkheat.state().cgroup === g, BACKUP);
    await idle(page);
    const counts = await hook(page).counts();
    assert.equal(counts[LOOP0]?.histogram, want.get(BACKUP), 'loop0 heat map total = BACKUP');
    assert.equal(counts[VDA]?.histogram, 0, 'vda: BACKUP did no I/O there');
    const hist = await hook(page).histogram(LOOP0);
    const slow = bucketOfSeconds(SLOW_S, source.schema);
    const fast = bucketOfSeconds(FAST_S, source.schema);
    assert.equal(hist[slow], want.get(BACKUP), 'BACKUP only wrote, slowly');
    assert.equal(hist[fast] ?? 0, 0, 'no fast reads in BACKUP');
    assert.equal(await page.locator('[data-testid=filter-cgroup]').getAttribute('data-cgroup'), BACKUP, 'the active filter is shown');
    assert.ok(await page.locator('[data-testid=class-not-split]').isVisible(), 'the op-class table says it is not split by cgroup');
    await page.waitForFunction(() => (globalThis as unknown as { location: { search: string } }).location.search.includes('cgroup='));
    assert.equal(new URL(page.url()).searchParams.get('cgroup'), BACKUP, 'kept in the URL');

    // Pixels: in a column where BACKUP wrote, the slow row is drawn, the row half an octave below
    // it is empty, and the fast reads (PG's) are not even in the latency window any more.
    // A second the source sampled BACKUP writes in (sampling is by chance; pick it from the source).
    let ts = from + 30;
    while (ts < to - 10 && !source.samples(ts).some((x) => x.dev === LOOP0 && x.cg === BACKUP)) ts++;
    assert.ok(ts < to - 10, 'a second with sampled BACKUP writes');
    const px = await page.evaluate(
      ({ dev, ts, slow, fast }) => {
        const h = (globalThis as unknown as Hooked).__blkheat;
        const a = h.cellCenter(dev, ts, slow);
        const b = h.cellCenter(dev, ts, slow - 2);
        return {
          slow: a && h.pixelAt(dev, a.x, a.y),
          below: b && h.pixelAt(dev, b.x, b.y),
          cell: a && h.cellAt(a.x, a.y),
          fastDrawn: h.cellCenter(dev, ts, fast) !== undefined,
        };
      },
      { dev: LOOP0, ts, slow, fast },
    );
    assert.equal(
      px.cell?.count,
      expectedLoop0(source, ts, ts + 1).get(BACKUP),
      'the cell under the pointer holds BACKUP’s writes of that second',
    );
    assert.ok(px.slow && px.slow[3] > 200, `slow row drawn: ${px.slow}`);
    assert.equal(px.below?.[3], 0, `the row below is empty: ${px.below}`);
    assert.equal(px.fastDrawn, false, 'the fast rows left the latency window');

    // A click on the cell lists the samples of that second and bucket whose cgroup is BACKUP.
    const c = await hook(page).cellCenter(LOOP0, ts, slow);
    assert.ok(c);
    await page.mouse.click(c.x, c.y);
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.samples().status === 'done');
    const sel = await hook(page).selection();
    assert.equal(sel?.cgroup, BACKUP);
    const wantSamples = source.samplesIn(sel?.from ?? 0, sel?.to ?? 0).filter((s) => s.dev === LOOP0 && s.cg === BACKUP && s.c === 'Write');
    assert.ok(wantSamples.length > 0, 'the source sampled BACKUP writes in that second');
    const rows = await page
      .locator('[data-testid=samples-table] tbody tr')
      .evaluateAll((els: El[]) => els.map((e) => e.getAttribute('data-cg')));
    assert.equal(rows.length, wantSamples.length);
    assert.ok(
      rows.every((g) => g === BACKUP),
      `every listed sample is BACKUP's: ${rows}`,
    );
    assert.match((await page.locator('[data-testid=samples-scope]').textContent()) ?? '', /cgroup \/user\.slice\/backup\.scope/);
    await screenshot(page, 'cgroups-filtered', 'web-browser');

    // Removing the filter brings every I/O back.
    await page.locator('[data-testid=filter-cgroup-remove]').click();
    await idle(page);
    assert.equal((await state(page)).cgroup, undefined);
    assert.equal((await hook(page).counts())[LOOP0]?.histogram, total);
    assert.equal(await page.locator('[data-testid=filter-bar]').count(), 0);

    // Zoomed out (a coarse step: the agent merges `cg` per path): the table still sums exactly.
    const wideFrom = started - 3300;
    const page2 = await openSummed(t, `${agent.url}?from=${wideFrom}&to=${started - 100}&cgroup=${encodeURIComponent(PG)}`);
    const st2 = await state(page2);
    assert.ok((st2.step ?? 0) > 1, `coarse step ${st2.step}`);
    assert.equal(st2.cgroup, PG, 'the filter comes from the link');
    const range = st2.summaryRange as { from: number; to: number };
    const want2 = expectedLoop0(source, range.from, range.to);
    assert.deepEqual(await table(page2), want2);
    assert.equal((await hook(page2).counts())[LOOP0]?.histogram, want2.get(PG));
    await screenshot(page2, 'cgroups-coarse', 'web-browser');
  },
);

test('cgroups: queue latency and a bad link say what they cannot filter; a snapshot filters the same', { timeout: 90_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const { agent, source, started } = await start(t);
  const from = started - 400;
  const to = started - 280;

  // Queue latency has no cgroup split: the page says so and shows every cgroup's queue latency.
  const q = await openSummed(t, `${agent.url}?from=${from}&to=${to}&lat=queue&cgroup=${encodeURIComponent(BACKUP)}`);
  assert.equal((await state(q)).cgroup, BACKUP);
  assert.equal(await q.locator('[data-testid=filter-bar]').getAttribute('data-applied'), 'false');
  assert.match((await q.locator('[data-testid=filter-not-applied]').textContent()) ?? '', /Queue latency is not split by cgroup/);
  const all = expectedLoop0(source, from, to);
  assert.equal(
    (await hook(q).counts())[LOOP0]?.histogram,
    (all.get(PG) ?? 0) + (all.get(BACKUP) ?? 0),
    'every cgroup’s queue latency, as the bar says',
  );
  await screenshot(q, 'cgroups-queue-not-split', 'web-browser');
  // A click on a cgroup from another phase turns the page to device time, the latency split by
  // cgroup, so that the click filters what is drawn.
  await q.locator(`[data-testid=cgroup-row][data-cgroup="${PG}"] [data-testid=cgroup-button]`).click();
  await hook(q).idle();
  assert.deepEqual([(await state(q)).cgroup, (await state(q)).kind], [PG, 'device']);
  assert.equal(await q.locator('[data-testid=filter-bar]').getAttribute('data-applied'), 'true');
  assert.equal((await hook(q).counts())[LOOP0]?.histogram, all.get(PG) ?? 0, 'the clicked cgroup’s device latency only');

  // A cgroup that is not a path is refused, and the link's other settings stay.
  const bad = await openSummed(t, `${agent.url}?from=${from}&to=${to}&cgroup=relative%2Fpath`);
  assert.equal((await state(bad)).cgroup, undefined);
  const notices = await hook(bad).notices();
  assert.ok(
    notices.some((n) => n.kind === 'error' && n.text.includes('cgroup filter "relative/path" ignored')),
    JSON.stringify(notices),
  );
  assert.deepEqual((await state(bad)).summaryRange, { from, to });

  // In an imported snapshot the table and the filter work on the file's frames.
  await importSnapshot(bad, jsonFile(t, 'incident-snapshot.json', source.snapshot(from, to)));
  await idle(bad);
  assert.deepEqual((await state(bad)).summaryRange, { from, to });
  assert.deepEqual(await table(bad), all);
  await bad.locator(`[data-testid=cgroup-row][data-cgroup="${PG}"] [data-testid=cgroup-button]`).click();
  await idle(bad);
  assert.equal((await hook(bad).counts())[LOOP0]?.histogram, all.get(PG));
  await screenshot(bad, 'cgroups-snapshot', 'web-browser');
});

test(
  'cgroups live: the filter holds as seconds arrive (heat map total = the cgroup’s I/O of the seconds received)',
  { timeout: 90_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { agent, source, started } = await start(t);
    const page = await openSummed(t, agent.url);
    await waitLive(page);
    await page.locator(`[data-testid=cgroup-row][data-cgroup="${BACKUP}"] [data-testid=cgroup-button]`).click();
    await idle(page);
    let last = 0;
    for (let round = 0; round < 2; round++) {
      // Read in one go, then find the second the summary reached: the totals must be a prefix of the source.
      const got = await page.evaluate((dev) => {
        const h = (globalThis as unknown as Hooked).__blkheat;
        return { st: h.state(), total: h.counts()[dev]?.histogram ?? -1, table: h.cgroups(dev) };
      }, LOOP0);
      assert.ok(got.st.following && got.st.cgroup === BACKUP && got.st.summaryRange);
      const { from, to } = got.st.summaryRange;
      let backup = 0;
      let all = 0;
      let reached: number | undefined;
      for (let x = from; x <= Math.min(to, started + 600); x++) {
        const tableAll = got.table.reduce((n, g) => n + g.n, 0);
        if (backup === got.total && all === tableAll) {
          reached = x;
          break;
        }
        const w = expectedLoop0(source, x, x + 1);
        backup += w.get(BACKUP) ?? 0;
        all += (w.get(BACKUP) ?? 0) + (w.get(PG) ?? 0);
      }
      assert.ok(reached !== undefined && reached > from + 60, `heat map total ${got.total} = BACKUP over [${from}, ${reached})`);
      assert.ok(reached >= last, 'the summary moves on with live seconds');
      last = reached;
      await waitFrame(page, (got.st.lastFrameTs ?? 0) + 2);
      await idle(page);
    }
    await screenshot(page, 'cgroups-live', 'web-browser');
  },
);

// Incident views in headless chromium with the fake agent, live (fixtures/incidents.ts: loop0
// carries a stuck I/O made at a known fractional second S a few seconds after the page went live,
// aging one second per second until it completes at second DONE, besides younger I/Os in flight;
// failed I/Os and requeues in known seconds). Checked: the row head turns loud within 3 s of the
// I/O passing the 1 s threshold and quietens once it completed; the list (a click on the badge)
// shows its pid, comm, sector, size, class and an age that equals the source's and grows with
// the seconds; the overlay has the mark's pixels above the start column (not before it), and
// keeps the whole hang after completion; a page showing only another disk says in its header
// that loop0 hangs; the strip's oldest-in-flight lane equals the source's ages; the
// error/requeue marks, the tooltip and the op-class errors column equal the source's counts;
// zoomed out (coarse columns) the marks still sit on the right columns; the threshold is in the
// toolbar and the URL, and a bad one in a link is reported. Needs apps/web/dist and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { hook, type Hooked, screenshot } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';
import {
  type Hang,
  type InPage,
  isAlert,
  LOOP0,
  sourceClassFailed,
  sourceFaults,
  STUCK_COMM,
  STUCK_PID,
  STUCK_SECTOR,
  withIncidents,
} from '../fixtures/incidents.ts';
import { defaultDisks, syntheticSource } from '../fixtures/synthetic.ts';

test(
  'incident views: stuck I/O loud, listed, marked, quiet after; errors and requeues counted and marked',
  { timeout: 120_000 },
  async (t: TestContext) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    let hang: Hang = { start: Infinity, done: Infinity }; // set below, once the page is live
    const source = withIncidents(syntheticSource({ disks: defaultDisks(started - 260) }), () => hang);
    const { agent, page } = await openFakeAgent(t, { source });
    await page.goto(agent.url);
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().mode === 'live', undefined, { timeout: 20_000 });
    await page.waitForSelector('[data-testid="disk-row-loop0"]', { timeout: 20_000 });
    const row = page.locator('[data-testid="disk-row-loop0"]');
    // The stuck I/O is made 2.4 s from now and completes in the 12th second after.
    const S = Math.floor(Date.now() / 1000) + 2.4;
    const DONE = Math.floor(S) + 12;
    hang = { start: S, done: DONE };
    assert.equal(await row.getAttribute('data-stuck'), 'false', 'quiet before the I/O is a second old');

    // Loud within 3 s of the I/O passing the threshold (1 s, the default).
    await page.waitForFunction(
      () => (globalThis as unknown as InPage).document.querySelector('[data-testid="disk-row-loop0"][data-stuck="true"]') !== null,
      undefined,
      {
        timeout: 20_000,
        polling: 100,
      },
    );
    const loudAt = Date.now() / 1000;
    assert.ok(loudAt <= S + 1 + 3, `loud ${(loudAt - (S + 1)).toFixed(2)} s after the I/O passed 1 s`);
    const badge = page.locator('[data-testid="stuck-loop0"]');
    assert.match((await badge.textContent()) ?? '', /^stuck: 1 I\/O, oldest \d+(\.\d+)? s$/, 'the younger I/Os in flight are not stuck');

    // The list: pid, comm, sector, size, class, and the age the source gives for the second shown.
    await badge.click();
    const list = page.locator('[data-testid="stuck-list-loop0"]');
    await list.waitFor({ timeout: 5000 });
    const readList = async () =>
      page.evaluate(() => {
        const el = (globalThis as unknown as InPage).document.querySelector('[data-testid="stuck-list-loop0"]') as unknown as {
          dataset: { ts: string };
          querySelectorAll(
            q: string,
          ): ArrayLike<{ dataset: { pid: string; age: string }; querySelectorAll(q: string): ArrayLike<{ textContent: string }> }>;
        } | null;
        if (!el) return undefined;
        const rows = Array.from(el.querySelectorAll('[data-testid="stuck-io"]'));
        return {
          ts: Number(el.dataset.ts),
          rows: rows.map((r) => ({
            pid: Number(r.dataset.pid),
            age: Number(r.dataset.age),
            cells: Array.from(r.querySelectorAll('td')).map((c) => c.textContent),
          })),
        };
      });
    const first = await readList();
    assert.ok(first && first.rows.length === 1, `one stuck I/O listed: ${JSON.stringify(first)}`);
    const r0 = first.rows[0];
    assert.ok(r0);
    assert.equal(r0.pid, STUCK_PID);
    assert.deepEqual(r0.cells.slice(0, 5), [String(STUCK_PID), STUCK_COMM, String(STUCK_SECTOR), '8 KiB', 'Write']);
    assert.ok(Math.abs(r0.age - (first.ts + 1 - S)) < 1e-6, `age ${r0.age} = second ${first.ts} + 1 − start`);
    await page.waitForFunction(
      (ts) =>
        Number(
          (
            (globalThis as unknown as InPage).document.querySelector('[data-testid="stuck-list-loop0"]') as unknown as {
              dataset: { ts: string };
            } | null
          )?.dataset.ts,
        ) > ts,
      first.ts,
      { timeout: 5000 },
    );
    const second = await readList();
    const r1 = second?.rows[0];
    assert.ok(second && r1 && r1.pid === STUCK_PID);
    assert.ok(Math.abs(r1.age - r0.age - (second.ts - first.ts)) < 1e-6, `the age grows with the seconds: ${r0.age} → ${r1.age}`);
    assert.match(r1.cells[5] ?? '', /^\d+(\.\d+)? s$/);

    // The mark: red pixels above the start column, none 30 s before it; its span is the source's.
    const bucketOf = async () => (await hook(page).hottestCell(LOOP0))?.bucket ?? 0;
    const bucket = await bucketOf();
    const markPixels = async (startTs: number) =>
      page.evaluate(
        async ({ dev, startTs, bucket }) => {
          const blkheat = (globalThis as unknown as Hooked).__blkheat;
          await blkheat.idle();
          const at = blkheat.cellCenter(dev, startTs, bucket);
          const before = blkheat.cellCenter(dev, startTs - 30 * (blkheat.state().step ?? 1), bucket);
          const r = (globalThis as unknown as InPage).document
            .querySelector('[data-testid="heatmap-overlay-loop0"]')
            ?.getBoundingClientRect();
          if (!at || !before || !r) return undefined;
          return {
            at: blkheat.overlayPixelAt(dev, at.x, r.top + 2),
            before: blkheat.overlayPixelAt(dev, before.x, r.top + 2),
            stuck: blkheat.stuck(dev),
          };
        },
        { dev: LOOP0, startTs, bucket },
      );
    const m1 = await markPixels(Math.floor(S));
    assert.ok(m1, 'mark read');
    assert.equal(m1.stuck.spans.length, 1, JSON.stringify(m1.stuck.spans));
    const span = m1.stuck.spans[0];
    assert.ok(
      span && Math.abs(span.start - S) < 1e-6 && span.pid === STUCK_PID,
      `span starts at the source's start: ${JSON.stringify(span)}`,
    );
    assert.ok(isAlert(m1.at), `mark above the start column: ${m1.at}`);
    assert.equal(m1.before?.[3], 0, `nothing drawn 30 s before it: ${m1.before}`);
    await screenshot(page, 'incidents-stuck', 'web-browser');

    // A page showing only vda says loop0 hangs in its header.
    const other = await page.context().newPage();
    await other.goto(`${agent.url}?disks=vda`);
    const hidden = other.locator('[data-testid="stuck-hidden"]');
    await hidden.waitFor({ timeout: 10_000 });
    assert.equal(await hidden.textContent(), 'stuck I/O on loop0 (not shown)');
    assert.ok(Date.now() / 1000 < DONE + 1, 'seen while it hung');
    await other.close();

    // Quiet again within 3 s of the frame without it; the mark keeps the whole hang.
    await page.waitForFunction(
      () => (globalThis as unknown as InPage).document.querySelector('[data-testid="disk-row-loop0"][data-stuck="false"]') !== null,
      undefined,
      {
        timeout: 20_000,
        polling: 100,
      },
    );
    const quietAt = Date.now() / 1000;
    assert.ok(quietAt >= DONE, 'loud until it completed');
    assert.ok(quietAt <= DONE + 1 + 3, `quiet ${(quietAt - (DONE + 1)).toFixed(2)} s after its completion second closed`);
    assert.equal(await page.locator('[data-testid="stuck-list-loop0"]').count(), 0, 'the list went with it');
    const m2 = await markPixels(Math.floor(S));
    assert.ok(m2);
    assert.equal(m2.stuck.count, 0);
    assert.equal(m2.stuck.spans[0]?.end, DONE, 'the mark spans the hang: to the end of the last second it was in flight');
    assert.ok(isAlert(m2.at), 'the mark stays after completion');

    // The strip's oldest-in-flight lane: the source's oldest age per second (the young I/Os are 2 ms old).
    const tp = await hook(page).throughput(LOOP0);
    assert.ok(tp && tp.step === 1);
    let seen = 0;
    for (let i = 0; i < tp.oldest.length; i++) {
      const ts = tp.from + i;
      const v = tp.oldest[i];
      if (v === null || v === undefined || ts >= DONE + 1) continue;
      const want = (source.frame(ts).disks.find((d) => d.dev === LOOP0)?.inflight?.oldest_ns ?? NaN) / 1e9;
      assert.ok(Math.abs(v - want) < 1e-9, `oldest in flight at ${ts}: ${v} vs ${want}`);
      if (ts >= Math.floor(S) && ts < DONE) seen++;
    }
    assert.equal(seen, DONE - Math.floor(S), 'every second of the hang is in the lane');
    const vdaTp = await hook(page).throughput('253:0');
    assert.ok(vdaTp && vdaTp.oldest.every((v) => v === null), 'no `inflight` in the data: no data, not 0');

    // Error and requeue marks: the columns and counts are the source's.
    const faults = await page.evaluate(async (dev) => {
      const blkheat = (globalThis as unknown as Hooked).__blkheat;
      await blkheat.idle();
      return { faults: blkheat.faults(dev), state: blkheat.state() };
    }, LOOP0);
    const last = faults.state.lastFrameTs ?? 0;
    const from = Math.ceil(faults.state.view.from);
    let errCols = 0;
    for (let ts = from; ts <= last; ts++) {
      const want = sourceFaults(source, LOOP0, ts, 1);
      const got = faults.faults.find((f) => f.ts === ts);
      if (want.failed === 0 && want.requeues === 0) assert.equal(got, undefined, `no mark at ${ts}`);
      else {
        assert.deepEqual(got, { ts, ...want }, `marks at ${ts}`);
        if (want.failed > 0) errCols++;
      }
    }
    assert.ok(errCols >= 20, `${errCols} columns with failed I/Os checked`);

    // Pixels: the error bar at the bottom of an error column; and the tooltip's counts there.
    const errTs = faults.faults.find((f) => f.failed > 0 && f.requeues === 0 && f.ts > from + 20 && f.ts < last - 20)?.ts;
    assert.ok(errTs !== undefined);
    const errPx = await page.evaluate(
      async ({ dev, ts, bucket }) => {
        const blkheat = (globalThis as unknown as Hooked).__blkheat;
        await blkheat.idle();
        const c = blkheat.cellCenter(dev, ts, bucket);
        const r = (globalThis as unknown as InPage).document
          .querySelector('[data-testid="heatmap-overlay-loop0"]')
          ?.getBoundingClientRect();
        return c && r ? blkheat.overlayPixelAt(dev, c.x, r.bottom - 2) : undefined;
      },
      { dev: LOOP0, ts: errTs, bucket },
    );
    assert.ok(isAlert(errPx), `error bar drawn: ${errPx}`);
    const c = await hook(page).cellCenter(LOOP0, errTs, bucket);
    assert.ok(c);
    await page.mouse.move(c.x, c.y);
    await page.waitForSelector('[data-testid=tooltip-failed]', { timeout: 5000 });
    // The tooltip stays on the second it opened over while live columns scroll: read its second from it.
    const shownTs = Number(await page.locator('[data-testid=tooltip-time]').getAttribute('data-ts'));
    const want = sourceFaults(source, LOOP0, shownTs, 1);
    assert.equal(Number(await page.locator('[data-testid=tooltip-failed]').getAttribute('data-count')), want.failed);
    assert.equal(Number(await page.locator('[data-testid=tooltip-requeues]').getAttribute('data-count')), want.requeues);
    if (want.failed > 0)
      assert.match(
        (await page.locator('[data-testid=tooltip-failed]').textContent()) ?? '',
        new RegExp(`IOERR ${want.byStatus.IOERR ?? 0}`),
      );
    await screenshot(page, 'incidents-tooltip', 'web-browser');
    await page.mouse.move(2, 2);

    // The op-class table's errors column: the source's failed I/Os of each class over the summary range.
    const table = await page.evaluate(async () => {
      const blkheat = (globalThis as unknown as Hooked).__blkheat;
      await blkheat.idle();
      const cell = (c: string) =>
        Number(
          (
            (globalThis as unknown as InPage).document.querySelector(`[data-testid="class-errors-${c}"]`) as unknown as {
              dataset: { count: string };
            } | null
          )?.dataset.count,
        );
      return { range: blkheat.state().summaryRange, last: blkheat.state().lastFrameTs, read: cell('Read'), write: cell('Write') };
    });
    assert.ok(table.range && table.last !== undefined);
    const upTo = Math.min(table.range.to, table.last + 1);
    assert.equal(table.read, sourceClassFailed(source, 'Read', table.range.from, upTo), 'Read errors');
    assert.equal(table.write, sourceClassFailed(source, 'Write', table.range.from, upTo), 'Write errors');
    assert.ok(table.read > 0 && table.write > 0);

    // Zoomed out (coarse columns): marks on the columns that hold them, counts summed over each column.
    await page.click('[data-testid="span-1h"]');
    await page.waitForFunction(() => ((globalThis as unknown as Hooked).__blkheat.state().step ?? 1) > 1, undefined, { timeout: 20_000 });
    const coarse = await page.evaluate(async (dev) => {
      const blkheat = (globalThis as unknown as Hooked).__blkheat;
      await blkheat.idle();
      return { faults: blkheat.faults(dev), state: blkheat.state() };
    }, LOOP0);
    const step = coarse.state.step ?? 1;
    const lastC = coarse.state.lastFrameTs ?? 0;
    let coarseChecked = 0;
    for (const f of coarse.faults) {
      if (f.ts + step > lastC || f.ts < started - 3600 + step) continue; // the live column still filling; history's start
      assert.deepEqual(f, { ts: f.ts, ...sourceFaults(source, LOOP0, f.ts, step) }, `coarse marks at ${f.ts} (step ${step})`);
      coarseChecked++;
    }
    assert.ok(coarseChecked >= 20, `${coarseChecked} coarse columns checked`);
    const m3 = await markPixels(Math.floor(S / step) * step);
    assert.ok(m3 && isAlert(m3.at), `zoomed out, the mark is above the column the I/O started in: ${m3?.at}`);
    await screenshot(page, 'incidents-zoomed', 'web-browser');

    // The threshold: in the toolbar and the URL.
    await page.selectOption('[data-testid="stuck-threshold"]', '0.5');
    await page.waitForFunction(
      () => (globalThis as unknown as { location: { search: string } }).location.search.includes('stuck=0.5'),
      undefined,
      { timeout: 5000 },
    );
    assert.equal((await hook(page).stuck(LOOP0)).thresholdS, 0.5);
  },
);

test('a bad stuck threshold in a link is reported and the default used', { timeout: 60_000 }, async (t: TestContext) => {
  if (skipWithoutDashboard(t)) return;
  const { agent, page } = await openFakeAgent(t);
  await page.goto(`${agent.url}?stuck=soon`);
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().mode === 'live', undefined, { timeout: 20_000 });
  const seen = await page.evaluate(() => {
    const h = (globalThis as unknown as Hooked).__blkheat;
    return { notices: h.notices(), stuck: h.stuck('7:0').thresholdS };
  });
  assert.equal(seen.stuck, 1);
  assert.ok(
    seen.notices.some((n) => n.kind === 'error' && /stuck=soon: expected a number of seconds from 0\.01 to 3600/.test(n.text)),
    JSON.stringify(seen.notices),
  );
  assert.equal(await page.inputValue('[data-testid="stuck-threshold"]'), '1');
});

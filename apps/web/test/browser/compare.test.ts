// Compare (A/B) in headless chromium with the fake agent: loop0's latency shifts from a 2 ms
// band to an 8 ms band at a known second. Zooming to the half before it and setting it as the
// baseline, then to the half after it and setting that as the comparison, shows per disk and
// class both histograms with exactly the source's counts over the ranges the page names, a p50
// delta within one bucket of +6 ms, the baseline filled and the comparison outlined, and the
// difference blue where the 2 ms band was and red where the 8 ms band is. The ranges survive a
// reload (URL), a coarse view, and a snapshot export → import; a snapshot of 10 s steps with a
// compare field is compared over whole steps; a bad link value is named and ignored.
// Needs apps/web/dist and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bucketCount,
  bucketOfSeconds,
  coarsenFrames,
  lowerBoundSeconds,
  quantileBucket,
  type Snapshot,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { hook, type Hooked, idle, importSnapshot, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { jsonFile, openFakeAgent, type Page, skipWithoutDashboard, tempDir } from '../fixtures/browser.ts';
import { defaultDisks, type SynthDisk, syntheticSource, type SyntheticSource } from '../fixtures/synthetic.ts';
import { formatLatency } from '../../src/model/latency.ts';

const LOOP0 = '7:0';
const VDA = '253:0';

type Range = { from: number; to: number };
type Compared = NonNullable<ReturnType<Hooked['__blkheat']['compare']>>;

/** loop0 at 2 ms until `shift`, 8 ms from then on; vda as usual (no shift). */
function shiftingSource(shift: number): SyntheticSource {
  const vda = defaultDisks().find((d) => d.info.dev === VDA) as SynthDisk;
  const loop0: SynthDisk = {
    info: { dev: LOOP0, name: 'loop0', kind: 'request', present: true, sizeBytes: 2 ** 30 },
    iops: 120,
    median: 2e-3,
    sigma: 0.08,
    classes: [
      { c: 'Read', weight: 0.8, latencyMul: 1 },
      { c: 'Write', weight: 0.2, latencyMul: 1 },
    ],
    spike: { from: shift, to: Number.MAX_SAFE_INTEGER, median: 8e-3 },
  };
  return syntheticSource({ disks: [vda, loop0] });
}

/** The source's dense device-latency histogram of `dev` over [from, to) (class `c`, or all). */
function sourceHist(src: SyntheticSource, dev: string, r: Range, c?: string): number[] {
  const h = new Array<number>(bucketCount(src.schema)).fill(0);
  for (const f of src.frames(r.from, r.to)) {
    for (const d of f.disks) {
      if (d.dev !== dev) continue;
      for (const cls of d.cls) {
        if (c !== undefined && cls.c !== c) continue;
        for (let i = 0; i < cls.d.length; i += 2) h[cls.d[i] as number] = (h[cls.d[i] as number] as number) + (cls.d[i + 1] as number);
      }
    }
  }
  return h;
}

const compared = (page: Page): Promise<Compared | undefined> => hook(page).compare();

/** Waits for the compare view to be summed with a pinned comparison, and returns it. */
async function ready(page: Page): Promise<Compared> {
  await page.waitForFunction(
    () => {
      const c = (globalThis as unknown as Hooked).__blkheat.compare();
      return c?.status === 'ready' && !c.followsView && c.baseline !== undefined;
    },
    undefined,
    { timeout: 20_000 },
  );
  await idle(page);
  const c = await compared(page);
  assert.ok(c && c.baseline && c.comparison);
  return c;
}

/** Every compared disk and class has the source's counts over the ranges the page names. */
function assertCounts(src: SyntheticSource, c: Compared, what: string): void {
  const a = c.baseline as Range;
  const b = c.comparison as Range;
  for (const [dev, classes] of [
    [LOOP0, ['all', 'Read', 'Write']],
    [VDA, ['all', 'Read', 'Write', 'Sync-Write', 'Metadata-Read', 'Flush']],
  ] as const) {
    for (const cls of classes) {
      const row = c.disks[dev]?.[cls];
      assert.ok(row, `${what}: ${dev} ${cls} compared`);
      const want = cls === 'all' ? undefined : cls;
      assert.deepEqual(row.baseline, sourceHist(src, dev, a, want), `${what}: ${dev} ${cls} baseline = the source's`);
      assert.deepEqual(row.comparison, sourceHist(src, dev, b, want), `${what}: ${dev} ${cls} comparison = the source's`);
      assert.equal(
        row.baselineTotal,
        sourceHist(src, dev, a, want).reduce((s, v) => s + v, 0),
      );
    }
  }
}

/** Drags across loop0's heat map from second `from` to second `to` (a zoom; with Control, a baseline), at its busiest row. */
async function zoomAcross(page: Page, from: number, to: number, modifier?: 'Control'): Promise<void> {
  const hot = await hook(page).hottestCell(LOOP0);
  assert.ok(hot, 'loop0 has cells');
  const at = (ts: number) => hook(page).cellCenter(LOOP0, ts, hot.bucket);
  const a = await at(from);
  const b = await at(to);
  assert.ok(a && b, `seconds ${from} and ${to} are on screen`);
  await page.mouse.move(a.x, a.y);
  if (modifier) await page.keyboard.down(modifier);
  await page.mouse.down();
  await page.mouse.move(b.x, b.y, { steps: 6 });
  await page.mouse.up();
  if (modifier) await page.keyboard.up(modifier);
  await idle(page);
}

test(
  'compare (A/B): baseline vs comparison per disk and class, live, reloaded, coarse, exported and imported',
  { timeout: 150_000 },
  async (t: TestContext) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const shift = started - 140;
    const source = shiftingSource(shift);
    const { agent, session: s, page } = await openFakeAgent(t, { source });

    // A link with a bad range: named, ignored, and the rest of the page works.
    await page.goto(`${agent.url}?base=yesterday&lat=device`);
    await waitLive(page);
    await idle(page);
    const notices = await hook(page).notices();
    assert.ok(
      notices.some(
        (n) => n.kind === 'error' && /base=yesterday is not a time range \(expected FROM-TO in unix seconds\); ignored/.test(n.text),
      ),
      JSON.stringify(notices),
    );
    assert.equal(await compared(page), undefined, 'no comparison from a bad link');

    await page.goto(agent.url);
    await waitLive(page);
    await page.waitForFunction(
      (from) => ((globalThis as unknown as Hooked).__blkheat.state().liveCovered?.from ?? Infinity) <= from,
      started - 280,
      {
        timeout: 20_000,
      },
    );
    await idle(page);

    // Ctrl-drag: the dragged seconds become the baseline, and the view stays live.
    await zoomAcross(page, shift - 90, shift - 30, 'Control');
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.compare()?.status === 'ready', undefined, {
      timeout: 20_000,
    });
    const dragged = await compared(page);
    assert.ok(dragged?.baseline && dragged.followsView);
    assert.ok(
      Math.abs(dragged.baseline.from - (shift - 90)) <= 2 && Math.abs(dragged.baseline.to - (shift - 30)) <= 2,
      `Ctrl-drag over ${shift - 90}..${shift - 30} set the baseline ${JSON.stringify(dragged.baseline)}`,
    );
    assert.equal((await hook(page).state()).following, true, 'no zoom');

    // Baseline: the view zoomed to a stretch before the shift; comparison: one after it.
    await zoomAcross(page, shift - 100, shift - 20);
    await page.click('[data-testid=set-baseline]');
    await page.click('[data-testid=back-to-live]');
    await idle(page);
    await zoomAcross(page, shift + 20, started - 20);
    // Until one is pinned, the comparison is the visible range (in the summary's whole columns).
    await page.waitForFunction(
      () => {
        const c = (globalThis as unknown as Hooked).__blkheat.compare();
        return c?.status === 'ready' && c.followsView && c.comparison !== undefined;
      },
      undefined,
      { timeout: 20_000 },
    );
    await idle(page);
    const follow = await compared(page);
    const summaryRange = (await hook(page).state()).summaryRange;
    assert.ok(follow?.comparison && summaryRange);
    assert.deepEqual({ from: follow.comparison.from, to: follow.comparison.to }, summaryRange, 'the comparison is the visible range');
    assertCounts(source, follow, 'following the view');
    await page.click('[data-testid=compare-set-comparison]');
    const c = await ready(page);
    const base = c.baseline as Range & { step: number };
    const cmp = c.comparison as Range & { step: number };
    assert.equal(base.step, 1);
    assert.ok(
      base.from >= shift - 110 && base.to <= shift && base.to - base.from >= 60,
      `baseline ${JSON.stringify(base)} before ${shift}`,
    );
    assert.ok(cmp.from >= shift && cmp.to <= started && cmp.to - cmp.from >= 60, `comparison ${JSON.stringify(cmp)} after ${shift}`);
    // What the panel names is what was summed.
    assert.equal(Number(await page.locator('[data-testid=compare-baseline-range]').getAttribute('data-from')), base.from);
    assert.equal(Number(await page.locator('[data-testid=compare-comparison-range]').getAttribute('data-to')), cmp.to);
    assertCounts(source, c, 'live');

    // The p50s as shown: bounds, the tops of the source's p50 buckets ("≤"); the delta, within one
    // bucket of +6 ms, those tops apart.
    const shown = (await page.locator('[data-testid=compare-delta-loop0-all-p50] td.delta').textContent()) ?? '';
    const m = /^\+(\d+(?:\.\d+)?) ms$/.exec(shown);
    assert.ok(m, `p50 delta shown as "+x ms": ${shown}`);
    const delta = Number(m[1]) / 1e3;
    const b8 = bucketOfSeconds(8e-3, source.schema);
    const bucketWidth = upperBoundSeconds(b8, source.schema) - lowerBoundSeconds(b8, source.schema);
    assert.ok(Math.abs(delta - 6e-3) <= bucketWidth, `p50 delta ${shown} within one bucket (${bucketWidth * 1e3} ms) of 6 ms`);
    const p50Top = (r: Range): number => upperBoundSeconds(quantileBucket(sourceHist(source, LOOP0, r), 0.5) as number, source.schema);
    assert.ok(Math.abs(delta - (p50Top(cmp) - p50Top(base))) <= 0.005e-3, `shown ${shown} = the source's p50 bucket tops apart (3 digits)`);
    const p50Cells = page.locator('[data-testid=compare-delta-loop0-all-p50] td.num');
    assert.equal(await p50Cells.nth(0).textContent(), `≤ ${formatLatency(p50Top(base))}`, 'the baseline p50: its bucket top');
    assert.equal(await p50Cells.nth(1).textContent(), `≤ ${formatLatency(p50Top(cmp))}`, 'the comparison p50: its bucket top');

    // Pixels: the baseline filled, the comparison a line (form, not only colour); the difference
    // blue (less) where the 2 ms band was, red (more) where the 8 ms band is.
    const row = c.disks[LOOP0]?.all;
    assert.ok(row && row.difference);
    const peak = (h: readonly number[]): number => h.indexOf(Math.max(...h));
    const pb = peak(row.baseline);
    const pc = peak(row.comparison);
    assert.ok(pc - pb >= 6, `the bands are apart (${pb} → ${pc})`);
    const pixel = (chart: 'overlay' | 'difference', bucket: number, value: number) =>
      hook(page).comparePixel(LOOP0, 'all', chart, bucket, value);
    const shareB = (row.baseline[pb] as number) / row.baselineTotal;
    const shareC = (row.comparison[pc] as number) / row.comparisonTotal;
    const filled = await pixel('overlay', pb, shareB / 2);
    const hollow = await pixel('overlay', pc, shareC / 2);
    const line = await pixel('overlay', pc, shareC);
    assert.ok(filled && filled[3] > 0, `baseline bar filled: ${filled}`);
    assert.ok(hollow && hollow[3] === 0, `comparison not filled under its line: ${hollow}`);
    assert.ok(line && line[3] > 0, `comparison line at its share: ${line}`);
    const less = await pixel('difference', pb, (row.difference[pb] as number) / 2);
    const more = await pixel('difference', pc, (row.difference[pc] as number) / 2);
    assert.ok(less && less[2] > less[0] + 60, `less of the comparison at the 2 ms band: blue (${less})`);
    assert.ok(more && more[0] > more[2] + 60, `more of the comparison at the 8 ms band: red (${more})`);
    await page.locator('[data-testid=compare-panel]').scrollIntoViewIfNeeded();
    await screenshot(page, 'compare-live', 'web-browser');

    // URL: both ranges; a reload restores the compare view.
    await page.waitForFunction(() => /[?&]cmp=/.test((globalThis as unknown as { location: { search: string } }).location.search));
    const search = new URLSearchParams(
      await page.evaluate(() => (globalThis as unknown as { location: { search: string } }).location.search),
    );
    assert.equal(search.get('base'), `${base.from}-${base.to}`);
    assert.equal(search.get('cmp'), `${cmp.from}-${cmp.to}`);
    await page.reload();
    await waitLive(page);
    const reloaded = await ready(page);
    assert.deepEqual([reloaded.baseline, reloaded.comparison], [base, cmp], 'the reload compares the same ranges');
    assertCounts(source, reloaded, 'reloaded');

    // A coarse view (1 h live, several seconds per column) leaves the pinned ranges as they are.
    await page.click('[data-testid=span-1h]');
    await idle(page);
    const st = await hook(page).state();
    assert.ok((st.step ?? 1) > 1, `the 1 h view has coarse columns (${st.step} s)`);
    const coarseView = await ready(page);
    assert.deepEqual([coarseView.baseline, coarseView.comparison], [base, cmp]);
    assertCounts(source, coarseView, 'coarse view');

    // Export → import: the file holds both ranges and its compare field; importing it restores the view.
    await page.click('[data-testid=span-5m]');
    await idle(page);
    const download = page.waitForEvent('download');
    await page.click('[data-testid=export-json]');
    const file = join(tempDir(t), 'exported.json');
    await (await download).saveAs(file);
    const exported = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
    assert.deepEqual(exported.compare, { baseline: { from: base.from, to: base.to }, comparison: { from: cmp.from, to: cmp.to } });
    assert.ok(exported.range.from <= base.from && exported.range.to >= cmp.to, 'the file covers both ranges');
    await importSnapshot(page, file);
    const imported = await ready(page);
    assert.deepEqual([imported.baseline, imported.comparison], [base, cmp], 'the import compares the same ranges');
    assertCounts(source, imported, 'imported');
    await page.locator('[data-testid=compare-panel]').scrollIntoViewIfNeeded();
    await screenshot(page, 'compare-snapshot', 'web-browser');

    // A snapshot of 10 s steps (merged frames): its ranges are compared over the whole steps holding them.
    const from = Math.floor((shift - 200) / 10) * 10;
    const snap = source.snapshot(from, from + 400);
    const coarse: Snapshot = {
      ...snap,
      range: { from, to: from + 400, step: 10 },
      frames: coarsenFrames(snap.frames, 10, source.schema),
      samples: [],
      compare: { baseline: { from: shift - 125, to: shift - 15 }, comparison: { from: shift + 15, to: shift + 125 } },
    };
    await page.setInputFiles('[data-testid=import-input]', jsonFile(t, 'coarse.json', coarse));
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.compare()?.baseline?.step === 10, undefined, {
      timeout: 20_000,
    });
    const tenSeconds = await ready(page);
    const align = (r: Range): Range & { step: number } => ({ from: Math.floor(r.from / 10) * 10, to: Math.ceil(r.to / 10) * 10, step: 10 });
    assert.deepEqual(tenSeconds.baseline, align({ from: shift - 125, to: shift - 15 }));
    assert.deepEqual(tenSeconds.comparison, align({ from: shift + 15, to: shift + 125 }));
    assert.equal(await page.locator('[data-testid=compare-baseline-range]').getAttribute('data-step'), '10');
    assertCounts(source, tenSeconds, '10 s snapshot');
    await page.locator('[data-testid=compare-panel]').scrollIntoViewIfNeeded();
    await screenshot(page, 'compare-coarse-snapshot', 'web-browser');
    // The dark theme: the charts redraw in its colours (the difference stays red up, blue down).
    await page.click('[data-testid=theme-dark]');
    await idle(page);
    const tenRow = tenSeconds.disks[LOOP0]?.all;
    assert.ok(tenRow?.difference);
    const at = peak(tenRow.comparison);
    const dark = await hook(page).comparePixel(LOOP0, 'all', 'difference', at, (tenRow.difference[at] as number) / 2);
    assert.ok(dark && dark[0] > dark[2] + 60, `more at the 8 ms band: red in the dark theme too (${dark})`);
    await screenshot(page, 'compare-dark', 'web-browser');
    assert.deepEqual(unexpectedErrors(s), []);
  },
);

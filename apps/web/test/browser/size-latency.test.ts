// Size × latency in headless chromium with the fake agent serving frames whose loop0 Reads are
// all 4 KiB and fast and its Writes all 1 MiB and slow (fixtures/incident.ts). Over a fixed past
// range: the panel's cells and the size histogram are the source's sums, the 1 MiB cells are
// drawn at higher latency rows than the 4 KiB ones (pixels), empty cells are not drawn, the scale
// follows the main heat map's rules, a click on a cell lists exactly the sampled I/Os of that
// size class and latency bucket, a class filter narrows it, and zoomed out (coarse, merged
// frames) the sums still hold. Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOfSeconds } from '@blkheat/shared-types';
import { hook, type Hooked, idle, importSnapshot, screenshot, waitFrame, waitLive } from '@blkheat/testkit';
import { buildPalette, CountScale, paletteInterpolator, unpackRgba } from '../../src/model/colour.ts';
import { jsonFile, openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { classSums, FAST_S, LARGE_S, LOOP0, SLOW_S, SMALL_S, withIncident } from '../fixtures/incident.ts';
import { defaultDisks, syntheticSource } from '../fixtures/synthetic.ts';

type El = { getAttribute(name: string): string | null };

async function ready(page: Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.sizePanel() !== undefined, undefined, { timeout: 20_000 });
  await idle(page);
}

const sizes = (page: Page) => hook(page).sizeLatency(LOOP0);

test(
  'size × latency: cells and size histogram are the source sums, 1 MiB above 4 KiB, a click lists the cell’s samples',
  { timeout: 120_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const source = withIncident(syntheticSource({ disks: defaultDisks(started - 260) }));
    const { agent, page } = await openFakeAgent(t, { source });
    const from = started - 400;
    const to = started - 280;
    await page.goto(`${agent.url}?from=${from}&to=${to}`);
    await ready(page);
    assert.deepEqual((await hook(page).state()).summaryRange, { from, to });

    const fast = bucketOfSeconds(FAST_S, source.schema);
    const slow = bucketOfSeconds(SLOW_S, source.schema);
    const c = classSums(source, LOOP0, from, to);
    const reads = c.get('Read') ?? 0;
    const writes = c.get('Write') ?? 0;
    assert.ok(reads > 0 && writes > 0);

    const m = await sizes(page);
    assert.ok(m);
    // Every size class from 4 KiB to 1 MiB is a column (an axis), the ones between are empty.
    assert.deepEqual(
      m.sizes,
      Array.from({ length: LARGE_S - SMALL_S + 1 }, (_, i) => ({
        s: SMALL_S + i,
        n: i === 0 ? reads : i === LARGE_S - SMALL_S ? writes : 0,
      })),
    );
    assert.deepEqual(m.cells, [
      { s: SMALL_S, bucket: fast, count: reads },
      { s: LARGE_S, bucket: slow, count: writes },
    ]);
    const hist = (await page.locator('[data-testid=size-histogram]').getAttribute('aria-label')) ?? '';
    assert.ok(
      hist.includes(`≤ 4 KiB ${reads.toLocaleString('en-US')}`) && hist.includes(`≤ 1 MiB ${writes.toLocaleString('en-US')}`),
      hist,
    );

    // The colour scale follows the main heat map's rule: its top is the busiest cell rounded up to 1-2-5.
    const panel = await hook(page).sizePanel();
    assert.ok(panel);
    const busiest = Math.max(reads, writes);
    const mant = panel.max / 10 ** Math.floor(Math.log10(panel.max));
    assert.ok(
      panel.max >= busiest && panel.max < 2.5 * busiest && [1, 2, 5].includes(Math.round(mant)),
      `scale top ${panel.max} for ${busiest}`,
    );
    assert.equal(await page.locator('[data-testid=size-scale]').getAttribute('data-max'), String(panel.max));

    // Pixels: the two cells are drawn, the 1 MiB one above the 4 KiB one; the crossed cells are empty.
    const px = await page.evaluate(
      ({ small, large, fast, slow }) => {
        const h = (globalThis as unknown as Hooked).__blkheat;
        const at = (s: number, b: number) => {
          const p = h.sizeCellCenter(s, b);
          return p ? { y: p.y, rgba: h.sizePixelAt(p.x, p.y) } : undefined;
        };
        return { small: at(small, fast), large: at(large, slow), smallSlow: at(small, slow), largeFast: at(large, fast) };
      },
      { small: SMALL_S, large: LARGE_S, fast, slow },
    );
    assert.ok(px.small && px.large && px.smallSlow && px.largeFast, JSON.stringify(px));
    assert.ok((px.small.rgba?.[3] ?? 0) === 255 && (px.large.rgba?.[3] ?? 0) === 255, `both cells drawn: ${JSON.stringify(px)}`);
    assert.ok(px.large.y < px.small.y - 20, `1 MiB (y ${px.large.y}) sits higher (slower) than 4 KiB (y ${px.small.y})`);
    assert.equal(px.smallSlow.rgba?.[3], 0, 'no slow 4 KiB I/O: not drawn');
    assert.equal(px.largeFast.rgba?.[3], 0, 'no fast 1 MiB I/O: not drawn');
    // Colours: the main heat map's scale and palette (log, light theme) at the panel's top count.
    const palette = buildPalette(paletteInterpolator('light'));
    const scale = new CountScale('log', panel.max);
    for (const [cell, count] of [
      [px.small, reads],
      [px.large, writes],
    ] as const) {
      const want = unpackRgba(palette[scale.index(count)] as number);
      assert.ok(
        cell.rgba && want.every((v, i) => Math.abs(v - (cell.rgba?.[i] ?? -99)) <= 2),
        `cell of ${count} I/Os drawn ${cell.rgba}, palette says ${want}`,
      );
    }

    // Pointing at a cell says its count.
    const lp = await hook(page).sizeCellCenter(LARGE_S, slow);
    assert.ok(lp);
    await page.mouse.move(lp.x, lp.y);
    await page.waitForFunction(
      (n) => {
        const el = (
          globalThis as unknown as { document: { querySelector(q: string): { textContent: string | null } | null } }
        ).document.querySelector('[data-testid=size-hover]');
        return el?.textContent?.includes(n) ?? false;
      },
      `${writes.toLocaleString('en-US')} I/Os`,
    );
    assert.match((await page.locator('[data-testid=size-hover]').textContent()) ?? '', /^≤ 1 MiB · /);
    await screenshot(page, 'size-latency', 'web-browser');

    // A click on the 1 MiB cell lists the sampled I/Os of that size class and bucket in the range.
    const p = await hook(page).sizeCellCenter(LARGE_S, slow);
    assert.ok(p);
    await page.mouse.click(p.x, p.y);
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.samples().status === 'done');
    const sel = await hook(page).selection();
    assert.deepEqual({ ...sel }, { dev: LOOP0, from, to, bucketLo: slow, bucketHi: slow, sizeClass: LARGE_S, cgroup: undefined });
    const want = source.samplesIn(from, to).filter((x) => x.dev === LOOP0 && x.c === 'Write');
    const rows = await page.locator('[data-testid=samples-table] tbody tr').evaluateAll((els: El[]) =>
      els.map((e) => ({
        bytes: Number(e.getAttribute('data-bytes')),
        c: e.getAttribute('data-class'),
        ts: Number(e.getAttribute('data-ts-us')),
      })),
    );
    assert.equal(
      await page
        .locator('[data-testid=samples-count]')
        .textContent()
        .then((x) => x?.match(/^[\d,]+/)?.[0]),
      want.length.toLocaleString('en-US'),
    );
    assert.equal(rows.length, Math.min(500, want.length), 'the table shows them (first 500)');
    assert.ok(
      rows.every((r) => r.bytes === 1 << 20 && r.c === 'Write'),
      'every listed I/O is a 1 MiB write',
    );
    assert.match((await page.locator('[data-testid=samples-scope]').textContent()) ?? '', /size ≤ 1 MiB/);
    assert.match(
      (await page.locator('[data-testid=size-selected]').textContent()) ?? '',
      new RegExp(`≤ 1 MiB .* ${writes.toLocaleString('en-US')} I/Os`),
    );
    await screenshot(page, 'size-latency-samples', 'web-browser');

    // A class filter applies (sizes are split by class): Read leaves only the 4 KiB column.
    await page.locator('[data-testid="class-Read"]').click();
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().classes.join() === 'Read');
    await idle(page);
    const r = await sizes(page);
    assert.deepEqual(r?.sizes, [{ s: SMALL_S, n: reads }]);
    assert.deepEqual(r?.cells, [{ s: SMALL_S, bucket: fast, count: reads }]);

    // Zoomed out to a coarse step (frames merged by the agent): the sums still hold.
    await page.goto(`${agent.url}?from=${started - 3300}&to=${started - 100}`);
    await ready(page);
    const st = await hook(page).state();
    assert.ok((st.step ?? 0) > 1, `coarse step ${st.step}`);
    const range = st.summaryRange as { from: number; to: number };
    const cw = classSums(source, LOOP0, range.from, range.to);
    const wide = await sizes(page);
    assert.deepEqual(wide?.cells, [
      { s: SMALL_S, bucket: fast, count: cw.get('Read') },
      { s: LARGE_S, bucket: slow, count: cw.get('Write') },
    ]);
    await screenshot(page, 'size-latency-coarse', 'web-browser');
  },
);

test('size × latency and cgroups live (a prefix of the received seconds) and in an imported snapshot', { timeout: 120_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const started = Math.floor(Date.now() / 1000);
  const source = withIncident(syntheticSource({ disks: defaultDisks(started - 260) }));
  const { agent, page } = await openFakeAgent(t, { source });
  await page.goto(agent.url);
  await waitLive(page);
  await ready(page);
  const fast = bucketOfSeconds(FAST_S, source.schema);
  const slow = bucketOfSeconds(SLOW_S, source.schema);

  // Live, the summary covers the range up to the seconds received when it was summed: whatever
  // that second was, the panels equal the source's sums from the range's start to it.
  for (let round = 0; round < 2; round++) {
    const got = await page.evaluate((dev) => {
      const h = (globalThis as unknown as Hooked).__blkheat;
      return { st: h.state(), sizes: h.sizeLatency(dev), cg: h.cgroups(dev) };
    }, LOOP0);
    assert.ok(got.st.following && got.st.summaryRange && got.sizes, 'live, with a summary');
    const { from, to } = got.st.summaryRange;
    const cell = (sz: number, b: number): number => got.sizes?.cells.find((c) => c.s === sz && c.bucket === b)?.count ?? 0;
    let reads = 0;
    let writes = 0;
    let matched: number | undefined;
    for (let x = from; x <= Math.min(to, started + 600); x++) {
      if (reads === cell(SMALL_S, fast) && writes === cell(LARGE_S, slow)) {
        matched = x;
        break;
      }
      const c = classSums(source, LOOP0, x, x + 1);
      reads += c.get('Read') ?? 0;
      writes += c.get('Write') ?? 0;
    }
    assert.ok(matched !== undefined && matched > from + 60, `the size cells are the sums of [${from}, ${matched}) (range to ${to})`);
    assert.equal(got.sizes.cells.length, 2, 'only the two cells');
    const cgTotal = got.cg.reduce((n, g) => n + g.n, 0);
    assert.equal(cgTotal, reads + writes, 'the cgroups of the same seconds: every I/O');
    await waitFrame(page, (got.st.lastFrameTs ?? 0) + 2);
    await idle(page);
  }
  await screenshot(page, 'size-latency-live', 'web-browser');

  // An imported snapshot: the file's frames.
  const from = started - 200;
  const to = started - 80;
  await importSnapshot(page, jsonFile(t, 'incident-snapshot.json', source.snapshot(from, to)));
  await ready(page);
  const c = classSums(source, LOOP0, from, to);
  assert.deepEqual((await sizes(page))?.cells, [
    { s: SMALL_S, bucket: fast, count: c.get('Read') },
    { s: LARGE_S, bucket: slow, count: c.get('Write') },
  ]);
  // A cell's samples come from the file.
  const p = await hook(page).sizeCellCenter(SMALL_S, fast);
  assert.ok(p);
  await page.mouse.click(p.x, p.y);
  await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.samples().status === 'done');
  const want = source.samplesIn(from, to).filter((x) => x.dev === LOOP0 && x.c === 'Read').length;
  assert.equal((await hook(page).samples()).count, want);
  await screenshot(page, 'size-latency-snapshot', 'web-browser');
});

// Offset vs time in headless chromium with the fake agent (fixtures/synthetic.ts: sampled I/Os
// at random sectors and latencies). Over a fixed past range: the scatter holds exactly the
// fixture's samples of the panel disk, each drawn on the pixel its time and sector give
// (computed here from the range and the sector window) in the heat map palette's colour of its
// latency; a brushed box lists exactly the fixture samples inside it in the samples table; an
// imported snapshot of the same range shows and selects the same; a range with more samples
// than the bound, from an agent that cannot spread them (offset-spread.test.ts: one that can),
// says "oldest N shown". Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BucketSchema, IoSample } from '@blkheat/shared-types';
import { hook, type Hooked, idle, importSnapshot, screenshot, waitLive } from '@blkheat/testkit';
import { buildPalette, paletteInterpolator, unpackRgba } from '../../src/model/colour.ts';
import { latencyPaletteIndex } from '../../src/model/offsetScatter.ts';
import { jsonFile, openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { defaultDisks, syntheticSource, type SyntheticSource } from '../fixtures/synthetic.ts';

type Drawn = NonNullable<ReturnType<Hooked['__blkheat']['offsetScatter']>>;

const LIMIT = 2000;

const scatter = (page: Page): Promise<Drawn | undefined> => hook(page).offsetScatter();

async function ready(page: Page, dev?: string): Promise<Drawn> {
  await page.waitForFunction(
    (d) => {
      const s = (globalThis as unknown as Hooked).__blkheat?.offsetScatter();
      return s !== undefined && s.samples.length > 0 && (d === null || s.dev === d);
    },
    dev ?? null,
    { timeout: 20_000 },
  );
  await idle(page);
  const d = await scatter(page);
  assert.ok(d);
  return d;
}

/** The fixture's samples of `dev` in [from, to), in the agent's order (time). */
function expected(source: SyntheticSource, dev: string, from: number, to: number): IoSample[] {
  return source.samplesIn(from, to).filter((s) => s.dev === dev);
}

/** Where a sample must be drawn, from the range and the sector window alone. */
function pixel(d: Drawn, s: IoSample): { x: number; y: number } {
  const x = Math.floor(((s.ts_us / 1e6 - d.from) / (d.to - d.from)) * d.width);
  const y = Math.ceil((1 - ((s.sector as number) - d.sectorLo) / (d.sectorHi - d.sectorLo)) * d.height) - 1;
  return { x, y };
}

const key = (s: IoSample): string => `${s.ts_us}/${s.sector}/${s.d_ns}`;

/** Checks the points against the fixture; returns pixel occupancy for choosing a brush. */
async function checkPoints(page: Page, d: Drawn, want: IoSample[], schema: BucketSchema, label: string): Promise<Map<string, IoSample[]>> {
  assert.deepEqual(d.samples.map(key), want.slice(0, LIMIT).map(key), `${label}: the scatter's samples are the fixture's`);
  assert.equal(d.truncated, want.length > LIMIT, `${label}: truncated`);
  const at = new Map<string, IoSample[]>();
  for (const s of want.slice(0, LIMIT)) {
    if (s.sector === null) continue;
    const p = pixel(d, s);
    assert.ok(p.x >= 0 && p.x < d.width && p.y >= 0 && p.y < d.height, `${label}: ${key(s)} inside`);
    const k = `${p.x},${p.y}`;
    at.set(k, [...(at.get(k) ?? []), s]);
  }
  // Pixels hold the colour of the slowest sample on them (drawn last), in the heat map palette.
  const palette = buildPalette(paletteInterpolator('light'));
  const probes = [...at.entries()].slice(0, 60).map(([k, ss]) => {
    const [x, y] = k.split(',').map(Number) as [number, number];
    const slowest = ss.reduce((a, b) => (b.d_ns > a.d_ns ? b : a));
    return {
      x: d.left + x + 0.5,
      y: d.top + y + 0.5,
      want: unpackRgba(palette[latencyPaletteIndex(slowest.d_ns, d.uLo ?? 0, d.uHi ?? 1, schema)] as number),
    };
  });
  const got = await page.evaluate(
    (ps) => ps.map((p) => (globalThis as unknown as Hooked).__blkheat.offsetPixelAt(p.x, p.y)),
    probes.map(({ x, y }) => ({ x, y })),
  );
  probes.forEach((p, i) => assert.deepEqual(got[i], p.want, `${label}: colour at ${p.x - d.left},${p.y - d.top}`));
  // A pixel with no sample is not drawn.
  let empty: { x: number; y: number } | undefined;
  for (let x = 1; x < d.width && !empty; x++) if (!at.has(`${x},5`)) empty = { x: d.left + x + 0.5, y: d.top + 5.5 };
  assert.ok(empty);
  const none = await hook(page).offsetPixelAt(empty.x, empty.y);
  assert.equal(none?.[3], 0, `${label}: an empty pixel stays empty`);
  return at;
}

/** A box whose edges run through pixel columns and rows without points (no point sits on an edge). */
function chooseBox(d: Drawn, at: Map<string, IoSample[]>): { x0: number; x1: number; y0: number; y1: number } {
  const cols = new Set([...at.keys()].map((k) => Number(k.split(',')[0])));
  const rows = new Set([...at.keys()].map((k) => Number(k.split(',')[1])));
  const free = (set: Set<number>, near: number, max: number): number => {
    for (let dv = 0; dv < max; dv++) for (const v of [near + dv, near - dv]) if (v > 0 && v < max - 1 && !set.has(v)) return v;
    throw new Error('no free line');
  };
  return {
    x0: free(cols, Math.round(d.width * 0.3), d.width),
    x1: free(cols, Math.round(d.width * 0.6), d.width),
    y0: free(rows, Math.round(d.height * 0.2), d.height),
    y1: free(rows, Math.round(d.height * 0.7), d.height),
  };
}

/** Drags the box (through the centres of its edge lines) and returns the samples table's rows. */
async function brush(
  page: Page,
  d: Drawn,
  b: { x0: number; x1: number; y0: number; y1: number },
): Promise<{ count: string; rows: string[] }> {
  await page.mouse.move(d.left + b.x0 + 0.5, d.top + b.y0 + 0.5);
  await page.mouse.down();
  await page.mouse.move(d.left + b.x1 + 0.5, d.top + b.y1 + 0.5, { steps: 4 });
  await page.mouse.up();
  await idle(page);
  const count = (await page.locator('[data-testid=samples-count]').textContent()) ?? '';
  const rows = await page
    .locator('[data-testid=samples-table] tbody tr')
    .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-ts-us') ?? ''));
  return { count, rows };
}

function inside(d: Drawn, want: IoSample[], b: { x0: number; x1: number; y0: number; y1: number }): IoSample[] {
  return want.filter((s) => {
    if (s.sector === null) return false;
    const p = pixel(d, s);
    return p.x > b.x0 && p.x < b.x1 && p.y > b.y0 && p.y < b.y1;
  });
}

test(
  'offset vs time: points at their time and sector in their latency colour, a brush lists exactly its samples, a snapshot the same',
  { timeout: 150_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const source = syntheticSource({ disks: defaultDisks(started - 260) });
    const { agent, page } = await openFakeAgent(t, { source });
    const from = started - 200;
    const to = started - 170;
    await page.goto(`${agent.url}?from=${from}&to=${to}`);
    const d = await ready(page);
    assert.equal(d.by, 'latency');
    assert.deepEqual([d.from, d.to], [from, to], 'the scatter spans the heat maps’ visible range');
    const want = expected(source, d.dev, from, to);
    assert.ok(want.length > 50, `${want.length} samples`);
    const at = await checkPoints(page, d, want, source.schema, 'live');
    const legend = await page.locator('[data-testid=offset-legend]').getAttribute('data-by');
    assert.equal(legend, 'latency');
    assert.equal(await page.locator('[data-testid=offset-truncated]').count(), 0);

    const box = chooseBox(d, at);
    const picked = inside(d, want, box);
    assert.ok(picked.length > 0 && picked.length < 500, `${picked.length} in the box`);
    const listed = await brush(page, d, box);
    assert.match(listed.count, new RegExp(`^${picked.length} sampled I/Os?$`));
    assert.deepEqual([...listed.rows].sort(), picked.map((x) => String(x.ts_us)).sort(), 'the table lists exactly the brushed samples');
    await screenshot(page, 'offset-scatter-live', 'web-browser');

    // By class: a categorical legend naming the disk's classes.
    await page.click('[data-testid=offset-by-class]');
    await idle(page);
    const byClass = await scatter(page);
    assert.equal(byClass?.by, 'class');
    assert.deepEqual(Object.keys(byClass?.classColours ?? {}), [...new Set(want.map((x) => x.c))].sort());
    const classes = await page
      .locator('[data-testid=offset-legend] [data-class]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-class')));
    assert.deepEqual(classes, Object.keys(byClass?.classColours ?? {}));
    await screenshot(page, 'offset-scatter-class', 'web-browser');
    await page.click('[data-testid=offset-by-latency]');

    // The class filter narrows the points as it narrows the samples table: only Reads (the
    // brushed box closed first: its outline would cover points on its edges).
    await page.click('[data-testid=samples-close]');
    await page.click('[data-testid=class-Read]');
    await page.waitForFunction(
      () => (globalThis as unknown as Hooked).__blkheat.offsetScatter()?.samples.every((x) => x.c === 'Read'),
      undefined,
      {
        timeout: 20_000,
      },
    );
    await idle(page);
    const reads = await scatter(page);
    assert.ok(reads);
    await checkPoints(
      page,
      reads,
      want.filter((x) => x.c === 'Read'),
      source.schema,
      'class filter',
    );
    await page.click('[data-testid=class-Read]');
    await page.waitForFunction((n) => (globalThis as unknown as Hooked).__blkheat.offsetScatter()?.samples.length === n, want.length, {
      timeout: 20_000,
    });

    // The same range as an imported snapshot: the same points and the same brush.
    await importSnapshot(page, jsonFile(t, 'offset.json', source.snapshot(from, to)));
    const snap = await ready(page, d.dev);
    assert.deepEqual([snap.from, snap.to, snap.sectorLo, snap.sectorHi], [d.from, d.to, d.sectorLo, d.sectorHi]);
    await checkPoints(page, snap, want, source.schema, 'snapshot');
    const again = await brush(page, snap, box);
    assert.deepEqual([...again.rows].sort(), picked.map((x) => String(x.ts_us)).sort(), 'snapshot: the same samples');
    await screenshot(page, 'offset-scatter-snapshot', 'web-browser');
  },
);

test(
  'offset vs time zoomed out (coarse steps), an agent that cannot spread samples: the oldest ones, drawn where they belong, said to be the oldest',
  { timeout: 90_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const source = syntheticSource({ disks: defaultDisks(started - 400), samplesPerClass: 40 });
    const { agent, page } = await openFakeAgent(t, { source, samplePick: 'ignores' });
    // 27 minutes: the heat maps merge seconds into coarser steps; samples stay per I/O.
    const from = started - 1800;
    const to = started - 180;
    await page.goto(`${agent.url}?from=${from}&to=${to}`);
    const d = await ready(page);
    const step = (await hook(page).state()).step ?? 1;
    assert.ok(step > 1, `step ${step}`);
    assert.deepEqual([d.from, d.to], [from, to]);
    const want = expected(source, d.dev, from, to);
    assert.ok(want.length > LIMIT, `${want.length} samples`);
    assert.equal(d.truncated, true);
    assert.equal(d.pick, 'first');
    assert.deepEqual(d.samples.map(key), want.slice(0, LIMIT).map(key));
    const text = (await page.locator('[data-testid=offset-truncated]').textContent()) ?? '';
    assert.match(
      text,
      /^oldest 2,000 shown \(to \d\d:\d\d:\d\d; later ones shaded, not loaded\): this agent cannot spread them over the range/,
    );
    assert.equal(await page.locator('[data-testid=offset-spread]').count(), 0);
    await checkPoints(page, d, want, source.schema, 'zoomed');
    await page.locator('[data-testid=offset-scatter]').scrollIntoViewIfNeeded();
    await screenshot(page, 'offset-scatter-zoomed', 'web-browser');
  },
);

test(
  'offset vs time live: the points are the fixture’s samples of the seconds on screen, and move on with the live edge',
  { timeout: 90_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const source = syntheticSource({ disks: defaultDisks(started - 260) });
    const { agent, page } = await openFakeAgent(t, { source });
    await page.goto(agent.url);
    await waitLive(page);
    const first = await ready(page);
    // Read what the page shows: each drawn sample is one of the fixture's, of the panel disk, in the
    // seconds drawn (the answer may be a second behind the range on screen, never outside it by more).
    const check = (d: Drawn): void => {
      const all = new Set(expected(source, d.dev, Math.floor(d.from) - 2, Math.ceil(d.to) + 1).map(key));
      for (const x of d.samples) assert.ok(all.has(key(x)), `live sample ${key(x)} is the fixture's`);
      assert.ok(d.samples.length > 0);
    };
    check(first);
    await page.waitForFunction((to) => ((globalThis as unknown as Hooked).__blkheat.offsetScatter()?.to ?? 0) >= to + 2, first.to, {
      timeout: 20_000,
    });
    await idle(page);
    const later = await scatter(page);
    assert.ok(later && later.to > first.to, 'the scatter follows the live edge');
    check(later);
    assert.ok(Math.max(...later.samples.map((x) => x.ts_us)) > Math.max(...first.samples.map((x) => x.ts_us)), 'newer samples arrived');
    await screenshot(page, 'offset-scatter-following', 'web-browser');
  },
);

// Offset vs time on a busy disk (25 k IOPS, far more sampled I/Os than the scatter's bound of
// 2,000) with its incident in the newest part of the window, in headless chromium with the fake
// agent: the points are spread over the whole window (the first and the last tenth both drawn,
// exactly the agent's spread pick), the incident's slowest I/O is drawn, the colour scale's top is
// the upper edge of the slowest drawn point's bucket and the legend says it; an imported snapshot
// of the range draws the same points; an agent from before `pick` (it refuses the field) gets the
// oldest 2,000 asked for instead, and the panel says "oldest 2,000 shown". Needs apps/web/dist
// and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type BucketSchema, bucketOfNs, formatLatency, type IoSample, upperBoundSeconds } from '@blkheat/shared-types';
import { hook, type Hooked, idle, importSnapshot, screenshot, waitLive } from '@blkheat/testkit';
import { buildPalette, paletteInterpolator, unpackRgba } from '../../src/model/colour.ts';
import { latencyPaletteIndex } from '../../src/model/offsetScatter.ts';
import { spreadSamples } from '../../src/model/samples.ts';
import { jsonFile, openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { type SynthDisk, syntheticSource, type SyntheticSource } from '../fixtures/synthetic.ts';

type Drawn = NonNullable<ReturnType<Hooked['__blkheat']['offsetScatter']>>;

const LIMIT = 2000;

/** One busy disk; from `incident` on, for 6 s, its device latency jumps to ~400 ms. */
function busyDisk(incident: number): SynthDisk {
  return {
    info: { dev: '253:0', name: 'vda', kind: 'request', present: true, sizeBytes: 20 * 2 ** 30, model: 'virtio' },
    iops: 25_000,
    median: 160e-6,
    sigma: 0.4,
    classes: [
      { c: 'Read', weight: 0.7, latencyMul: 1 },
      { c: 'Write', weight: 0.3, latencyMul: 1.5 },
    ],
    spike: { from: incident, to: incident + 6, median: 0.4 },
  };
}

/** A minute of the busy disk ending 140 s ago, its incident in the last 6 s, and the samples the source has in it. */
function pastMinute(): { from: number; to: number; source: SyntheticSource; want: IoSample[] } {
  const from = Math.floor(Date.now() / 1000) - 200;
  const to = from + 60;
  const source = syntheticSource({ disks: [busyDisk(to - 6)], samplesPerClass: 60 });
  return { from, to, source, want: source.samplesIn(from, to) };
}

async function ready(page: Page, check: (d: Drawn) => boolean): Promise<Drawn> {
  await page.waitForFunction(
    () => {
      const s = (globalThis as unknown as Hooked).__blkheat?.offsetScatter();
      return s !== undefined && s.samples.length > 0 && s.truncated;
    },
    undefined,
    { timeout: 20_000 },
  );
  await idle(page);
  const d = await hook(page).offsetScatter();
  assert.ok(d && check(d), 'the scatter drew');
  return d;
}

/** Drawn points per tenth of the window (those with a sector, inside it). */
function tenths(d: Drawn): number[] {
  const n = new Array<number>(10).fill(0);
  for (const s of d.samples) {
    const t = s.ts_us / 1e6;
    if (s.sector === null || t < d.from || t >= d.to) continue;
    const i = Math.floor(((t - d.from) / (d.to - d.from)) * 10);
    n[i] = (n[i] ?? 0) + 1;
  }
  return n;
}

/** The slowest point drawn (device latency, the phase on screen with this data). */
function slowestDrawn(d: Drawn): IoSample {
  const drawn = d.samples.filter((s) => s.sector !== null && s.ts_us / 1e6 >= d.from && s.ts_us / 1e6 < d.to);
  return drawn.reduce((a, b) => (b.d_ns > a.d_ns ? b : a));
}

/** The colour scale's top: the slowest drawn point's bucket (u is the dense bucket index), in the hook and the legend. */
async function checkScale(page: Page, d: Drawn, schema: BucketSchema, label: string, pixel = true): Promise<void> {
  const slow = slowestDrawn(d);
  const bucket = bucketOfNs(slow.d_ns, schema);
  assert.equal(d.uHi, bucket + 1, `${label}: the colour scale tops out at the slowest point's bucket (${formatLatency(slow.d_ns / 1e9)})`);
  const hi = (await page.locator('[data-testid=offset-legend-hi]').textContent()) ?? '';
  assert.equal(hi, formatLatency(upperBoundSeconds(bucket, schema)), `${label}: the legend's top`);
  assert.ok(upperBoundSeconds(bucket, schema) < (slow.d_ns / 1e9) * 1.2 + 1e-9, `${label}: ${hi} is within one bucket of the slowest`);
  // The slowest point is drawn last on its pixel, in the palette's colour for it (a fixed
  // range: a live one moves on between the reading and the pixel).
  if (!pixel) return;
  const x = Math.floor(((slow.ts_us / 1e6 - d.from) / (d.to - d.from)) * d.width);
  const y = Math.ceil((1 - ((slow.sector as number) - d.sectorLo) / (d.sectorHi - d.sectorLo)) * d.height) - 1;
  const palette = buildPalette(paletteInterpolator('light'));
  const want = unpackRgba(palette[latencyPaletteIndex(slow.d_ns, d.uLo ?? 0, d.uHi ?? 1, schema)] as number);
  assert.deepEqual(await hook(page).offsetPixelAt(d.left + x + 0.5, d.top + y + 0.5), want, `${label}: the slowest point's colour`);
}

test(
  'offset vs time at 25 k IOPS: points over the whole window with the incident at its end, the colour scale fitted to them; an old agent: the oldest, said so',
  { timeout: 150_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { from, to, source, want } = pastMinute();
    assert.ok(want.length > 3 * LIMIT, `${want.length} sampled I/Os in the window`);
    const { agent, page } = await openFakeAgent(t, { source });
    await page.goto(`${agent.url}?from=${from}&to=${to}`);
    const d = await ready(page, (x) => x.pick === 'spread');
    assert.deepEqual([d.from, d.to], [from, to]);
    assert.equal(d.by, 'latency');
    assert.equal(d.matched, want.length);
    const picked = spreadSamples(want, { from, to, kind: 'device' }, LIMIT).items;
    assert.deepEqual(d.samples, picked, 'the agent’s spread pick of the window’s samples');
    const per = tenths(d);
    assert.ok(
      per[0] !== undefined && per[0] >= 100 && per[9] !== undefined && per[9] >= 100,
      `first and last tenth drawn: ${per.join(', ')}`,
    );
    assert.ok(
      per.every((n) => n >= 100),
      `every tenth drawn: ${per.join(', ')}`,
    );
    const slowest = want.reduce((a, b) => (b.d_ns > a.d_ns ? b : a));
    assert.ok(slowest.ts_us >= (to - 6) * 1e6, 'the slowest I/O is in the incident, at the end');
    assert.deepEqual(slowestDrawn(d), slowest, 'the incident’s slowest I/O is drawn');
    await checkScale(page, d, source.schema, 'live');
    const count = (await page.locator('[data-testid=offset-count]').textContent()) ?? '';
    assert.equal(count, `2,000 drawn of ${want.length.toLocaleString('en-US')} sampled I/Os · visible range`);
    assert.equal(await page.locator('[data-testid=offset-spread]').count(), 1);
    assert.equal(await page.locator('[data-testid=offset-truncated]').count(), 0, 'nothing is shaded as not loaded');
    await page.locator('[data-testid=offset-scatter]').scrollIntoViewIfNeeded();
    await screenshot(page, 'offset-spread-live', 'web-browser');

    // The same range as an imported snapshot: the same points, the same scale.
    await importSnapshot(page, jsonFile(t, 'offset-spread.json', source.snapshot(from, to)));
    const snap = await ready(page, (x) => x.pick === 'spread' && x.dev === d.dev);
    assert.deepEqual(snap.samples, picked, 'snapshot: the same spread');
    assert.deepEqual([snap.uLo, snap.uHi], [d.uLo, d.uHi]);
    await checkScale(page, snap, source.schema, 'snapshot');
  },
);

test(
  'offset vs time from an agent that refuses `pick`: asked again without it, the oldest 2,000 drawn and said to be the oldest',
  { timeout: 90_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const { from, to, source, want } = pastMinute();
    const { agent, page } = await openFakeAgent(t, { source, samplePick: 'refuses' });
    await page.goto(`${agent.url}?from=${from}&to=${to}`);
    const d = await ready(page, (x) => x.pick === 'first');
    assert.deepEqual(d.samples, want.slice(0, LIMIT));
    const asked = agent.received.filter(
      (m): m is { t: 'samples'; pick?: string } => typeof m === 'object' && m !== null && (m as { t?: unknown }).t === 'samples',
    );
    assert.deepEqual(
      asked.slice(0, 2).map((m) => m.pick),
      ['spread', undefined],
    );
    const text = (await page.locator('[data-testid=offset-truncated]').textContent()) ?? '';
    assert.match(text, /^oldest 2,000 shown \(to \d\d:\d\d:\d\d; later ones shaded, not loaded\): this agent cannot spread them/);
    assert.equal(await page.locator('[data-testid=offset-spread]').count(), 0);
    // The scale is still fitted to what is drawn (the oldest, before the incident).
    await checkScale(page, d, source.schema, 'oldest');
  },
);

test('offset vs time live at 25 k IOPS: the newest tenth of the window is drawn', { timeout: 90_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const started = Math.floor(Date.now() / 1000);
  const source = syntheticSource({ disks: [busyDisk(started - 30)], samplesPerClass: 60 });
  const { agent, page } = await openFakeAgent(t, { source });
  await page.goto(`${agent.url}?live=60`);
  await waitLive(page);
  const d = await ready(page, (x) => x.pick === 'spread');
  const per = tenths(d);
  assert.ok((per[0] ?? 0) > 50 && (per[9] ?? 0) > 50, `the oldest and the newest seconds are drawn: ${per.join(', ')}`);
  await checkScale(page, d, source.schema, 'live edge', false);
});

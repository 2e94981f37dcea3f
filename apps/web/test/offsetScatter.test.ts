// Offset vs time: time and sector map into css pixels and back (named spaces, as coords.ts),
// the scatter's x is the heat maps' x, a brushed box holds exactly the samples drawn inside it,
// latency colours follow the heat map's latency window, byte-offset ticks are round.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type IoSample, lowerBoundSeconds, upperBoundSeconds } from '@blkheat/shared-types';
import { PALETTE_SIZE } from '../src/model/colour.ts';
import { readSample } from './fixtures/samples.ts';
import { apply, compose, invert, timeToCss, type Viewport } from '../src/model/coords.ts';
import {
  boxFromCss,
  inBox,
  latencyPaletteIndex,
  offsetTicks,
  type OffsetViewport,
  samplePixel,
  SECTOR_BYTES,
  sectorExtent,
  sectorToCss,
} from '../src/model/offsetScatter.ts';

const close = (a: number, b: number, eps = 1e-9): void => assert.ok(Math.abs(a - b) <= eps * Math.max(1, Math.abs(b)), `${a} ≉ ${b}`);

const vp: OffsetViewport = { from: 1_700_000_000, to: 1_700_000_060, sectorLo: 0, sectorHi: 32_000_000, width: 900, height: 220, dpr: 2 };

test('time and sector → css invert; x is the heat maps’ timeToCss for the same range and width', () => {
  const heatViewport: Viewport = { from: vp.from, to: vp.to, uLo: 0, uHi: 10, width: vp.width, height: 100, dpr: 2 };
  const heat = timeToCss(heatViewport);
  for (const t of [vp.from, vp.from + 0.25, vp.from + 31.5, vp.to]) close(apply(timeToCss(vp), t), apply(heat, t));
  for (const m of [timeToCss(vp), sectorToCss(vp)]) {
    for (const x of [0, 1, 123.5, 1_700_000_030, 31_999_999]) close(apply(invert(m), apply(m, x)), x, 1e-8);
    const id = compose(m, invert(m));
    close(id.scale, 1);
  }
  close(apply(sectorToCss(vp), vp.sectorLo), vp.height);
  close(apply(sectorToCss(vp), vp.sectorHi), 0);
});

test('a sample’s pixel, inverted as a one-pixel box, holds the sample; flushes and outsiders have no pixel', () => {
  for (const [t, sector] of [
    [vp.from + 0.001, 0],
    [vp.from + 12.345678, 8_000_008],
    [vp.from + 59.99, 31_999_992],
    [vp.from + 30, 16_000_000],
  ] as const) {
    const s = readSample(t, sector);
    const p = samplePixel(s, vp);
    assert.ok(p, `${t} ${sector}`);
    // Expected independently: the fraction of the range and of the sector window.
    assert.equal(p.x, Math.floor(((t - vp.from) / (vp.to - vp.from)) * vp.width));
    assert.equal(p.y, Math.ceil((1 - sector / vp.sectorHi) * vp.height) - 1);
    const box = boxFromCss(vp, p.x, p.y, p.x + 1, p.y + 1);
    assert.ok(inBox(s, box), `${JSON.stringify(box)} misses ${t} ${sector}`);
  }
  assert.equal(samplePixel(readSample(vp.from + 1, null), vp), undefined);
  assert.equal(samplePixel(readSample(vp.to + 1, 8), vp), undefined);
  assert.equal(samplePixel(readSample(vp.from - 1, 8), vp), undefined);
});

test('a brushed box holds exactly the samples whose pixels lie inside its pixel rows and columns', () => {
  const rows: IoSample[] = [];
  for (let i = 0; i < 2000; i++) rows.push(readSample(vp.from + ((i * 0.0371) % 60), ((i * 7919) % 4_000_000) * 8));
  const [x0, y0, x1, y1] = [200, 40, 450, 160];
  const box = boxFromCss(vp, x1, y1, x0, y0);
  const byBox = rows.filter((s) => inBox(s, box));
  const byPixel = rows.filter((s) => {
    const p = samplePixel(s, vp);
    return p !== undefined && p.x >= x0 && p.x < x1 && p.y >= y0 && p.y < y1;
  });
  assert.ok(byPixel.length > 50);
  // Allow only those on the box's edge pixels where floating point may round a point either way.
  const diff = byBox.filter((s) => !byPixel.includes(s)).length + byPixel.filter((s) => !byBox.includes(s)).length;
  assert.ok(diff <= 2, `${diff} samples differ`);
});

test('latency colour: the heat maps’ latency window spans the palette, log-spaced, clamped', () => {
  const [uLo, uHi] = [40, 80];
  assert.equal(latencyPaletteIndex(lowerBoundSeconds(40, BUCKET_SCHEMA) * 1e9 + 1, uLo, uHi, BUCKET_SCHEMA), 1);
  assert.equal(latencyPaletteIndex(upperBoundSeconds(79, BUCKET_SCHEMA) * 1e9 - 1, uLo, uHi, BUCKET_SCHEMA), PALETTE_SIZE - 1);
  assert.equal(latencyPaletteIndex(1, uLo, uHi, BUCKET_SCHEMA), 1);
  assert.equal(latencyPaletteIndex(60e9, uLo, uHi, BUCKET_SCHEMA), PALETTE_SIZE - 1);
  // Bucket 60, half-way up the window: the middle of the palette.
  const mid = latencyPaletteIndex(lowerBoundSeconds(60, BUCKET_SCHEMA) * 1e9 + 1, uLo, uHi, BUCKET_SCHEMA);
  assert.ok(Math.abs(mid - (1 + 0.5 * (PALETTE_SIZE - 1))) <= 1, String(mid));
  let last = 0;
  for (let ns = 1e3; ns < 1e10; ns *= 1.3) {
    const i = latencyPaletteIndex(ns, uLo, uHi, BUCKET_SCHEMA);
    assert.ok(i >= last);
    last = i;
  }
});

test('sector extent holds every I/O on round byte offsets; ticks are labelled in bytes', () => {
  const rows = [readSample(vp.from, 2048), readSample(vp.from, 7_000_000), readSample(vp.from, null)];
  const [lo, hi] = sectorExtent(rows);
  assert.ok(lo <= 2048 && hi >= 7_000_000 + 4096 / SECTOR_BYTES, `${lo}..${hi}`);
  assert.deepEqual(sectorExtent([]), [0, 1]);
  const ticks = offsetTicks(0, 8 * 2 ** 21, 200); // 8 GiB
  assert.ok(ticks.length >= 3);
  for (const t of ticks) assert.match(t.label, /^\d+(\.\d+)? (B|KiB|MiB|GiB)$/);
  assert.equal(ticks[0]?.label, '0 B');
  // Counted in GiB: whole binary values, never decimal ones shown in binary units.
  assert.deepEqual(
    offsetTicks(0, (20 * 2 ** 30) / SECTOR_BYTES, 200).map((t) => t.label),
    ['0 B', '5 GiB', '10 GiB', '15 GiB', '20 GiB'],
  );
});

// The throughput strip's slid bars (render/throughput.ts): a live second paints again only the
// pixel columns of the strip's columns whose values changed (changedPixels), and the canvas must
// then hold exactly what a whole paint of the new values would, pixel for pixel: where columns
// are narrower than a device pixel (a pixel shows the tallest of those it holds), wider than one,
// at DPR 1 and 2, for a value that grew, one that arrived where there was no data, and the oldest
// column losing seconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ThroughputSeries } from '../src/model/throughput.ts';
import { timeToCss, type Viewport } from '../src/model/coords.ts';
import { changedPixels, type LaneContext, type LanePixels, type LaneTheme, rasterLanes } from '../src/render/throughputRaster.ts';

const THEME: LaneTheme = {
  accent: '#2a7fff',
  bar: '#5b8def',
  alert: '#e0443e',
  gap: '#8a93a3',
  marks: ['#1b9e77', '#d95f02', '#7570b3', '#e7298a'],
};

/** A window's time mapping, as render/contract.ts renderContext makes it. */
function laneContext(viewport: Viewport): LaneContext {
  return { viewport, time: timeToCss(viewport) };
}

/** A series of `n` columns from `col0`, its values from `value(i, lane)` (NaN: no data). */
function series(col0: number, n: number, value: (i: number, lane: number) => number): ThroughputSeries {
  const lane = (k: number): Float64Array => Float64Array.from({ length: n }, (_, i) => value(i, k));
  return {
    dev: '7:0',
    step: 1,
    col0,
    iops: lane(0),
    mbps: lane(1),
    queue: lane(2),
    oldest: lane(3),
    waiting: lane(4),
    oldestWait: lane(5),
    frozen: Uint8Array.from({ length: n }, (_, i) => (value(i, 6) > 0.8 ? 1 : 0)),
  };
}

function pixels(width: number, height: number): LanePixels {
  return { width, height, data: new Uint8ClampedArray(width * height * 4) };
}

/** Deterministic values in [0, 1) per column and lane. */
const noise = (i: number, lane: number): number => Math.abs(Math.sin(i * 12.9898 + lane * 78.233) * 43758.5453) % 1;

for (const { label, widthPx, dpr } of [
  { label: 'columns narrower than a pixel, DPR 1', widthPx: 0.6, dpr: 1 },
  { label: 'columns narrower than a pixel, DPR 2', widthPx: 0.35, dpr: 2 },
  { label: 'columns 2.3 px wide, DPR 1', widthPx: 2.3, dpr: 1 },
  { label: 'columns 1.7 px wide, DPR 2', widthPx: 1.7, dpr: 2 },
]) {
  test(`slid bars: the changed columns painted again equal a whole paint (${label})`, () => {
    const n = 400;
    const col0 = 1_000;
    const width = Math.round(n * widthPx);
    const height = 64;
    // The anchored window starts inside its first column, as a live window does.
    const rc = laneContext({ from: col0 + 0.4, to: col0 + 0.4 + width / widthPx, uLo: 0, uHi: 1, width, height, dpr });
    const live = n - 40; // columns from here on have no data yet
    // Lanes 0-3: IOPS, MB/s, in flight, oldest age; 4, 5: waiting bios and their oldest age; 6: frozen (> 0.8).
    const base = (i: number, k: number): number => {
      if (i >= live && k < 6) return NaN;
      if (k === 4 || k === 5) return noise(i, k) > 0.7 ? noise(i, k) * 5 : 0;
      return noise(i, k) * 100;
    };
    const before = series(col0, n, base);
    // A live second: the newest column grew, the next one got its first second, the oldest lost one.
    const after = series(col0, n, (i, k) => {
      if (i === live - 1 && k < 4) return base(i, k) + 3;
      if (i === live && k < 6) return k === 4 || k === 5 ? 0 : noise(i + 7, k) * 90;
      if (i === 0 && k === 2) return 99;
      return base(i, k);
    });
    const tops = [100, 100, 100, 100];
    const W = Math.round(width * dpr);
    const H = Math.round(height * dpr);

    const slid = pixels(W, H);
    rasterLanes(slid, rc, before, THEME, tops, 0, W);
    const { runs, columns } = changedPixels(rc, before, after, W);
    assert.equal(columns, 3, 'three columns changed');
    assert.equal(runs.length, 2, `two runs of pixels: the oldest column's, the two newest's (${JSON.stringify(runs)})`);
    const painted = runs.reduce((sum, [lo, hi]) => sum + hi - lo, 0);
    assert.ok(painted > 0 && painted <= Math.ceil(3 * widthPx * dpr) + 4, `only their pixels are painted again (${painted} of ${W})`);
    for (const [lo, hi] of runs) rasterLanes(slid, rc, after, THEME, tops, lo, hi);

    const whole = pixels(W, H);
    rasterLanes(whole, rc, after, THEME, tops, 0, W);
    let differ = 0;
    for (let j = 0; j < whole.data.length; j++) if (whole.data[j] !== slid.data[j]) differ++;
    assert.equal(differ, 0, 'the canvas holds what a whole paint of the new values holds');

    const untouched = pixels(W, H);
    rasterLanes(untouched, rc, before, THEME, tops, 0, W);
    let changedBytes = 0;
    for (let j = 0; j < whole.data.length; j++) if (whole.data[j] !== untouched.data[j]) changedBytes++;
    assert.ok(changedBytes > 0, 'and the change shows: the new values paint differently from the old ones');
    assert.deepEqual(changedPixels(rc, after, after, W), { runs: [], columns: 0 }, 'nothing changed: nothing to paint');
  });
}

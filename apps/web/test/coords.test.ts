// Scales and transforms invert; the latency axis puts bucket edges on integers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, bucketCount, bucketOfSeconds, lowerBoundSeconds, overflowIndex, upperBoundSeconds } from '@blkheat/shared-types';
import {
  apply,
  bucketToCss,
  columnToCss,
  compose,
  cssToDevice,
  invert,
  mapInterval,
  timeToCss,
  type Viewport,
} from '../src/model/coords.ts';
import { bucketRangeNs, latencyTicks, secondsToU, uToSeconds } from '../src/model/latency.ts';
import { alignFloor, bufferedRange, chooseStep, snapRange, STEP_LADDER } from '../src/model/resolution.ts';
import { dragView, liveView, panBy, zoomAt } from '../src/model/view.ts';

const close = (a: number, b: number, eps = 1e-9): void => assert.ok(Math.abs(a - b) <= eps * Math.max(1, Math.abs(b)), `${a} ≉ ${b}`);

const vp: Viewport = { from: 1_700_000_000, to: 1_700_000_300, uLo: 20, uHi: 80, width: 900, height: 240, dpr: 2 };

test('affine maps invert and compose', () => {
  for (const t of [timeToCss(vp), bucketToCss(vp), cssToDevice(vp), columnToCss(vp, 5), mapInterval(-3, 7, 100, -40)]) {
    const inv = invert(t);
    for (const x of [-1e3, -1, 0, 0.5, 1, 123.25, 1_700_000_123.5]) {
      close(apply(inv, apply(t, x)), x);
      close(apply(t, apply(inv, x)), x);
    }
    const id = compose(t, inv);
    close(id.scale, 1);
    close(id.offset, 0, 1e-6);
  }
  close(apply(timeToCss(vp), vp.from), 0);
  close(apply(timeToCss(vp), vp.to), vp.width);
  close(apply(bucketToCss(vp), vp.uLo), vp.height, 1e-9);
  close(apply(bucketToCss(vp), vp.uHi), 0);
  close(apply(compose(cssToDevice(vp), timeToCss(vp)), vp.to), vp.width * vp.dpr);
  assert.throws(() => mapInterval(1, 1, 0, 1));
});

test('latency axis: bucket edges at integers, secondsToU and uToSeconds invert', () => {
  for (let d = 1; d < overflowIndex(); d++) {
    close(secondsToU(lowerBoundSeconds(d), BUCKET_SCHEMA), d);
    close(secondsToU(upperBoundSeconds(d), BUCKET_SCHEMA), d + 1);
    const mid = Math.sqrt(lowerBoundSeconds(d) * upperBoundSeconds(d));
    assert.equal(Math.floor(secondsToU(mid, BUCKET_SCHEMA)), d);
    assert.equal(bucketOfSeconds(mid), d);
  }
  for (const s of [0, 1e-7, 5e-7, 1e-6, 3.3e-5, 0.005, 0.8, 12, 60, 100])
    close(uToSeconds(secondsToU(s, BUCKET_SCHEMA), BUCKET_SCHEMA), s, 1e-9);
  for (let u = 0; u < bucketCount() - 0.001; u += 0.37) close(secondsToU(uToSeconds(u, BUCKET_SCHEMA), BUCKET_SCHEMA), u, 1e-9);
  const ticks = latencyTicks(20, 80, BUCKET_SCHEMA);
  assert.ok(ticks.length > 5);
  for (const t of ticks) assert.ok(t.u >= 20 && t.u <= 80);
  assert.ok(ticks.some((t) => t.label === '1ms'));
});

test('bucketRangeNs: inclusive integer bounds match the kernel binning', () => {
  for (const d of [1, 10, 50, 77, 104]) {
    const { minNs, maxNs } = bucketRangeNs(d, d, BUCKET_SCHEMA);
    assert.equal(bucketOfSeconds(minNs / 1e9), d);
    assert.equal(bucketOfSeconds(maxNs / 1e9), d);
    assert.equal(bucketOfSeconds((minNs - 1) / 1e9), d - 1);
    assert.equal(bucketOfSeconds((maxNs + 1) / 1e9), d + 1);
  }
  assert.equal(bucketRangeNs(0, 0, BUCKET_SCHEMA).minNs, 0);
  assert.equal(bucketRangeNs(overflowIndex(), overflowIndex(), BUCKET_SCHEMA).maxNs, Number.MAX_SAFE_INTEGER);
  const box = bucketRangeNs(60, 50, BUCKET_SCHEMA);
  assert.equal(box.minNs, bucketRangeNs(50, 50, BUCKET_SCHEMA).minNs);
  assert.equal(box.maxNs, bucketRangeNs(60, 60, BUCKET_SCHEMA).maxNs);
});

test('resolution: never more columns than pixels, on the ladder, multiples of the source step', () => {
  for (const span of [10, 60, 299, 300, 3600, 86400, 7 * 86400]) {
    for (const px of [100, 640, 1280, 3000]) {
      for (const min of [1, 10, 60]) {
        const s = chooseStep(span, px, min);
        assert.ok(span / s <= px, `${span}s in ${px}px at ${s}`);
        assert.equal(s % min, 0);
        const prev = STEP_LADDER.filter((x) => x < s && x % min === 0 && x >= min).pop();
        if (prev !== undefined && STEP_LADDER.includes(s)) assert.ok(span / prev > px, 'smallest fitting step');
      }
    }
  }
  assert.deepEqual(snapRange(1001, 1019, 10), { from: 1000, to: 1020 });
  const b = bufferedRange(1000, 1300, 1);
  assert.deepEqual(b, { from: 700, to: 1600 });
  const capped = bufferedRange(0, 3000, 1, { highest: 3000 });
  assert.equal(capped.to, 3000);
  assert.ok(capped.to - capped.from <= 3600);
  assert.equal(alignFloor(-5, 10), -10);
});

test('view gestures keep the anchor, clamp spans, and pause live', () => {
  const limits = { minSpan: 10, maxSpan: 86400, lowest: 0, highest: 10_000 };
  const live = liveView(10_000, 300);
  assert.equal(live.following, true);
  const z = zoomAt(live, 9_850, 0.5, limits);
  assert.equal(z.following, false);
  close(z.to - z.from, 150);
  close((9_850 - z.from) / (z.to - z.from), 0.5);
  const tiny = zoomAt(z, 9_850, 1e-6, limits);
  close(tiny.to - tiny.from, 10);
  const p = panBy(z, 100_000, limits);
  assert.ok(p.to <= 10_000 + 0.05 * 150 + 1e-9, 'cannot pan past the live edge');
  const d = dragView(9_900, 9_800, limits);
  assert.deepEqual([d.from, d.to], [9_800, 9_900]);
  const small = dragView(500, 501, limits);
  close(small.to - small.from, 10);
});

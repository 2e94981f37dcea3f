// Colour scale math: monotonic, zero reserved, endianness-aware packing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPalette, CountScale, legendTicks, niceMax, packRgba, paletteInterpolator, unpackRgba } from '../src/model/colour.ts';

test('count → index: 0 only for no I/O, monotonic, 255 at the max', () => {
  for (const kind of ['linear', 'log'] as const) {
    for (const max of [1, 7, 100, 5000, 1e6]) {
      const s = new CountScale(kind, max);
      assert.equal(s.index(0), 0);
      let prev = 0;
      for (const c of [1, 2, 3, 10, 99, 100, 4095, 4096, 4097, 5000, 1e5, 1e6]) {
        if (c > max) break;
        const i = s.index(c);
        assert.ok(i >= 1 && i <= 255, `${kind} ${max} ${c} → ${i}`);
        assert.ok(i >= prev, 'monotonic');
        prev = i;
      }
      assert.equal(s.index(max), 255);
      assert.equal(s.index(max * 10), 255);
      for (const p of [0.1, 0.5, 0.9]) assert.ok(Math.abs(s.position(s.countAt(p)) - p) < 1e-9);
    }
  }
});

test('niceMax rounds up to 1-2-5', () => {
  assert.deepEqual([0, 1, 3, 10, 11, 180, 501, 9999].map(niceMax), [1, 1, 5, 10, 20, 200, 1000, 10000]);
});

test('palette: entry 0 transparent, others opaque; packing round-trips both byte orders', () => {
  for (const theme of ['light', 'dark'] as const) {
    const lut = buildPalette(paletteInterpolator(theme));
    assert.equal(lut[0], 0);
    for (let i = 1; i < 256; i++) assert.equal(unpackRgba(lut[i] as number)[3], 255);
  }
  for (const le of [true, false]) assert.deepEqual(unpackRgba(packRgba(1, 2, 3, 4, le), le), [1, 2, 3, 4]);
  const bytes = new Uint8Array(new Uint32Array([packRgba(10, 20, 30, 255)]).buffer);
  assert.deepEqual([...bytes], [10, 20, 30, 255], 'ImageData byte order on this machine');
});

test('legend ticks end at the max', () => {
  assert.deepEqual(legendTicks(new CountScale('log', 1000)), [1, 10, 100, 1000]);
  const lin = legendTicks(new CountScale('linear', 50));
  assert.equal(lin[0], 0);
  assert.equal(lin[lin.length - 1], 50);
});

// The one formatter per unit (format.ts): what each writes at its unit boundaries, for "no
// number" inputs and for the variants views ask for. Every view and the CLI print these, so a
// change here is a change of visible text everywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatBytes, formatCount, formatLatency, formatRate } from '../src/index.js';

/** Asserts f(input) for each [input, output] row, naming the input on failure. */
function table<T>(f: (v: T) => string, rows: readonly (readonly [T, string])[]): void {
  for (const [input, want] of rows) assert.equal(f(input), want, `${String(input)} → ${want}`);
}

test('formatLatency: 3 significant digits in the largest unit the number is ≥ 1 in', () => {
  table(formatLatency, [
    [0, '0'],
    [0.5e-9, '0.50 ns'],
    [999e-9, '999 ns'],
    [1e-6, '1.00 µs'],
    [1.19e-6, '1.19 µs'],
    [99.96e-6, '100 µs'],
    [999.4e-6, '999 µs'],
    // Rounding up to 1000 of a unit moves to the next one, never "1000 µs".
    [999.5e-6, '1.00 ms'],
    [1e-3, '1.00 ms'],
    [15.3e-3, '15.3 ms'],
    [0.9999, '1.00 s'],
    [1, '1.00 s'],
    [60, '60.0 s'],
    [3600, '3600 s'],
    [Infinity, '∞'],
    [-1, '–'],
    [NaN, '–'],
    [null, '–'],
    [undefined, '–'],
  ]);
});

test('formatLatency compact (axis ticks): no trailing zeros, no space', () => {
  table(
    (s: number) => formatLatency(s, { compact: true }),
    [
      [500e-9, '500ns'],
      [1e-6, '1µs'],
      [2e-5, '20µs'],
      [2.5e-3, '2.5ms'],
      [999.5e-6, '1ms'],
      [1, '1s'],
      [60, '60s'],
    ],
  );
});

test('formatLatency signed (differences): a sign always, "±0", "–" when unknown', () => {
  table(
    (s: number | undefined) => formatLatency(s, { signed: true }),
    [
      [6.02e-3, '+6.02 ms'],
      [-850e-9, '−850 ns'],
      [-999.5e-6, '−1.00 ms'],
      [0, '±0'],
      [undefined, '–'],
      [NaN, '–'],
      [Infinity, '–'],
    ],
  );
});

test('formatRate: 3 significant digits, k/M/G once rounding reaches 1000', () => {
  table(formatRate, [
    [0, '0'],
    [0.5, '0.5'],
    [2.4096, '2.41'],
    [999, '999'],
    [999.5, '1k'],
    [1000, '1k'],
    [12_345, '12.3k'],
    [999_600, '1M'],
    [1.2e6, '1.2M'],
    [1.5e9, '1.5G'],
    [NaN, '–'],
    [Infinity, '∞'],
    [-1500, '-1.5k'],
  ]);
});

test('formatCount: whole, grouped; compact for chips and legends', () => {
  table(formatCount, [
    [0, '0'],
    [999, '999'],
    [1234.4, '1,234'],
    [1_234_567, '1,234,567'],
    [-1_234_567, '-1,234,567'],
    [Number.MAX_SAFE_INTEGER, '9,007,199,254,740,991'],
    [-0.4, '0'],
    [NaN, '–'],
    [Infinity, '∞'],
  ]);
  table(
    (n: number) => formatCount(n, { compact: true }),
    [
      [0, '0'],
      [2.4, '2'],
      [999, '999'],
      [999.5, '1k'],
      [1_234_567, '1.23M'],
      [2_000_000_000, '2G'],
      [NaN, '–'],
    ],
  );
});

test('formatBytes: binary units, 3 significant digits, whole from 100 up', () => {
  table(formatBytes, [
    [0, '0 B'],
    [512, '512 B'],
    [1023, '1023 B'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [4096, '4 KiB'],
    [150.4 * 1024, '150 KiB'],
    [1013 * 1024, '1013 KiB'],
    // Would round to 1024 KiB: 1 MiB.
    [1023.9 * 1024, '1 MiB'],
    [1024 ** 2, '1 MiB'],
    [64 * 1024 ** 2, '64 MiB'],
    [70.3 * 1024 ** 2, '70.3 MiB'],
    [1024 ** 3, '1 GiB'],
    [NaN, '–'],
  ]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { className, classOp, formatLatency, opDisplayName, parseClassName } from '../src/index.js';

test('class names follow biolatency -F: flag prefixes in a fixed order, then the op', () => {
  assert.equal(className('Write', ['Sync']), 'Sync-Write');
  assert.equal(className('Read', ['Sync', 'Metadata', 'Priority']), 'Priority-Metadata-Sync-Read');
  assert.equal(className('Write', ['ForcedUnitAccess', 'Preflush', 'Sync']), 'Preflush-ForcedUnitAccess-Sync-Write');
  assert.equal(className('Flush', []), 'Flush');
  assert.deepEqual(parseClassName('Priority-Metadata-Sync-Read'), { op: 'Read', flags: ['Priority', 'Metadata', 'Sync'] });
  assert.equal(classOp('ReadAhead-Read'), 'Read');
  assert.equal(opDisplayName('REQ_OP_WRITE_ZEROES', 9), 'WriteZeroes');
  assert.equal(opDisplayName('REQ_OP_SOMETHING_NEW', 40), 'SomethingNew');
  assert.equal(opDisplayName(undefined, 41), 'Op41');
});

test('latencies read naturally: 3 significant digits in the unit that fits', () => {
  assert.equal(formatLatency(0), '0');
  assert.equal(formatLatency(850e-9), '850 ns');
  assert.equal(formatLatency(1.19e-6), '1.19 µs');
  assert.equal(formatLatency(15.3e-3), '15.3 ms');
  assert.equal(formatLatency(4.756e-3), '4.76 ms');
  assert.equal(formatLatency(2), '2.00 s');
  assert.equal(formatLatency(0.9999), '1.00 s');
  assert.equal(formatLatency(0.5e-9), '0.50 ns');
  assert.equal(formatLatency(Infinity), '∞');
  assert.equal(formatLatency(-1), '–');
  assert.equal(formatLatency(Number.NaN), '–');
});

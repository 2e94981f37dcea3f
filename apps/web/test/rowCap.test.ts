// A breakdown table lists its busiest rows and the pinned ones past them, and sums up the rest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { capRows } from '../src/model/rowCap.ts';

const rows = [40, 30, 20, 6, 4].map((n, i) => ({ c: `C${i}`, n, share: n / 100 }));

test('rowCap: every row when they fit', () => {
  assert.deepEqual(
    capRows(rows, 5, () => false),
    { shown: rows, hidden: 0, hiddenN: 0, hiddenShare: 0 },
  );
});

test('rowCap: the first rows, a pinned one past them in its place, the rest summed', () => {
  const r = capRows(rows, 2, (x) => x.c === 'C3');
  assert.deepEqual(
    r.shown.map((x) => x.c),
    ['C0', 'C1', 'C3'],
  );
  assert.equal(r.hidden, 2);
  assert.equal(r.hiddenN, 24);
  assert.ok(Math.abs(r.hiddenShare - 0.24) < 1e-12, `share ${r.hiddenShare}`);
});

test('rowCap: a pinned row among the first is listed once', () => {
  const r = capRows(rows, 2, (x) => x.c === 'C0');
  assert.deepEqual(
    r.shown.map((x) => x.c),
    ['C0', 'C1'],
  );
  assert.equal(r.hidden, 3);
});

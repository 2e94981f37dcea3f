// A picker of a thousand hosts draws a few lines of chips, the pressed ones past them, and finds
// the others by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHIPS_FIRST, chipMatches, pickChips } from '../src/model/chipCap.ts';

const hosts = Array.from({ length: 1000 }, (_, i) => `sim-${String(i).padStart(4, '0')}`);
const name = (h: string): string => h;

test('chipCap: every chip when they fit, in order', () => {
  const few = hosts.slice(0, CHIPS_FIRST);
  assert.deepEqual(
    pickChips(few, name, () => false, ''),
    { shown: few, hidden: 0, matching: CHIPS_FIRST },
  );
});

test('chipCap: a thousand hosts draw the first CHIPS_FIRST and the pressed ones past them, in place', () => {
  const pressed = new Set(['sim-0003', 'sim-0777', 'sim-0999']);
  const c = pickChips(hosts, name, (h) => pressed.has(h), '');
  assert.deepEqual(c.shown, [...hosts.slice(0, CHIPS_FIRST), 'sim-0777', 'sim-0999']);
  assert.equal(c.hidden, 1000 - CHIPS_FIRST - 2);
  assert.equal(c.matching, 1000);
});

test('chipCap: the find narrows by every word, case-insensitively; the count is of the matches', () => {
  assert.equal(chipMatches('SIM-0777', 'sim 77'), true);
  assert.equal(chipMatches('sim-0777', '077 8'), false);
  const c = pickChips(hosts, name, () => false, 'sim-07');
  assert.equal(c.matching, 100);
  assert.deepEqual(c.shown, hosts.slice(700, 700 + CHIPS_FIRST));
  assert.equal(c.hidden, 100 - CHIPS_FIRST);
  const one = pickChips(hosts, name, () => false, '  0777 ');
  assert.deepEqual(one, { shown: ['sim-0777'], hidden: 0, matching: 1 });
  assert.deepEqual(
    pickChips(hosts, name, () => true, 'nosuch'),
    { shown: [], hidden: 0, matching: 0 },
  );
});

// Share axis under the histograms: no ticks without I/O (d3's default ticks over [0, 1e-9] would
// draw five "<0.01%" labels on top of each other), and otherwise labels that are distinct and
// never overlap, whatever the share and the width.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shareLabelWidth, shareTicks } from '../src/model/shareTicks.ts';

/** The histogram column's axis: HIST_WIDTH 200 px less the 4 px the bars leave free. */
const AXIS_PX = 196;

test('share axis: no ticks (so no labels) when no histogram has I/O', () => {
  assert.deepEqual(shareTicks(0, AXIS_PX), []);
  assert.deepEqual(shareTicks(Number.NaN, AXIS_PX), []);
  assert.deepEqual(shareTicks(0.5, 0), []);
});

test('share axis: labels distinct and apart, at any share and width', () => {
  for (const length of [40, 96, AXIS_PX, 400]) {
    for (const maxShare of [1e-9, 1e-6, 1e-4, 3e-4, 0.001, 0.004, 0.01, 0.042, 0.1, 0.37, 0.5, 0.999, 1]) {
      const ticks = shareTicks(maxShare, length);
      const where = `max ${maxShare} over ${length} px: ${ticks.map((t) => `${t.label}@${t.x.toFixed(0)}`).join(' ')}`;
      assert.ok(ticks.length >= 1, `at least the 0 tick (${where})`);
      assert.equal(new Set(ticks.map((t) => t.label)).size, ticks.length, `no label twice (${where})`);
      for (let i = 1; i < ticks.length; i++) {
        const a = ticks[i - 1]!;
        const b = ticks[i]!;
        assert.ok(b.value > a.value && b.x > a.x, `ascending (${where})`);
        const gap = b.x - shareLabelWidth(b.label) / 2 - (a.x + shareLabelWidth(a.label) / 2);
        assert.ok(gap >= 6, `labels ${a.label} and ${b.label} ${gap.toFixed(1)} px apart (${where})`);
      }
      for (const t of ticks) assert.ok(t.x >= 0 && t.x <= length + 1e-9, `on the axis (${where})`);
    }
  }
});

test('share axis: a busy histogram keeps a readable scale', () => {
  const ticks = shareTicks(0.42, AXIS_PX);
  assert.deepEqual(
    ticks.map((t) => t.label),
    ['0%', '10.0%', '20.0%', '30.0%', '40.0%'],
  );
});

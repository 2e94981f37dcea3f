// Time axis ticks: never finer than the data's step, so no two ticks print the same label.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scaleTime } from 'd3';
import { timeTickFormat, timeTicks } from '../src/model/timeTicks.ts';

const FROM = 1_795_291_852; // a whole second

test('a 6 s range: d3 alone ticks every half second (the bug), timeTicks every whole second', () => {
  const width = 1000;
  // Why timeTicks exists: d3's own ticks, labelled to the second, repeat labels.
  const d3Ticks = scaleTime()
    .domain([new Date(FROM * 1000), new Date((FROM + 6) * 1000)])
    .range([0, width])
    .ticks(Math.floor(width / 90));
  const d3Labels = d3Ticks.map(timeTickFormat);
  assert.notEqual(new Set(d3Labels).size, d3Labels.length, 'd3 repeats labels on a 6 s range (the case fixed here)');

  const ticks = timeTicks(FROM, FROM + 6, width, 1);
  assert.deepEqual(
    ticks.map((d) => d.getTime() / 1000),
    [0, 1, 2, 3, 4, 5, 6].map((i) => FROM + i),
  );
  const labels = ticks.map(timeTickFormat);
  assert.equal(new Set(labels).size, labels.length, `labels repeat: ${labels.join(', ')}`);
});

test('ticks stay on whole multiples of the step and their labels are distinct, at any width and span', () => {
  for (const step of [1, 5, 10, 60]) {
    for (const span of [2, 6, 13, 60, 300, 3600]) {
      // Within a day: across days the clock labels (HH:MM) repeat by design of timeTickFormat.
      if (span * step > 86400) continue;
      for (const width of [200, 640, 1000, 2400]) {
        const from = Math.floor(FROM / step) * step;
        const ticks = timeTicks(from, from + span * step, width, step);
        for (const d of ticks) assert.equal(d.getTime() % (step * 1000), 0, `${d.toISOString()} off the ${step} s step`);
        const labels = ticks.map(timeTickFormat);
        assert.equal(new Set(labels).size, labels.length, `step ${step}, span ${span}, ${width}px: ${labels.join(', ')}`);
        for (let i = 1; i < ticks.length; i++) assert.ok((ticks[i] as Date).getTime() > (ticks[i - 1] as Date).getTime());
      }
    }
  }
});

test('labels never crowd: on any width, ticks are at least a label apart (d3 ticks every second up to ~30 s spans)', () => {
  for (const span of [6, 13, 26, 30, 45, 60, 300]) {
    for (const width of [200, 640, 1100, 2400]) {
      const ticks = timeTicks(FROM, FROM + span, width, 1);
      assert.ok(ticks.length >= 1, `span ${span} s at ${width}px: no tick`);
      const px = width / span; // pixels per second
      for (let i = 1; i < ticks.length; i++) {
        const gap = (((ticks[i] as Date).getTime() - (ticks[i - 1] as Date).getTime()) / 1000) * px;
        assert.ok(gap >= 60, `span ${span} s at ${width}px: ticks ${gap.toFixed(0)} px apart`);
      }
    }
  }
  // The fleet view's 26 s zoom at 1100 px: every 2 s, not every second.
  const t26 = timeTicks(FROM, FROM + 26, 1100, 1).map((d) => d.getTime() / 1000 - FROM);
  assert.deepEqual(t26.slice(0, 3), [0, 2, 4]);
});

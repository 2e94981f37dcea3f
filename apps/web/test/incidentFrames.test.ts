// The incident marks' frame index (model/incidentFrames.ts): a live window moving on, its oldest
// seconds dropped and new ones added, with stuck and waiting I/O and every kind of fault on two
// disks: at every second, the marks made from the index's frames are the marks made from the
// whole window, for several thresholds and column widths; a window changed in the middle is
// refused (the caller starts a new index).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClassSeries, DiskFrame, Frame, InflightIo } from '@blkheat/shared-types';
import { faultColumns } from '../src/model/faults.ts';
import { IncidentFrames } from '../src/model/incidentFrames.ts';
import { stuckSpans } from '../src/model/stuck.ts';

const T0 = 1_700_000_000;
const DEVS = ['7:0', '7:1'];

const io = (ageS: number, pid: number, sector: number): InflightIo => ({
  c: 'Read',
  pid,
  comm: `p${pid}`,
  sector,
  bytes: 4096,
  age_ns: Math.round(ageS * 1e9),
  dev_age_ns: null,
});

/** Second `s` of disk `k`: a fixed pattern of stuck I/O (a hang of 20 s every 50 s), waits and faults. */
function diskAt(s: number, k: number, dev: string): DiskFrame {
  const cls: ClassSeries[] = [{ c: 'Read', n: 10, d: [0, 10], q: [] }];
  if ((s + k) % 13 === 0) cls.push({ c: 'Write', n: 2, d: [0, 2], q: [], e: { IOERR: 1 + (s % 3) } });
  if ((s + k) % 29 === 0) cls.push({ c: 'Flush', n: 1, d: [0, 1], q: [], e: { TIMEOUT: 0 } });
  const hang = (s + 7 * k) % 50;
  const ios = hang < 20 ? [io(hang + 0.5, 100 + k, 2048), io(0.2, 200, 4096)] : [io(0.01 * (s % 7), 300, 8)];
  const waitS = (s + k) % 17 < 6 ? ((s + k) % 17) * 0.9 : 0;
  return {
    dev,
    cls,
    inflight: {
      n: ios.length + (s % 5 === 0 ? 3 : 0),
      oldest_ns: Math.max(...ios.map((x) => x.age_ns)) + (s % 5 === 0 ? 2e9 : 0),
      ios,
      ...(waitS > 0 ? { waiting: 4, oldest_wait_ns: Math.round(waitS * 1e9) } : {}),
    },
    ...((s + k) % 11 === 0 ? { requeues: 2 } : {}),
    ...((s + k) % 19 === 0 ? { causes: { frozen: 3 } } : {}),
    ...((s + k) % 23 === 0 ? { causes: { refused: 1 }, tags_full: 1 } : {}),
    ...((s + k) % 31 === 0 ? { wbt: 2 } : {}),
    ...((s + k) % 37 === 0 ? { queue_changed: ['scheduler' as const] } : {}),
  };
}

const frameAt = (s: number): Frame => ({ ts: T0 + s, step: 1, disks: DEVS.map((dev, k) => diskAt(s, k, dev)) });

test('incident frames: the marks from the index are the marks from the whole window at every second of a moving window', () => {
  const SPAN = 90;
  const window: Frame[] = [];
  let index = new IncidentFrames();
  let compared = 0;
  let marked = 0;
  for (let s = 0; s < 240; s++) {
    window.push(frameAt(s));
    // The window keeps SPAN seconds, dropping a few at a time as a live window does.
    if (window.length > SPAN + (s % 4)) window.splice(0, window.length - SPAN);
    assert.equal(index.update(window), true, `second ${s}: the same window, moved on`);
    for (const dev of DEVS) {
      for (const threshold of [0.5, 1, 5, 15]) {
        const whole = stuckSpans(window, dev, threshold);
        assert.deepEqual(
          stuckSpans(index.stuckFrames(dev, threshold), dev, threshold),
          whole,
          `second ${s}, ${dev}, stuck over ${threshold} s`,
        );
        marked += whole.length;
        compared++;
      }
      for (const step of [1, 10]) {
        const col0 = Math.floor((window[0] as Frame).ts / step) - 1;
        const col1 = Math.ceil((T0 + s + 1) / step) + 1;
        const whole = faultColumns(window, dev, step, col0, col1);
        assert.deepEqual(
          faultColumns(index.faultFrames(dev), dev, step, col0, col1),
          whole,
          `second ${s}, ${dev}, faults at ${step} s columns`,
        );
        marked += whole.length;
        compared++;
      }
    }
    // Now and then the page starts over with a fresh index of the same window: the same answer.
    if (s % 60 === 59) {
      index = new IncidentFrames();
      assert.equal(index.update(window), true);
    }
  }
  assert.ok(marked > 1000, `the pattern marks something to compare (${marked} marks in ${compared} comparisons)`);
  // A frame replaced in the middle (a window rebuilt) is not the same window moved on.
  const rebuilt = [...window];
  rebuilt[10] = frameAt(1000);
  assert.equal(index.update(rebuilt), false, 'a frame replaced in the middle');
  assert.equal(index.update(window.slice(0, -1)), false, 'the newest frame gone');
  assert.equal(index.update(window), true, 'still the window it was');
});

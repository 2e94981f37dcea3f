// Latency phases (protocol 4): which phase is shown (total when the data has submit-wait timing,
// else device; a choice the data lacks falls back to device and says why), what each phase reads
// (phaseHist: a bio-based disk's total is its device latency), through the heat maps, the class
// breakdown, compare and the samples query; and the incident summary's rule (the submit wait's
// p99 at least half the total's: "p99 ≤ 420 ms, of which ≤ 420 ms waiting for a request on loop3"),
// on constructed frames.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  bucketCount,
  bucketOfSeconds,
  type ClassSeries,
  type DiskInfo,
  type Frame,
  type IoSample,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { classBreakdown } from '../src/model/breakdown.ts';
import { rangeHistograms } from '../src/model/compare.ts';
import { NOTHING_KNOWN } from '../src/model/gaps.ts';
import { buildMatrix } from '../src/model/heatmatrix.ts';
import { formatLatency } from '../src/model/latency.ts';
import {
  defaultPhase,
  diskKinds,
  frameHasSubmitTiming,
  parsePhase,
  phaseMissingOnBio,
  phaseUnavailable,
  resolvePhase,
} from '../src/model/phase.ts';
import { matchSamples } from '../src/model/samples.ts';
import { sampleLatencyNs } from '../src/model/offsetScatter.ts';
import { SUBMIT_DOMINATES, submitWaitNote, submitWaitText } from '../src/model/submitWait.ts';
import { summarizeNow } from '../src/model/summary.ts';

const T0 = 1_700_000_000;
const ROWS = bucketCount();
const LOOP3: DiskInfo = { dev: '7:3', name: 'loop3', kind: 'request', present: true };
const ZRAM: DiskInfo = { dev: '252:0', name: 'zram0', kind: 'bio', present: true };
const b = (seconds: number): number => bucketOfSeconds(seconds, BUCKET_SCHEMA);

/** A request-based class series whose I/Os took `w` s for a request, `q` in the queue and `d` on the device. */
function timed(c: string, n: number, w: number, q: number, d: number): ClassSeries {
  return { c, n, d: [b(d), n], q: [b(q), n], w: [b(w), n], t: [b(w + q + d), n], wu: 0 };
}

test('the phase shown: total when the data has submit-wait timing, else device; a choice the data lacks is device', () => {
  assert.equal(defaultPhase(true), 'total');
  assert.equal(defaultPhase(false), 'device');
  assert.equal(resolvePhase(undefined, true), 'total');
  assert.equal(resolvePhase(undefined, false), 'device');
  for (const k of ['total', 'submit', 'queue', 'device'] as const) assert.equal(resolvePhase(k, true), k);
  assert.equal(resolvePhase('total', false), 'device', 'an old agent has no total: device');
  assert.equal(resolvePhase('submit', false), 'device');
  assert.equal(resolvePhase('queue', false), 'queue');
  assert.equal(parsePhase('submit'), 'submit');
  assert.equal(parsePhase('Submit'), undefined);
  assert.equal(parsePhase(null), undefined);

  // Why the toolbar's Total and Submit wait are disabled.
  const old = { submitTiming: false, version: 3, snapshot: false };
  assert.match(phaseUnavailable('total', old) ?? '', /^this agent predates submit-wait timing/);
  assert.match(phaseUnavailable('submit', { ...old, snapshot: true }) ?? '', /^this snapshot predates submit-wait timing/);
  assert.match(phaseUnavailable('total', { ...old, version: 4 }) ?? '', /no submit-wait timing in this data/);
  assert.match(phaseUnavailable('total', { ...old, version: 4, snapshot: true }) ?? '', /^this snapshot has no submit-wait timing/);
  assert.equal(phaseUnavailable('queue', old), undefined);
  assert.equal(phaseUnavailable('device', old), undefined);
  assert.equal(phaseUnavailable('total', { submitTiming: true, version: 4, snapshot: false }), undefined);
  assert.ok(phaseMissingOnBio('submit') && phaseMissingOnBio('queue') && !phaseMissingOnBio('total'));

  const v3: Frame = { ts: T0, step: 1, disks: [{ dev: LOOP3.dev, cls: [{ c: 'Read', n: 1, d: [40, 1], q: [] }] }] };
  const v4: Frame = { ts: T0, step: 1, disks: [{ dev: LOOP3.dev, cls: [timed('Read', 1, 0.001, 0, 0.001)] }] };
  assert.equal(frameHasSubmitTiming(v3), false);
  assert.equal(frameHasSubmitTiming(v4), true);
  assert.equal(frameHasSubmitTiming({ ts: T0, step: 1, disks: [] }), false);
});

test('phases through the heat maps, the class breakdown and compare: phaseHist, a bio disk total = device', () => {
  const frames: Frame[] = [
    {
      ts: T0,
      step: 1,
      disks: [
        { dev: LOOP3.dev, cls: [timed('Read', 4, 0.3, 0.000002, 0.01)] },
        { dev: ZRAM.dev, cls: [{ c: 'Write', n: 2, d: [b(0.0001), 2], q: [] }] },
      ],
    },
  ];
  const kinds = diskKinds([LOOP3, ZRAM]);
  assert.equal(kinds(ZRAM.dev), 'bio');
  assert.equal(kinds('9:9'), 'request', 'a disk not known yet is taken as request-based');
  const matrix = (dev: string, kind: 'total' | 'submit' | 'queue' | 'device') =>
    buildMatrix(frames, { from: T0, to: T0 + 1, step: 1, rows: ROWS, filter: { dev, kind, diskKind: kinds(dev) } });
  assert.equal(matrix(LOOP3.dev, 'total').count(T0, b(0.310002)), 4);
  assert.equal(matrix(LOOP3.dev, 'submit').count(T0, b(0.3)), 4);
  assert.equal(matrix(LOOP3.dev, 'device').count(T0, b(0.01)), 4);
  assert.equal(matrix(ZRAM.dev, 'total').count(T0, b(0.0001)), 2, 'bio-based: total is bio → completion');
  assert.equal(matrix(ZRAM.dev, 'submit').total(T0), 0, 'bio-based: no submit wait');

  const classes = classBreakdown(frames, { from: T0, to: T0 + 1, kind: 'total', diskKind: kinds }, BUCKET_SCHEMA);
  const byName = new Map(classes.map((c) => [c.c, c]));
  assert.equal(byName.get('Read')?.hist[b(0.310002)], 4);
  assert.equal(byName.get('Write')?.hist[b(0.0001)], 2);

  const cmp = rangeHistograms(frames, { from: T0, to: T0 + 1 }, { kind: 'submit', classes: [], schema: BUCKET_SCHEMA, diskKind: kinds });
  assert.equal(cmp.get(LOOP3.dev)?.get('Read')?.total, 4);
  assert.equal(cmp.get(ZRAM.dev), undefined, 'a bio disk has no submit wait to compare');

  // Data from before protocol 4: no total for a request-based disk (the page shows device then).
  const old: Frame[] = [{ ts: T0, step: 1, disks: [{ dev: LOOP3.dev, cls: [{ c: 'Read', n: 3, d: [40, 3], q: [] }] }] }];
  assert.equal(buildMatrix(old, { from: T0, to: T0 + 1, step: 1, rows: ROWS, filter: { dev: LOOP3.dev, kind: 'total' } }).total(T0), 0);
});

test('a cell of the total or submit phase asks for the samples of that phase (samplePhaseNs)', () => {
  const sample = (w: number | null | undefined, q: number | null, d: number): IoSample => ({
    ts_us: T0 * 1e6 + 5,
    dev: LOOP3.dev,
    c: 'Read',
    sector: 8,
    bytes: 4096,
    q_ns: q,
    d_ns: d,
    ...(w !== undefined ? { w_ns: w } : {}),
    pid: 1,
    comm: 'fio',
    cgroup: 0,
    outlier: false,
  });
  const slow = sample(300e6, 2e3, 10e6); // waited 300 ms for a request
  const fast = sample(1e3, 2e3, 10e6);
  const unseen = sample(null, 2e3, 10e6); // submission not seen
  const all = [slow, fast, unseen];
  const q = (kind: 'total' | 'submit' | 'device', minNs: number, maxNs: number) =>
    matchSamples(all, { from: T0, to: T0 + 1, kind, minNs, maxNs, disks: [LOOP3.dev] }).samples;
  assert.deepEqual(q('submit', 100e6, 1e9), [slow]);
  assert.deepEqual(q('total', 300e6, 400e6), [slow]);
  assert.deepEqual(q('device', 9e6, 11e6), all, 'device latency: all three');
  assert.equal(sampleLatencyNs(slow, 'total'), 300e6 + 2e3 + 10e6);
  assert.equal(sampleLatencyNs(unseen, 'submit'), null);
});

test('incident summary: submit wait p99 ≥ half the total p99 says so, in words; below it, nothing', () => {
  // On loop3: 100 Reads, 99 of them fast, one that waited 390 ms for a request (a frozen queue).
  const frames: Frame[] = [];
  for (let s = 0; s < 10; s++) {
    const cls = [timed('Read', 9, 0.00001, 0.000002, 0.001)];
    if (s === 5) cls.push(timed('Sync-Write', 1, 0.39, 0.000002, 0.02));
    frames.push({
      ts: T0 + s,
      step: 1,
      disks: [
        { dev: LOOP3.dev, cls },
        { dev: ZRAM.dev, cls: [{ c: 'Read', n: 5, d: [b(0.4), 5], q: [] }] },
      ],
    });
  }
  // p99 of 91 I/Os is the slowest one's: the slow write dominates both p99s.
  const summary = (classes?: ReadonlySet<string>) => {
    const devs = [LOOP3.dev, ZRAM.dev];
    const kinds = diskKinds([LOOP3, ZRAM]);
    const matrices = new Map(
      devs.map((dev) => [
        dev,
        buildMatrix(frames, { from: T0, to: T0 + 10, step: 1, rows: ROWS, filter: { dev, kind: 'device', diskKind: kinds(dev) } }),
      ]),
    );
    return summarizeNow({
      from: T0,
      to: T0 + 10,
      step: 1,
      frames,
      matrices,
      devs: new Set(devs),
      kind: 'device',
      diskKind: kinds,
      classes,
      schema: BUCKET_SCHEMA,
      snapshotRange: undefined,
      known: NOTHING_KNOWN,
    });
  };
  const note = summary().submitWait.get(LOOP3.dev);
  assert.ok(note, 'the wait for a request dominates loop3');
  assert.ok(note.submitP99.seconds >= SUBMIT_DOMINATES * note.totalP99.seconds);
  // Percentiles from histograms are bounds: the top of the rank's bucket, within a bucket (19 %) above the value.
  assert.deepEqual(
    [note.totalP99.kind, note.totalP99.seconds],
    ['bound', upperBoundSeconds(b(0.39 + 0.000002 + 0.02), BUCKET_SCHEMA)],
    'total p99 ≤ its bucket top',
  );
  assert.deepEqual(
    [note.submitP99.kind, note.submitP99.seconds],
    ['bound', upperBoundSeconds(b(0.39), BUCKET_SCHEMA)],
    'submit p99 ≤ its bucket top',
  );
  assert.ok(Math.abs(note.totalP99.seconds - 0.41) / 0.41 < 0.2, `total p99 ≈ 410 ms (${note.totalP99.seconds})`);
  assert.ok(Math.abs(note.submitP99.seconds - 0.39) / 0.39 < 0.2, `submit p99 ≈ 390 ms (${note.submitP99.seconds})`);
  assert.equal(
    submitWaitText(note, 'loop3'),
    `p99 ≤ ${formatLatency(note.totalP99.seconds)}, of which ≤ ${formatLatency(note.submitP99.seconds)} waiting for a request on loop3`,
  );
  assert.match(submitWaitText(note, 'loop3'), /^p99 ≤ \d+(\.\d+)? ms, of which ≤ \d+(\.\d+)? ms waiting for a request on loop3$/);
  assert.equal(summary().submitWait.has(ZRAM.dev), false, 'a bio-based disk has no submit wait');
  assert.equal(summary(new Set(['Read'])).submitWait.has(LOOP3.dev), false, 'the class filter applies: the Reads did not wait');

  // The rule itself, on dense histograms: three buckets below the total (above half: one octave is
  // four buckets) says it, five (below half) does not.
  const dense = (bucket: number): Float64Array => {
    const h = new Float64Array(ROWS);
    h[bucket] = 100;
    return h;
  };
  const top = b(0.4);
  const total = dense(top);
  const all = submitWaitNote(total, dense(top), BUCKET_SCHEMA);
  assert.deepEqual(
    [all?.totalP99.seconds, all?.submitP99.seconds, all?.cause],
    [upperBoundSeconds(top, BUCKET_SCHEMA), upperBoundSeconds(top, BUCKET_SCHEMA), undefined],
    'all of it waiting',
  );
  assert.ok(submitWaitNote(total, dense(top - 3), BUCKET_SCHEMA), 'above half');
  assert.equal(submitWaitNote(total, dense(top - 5), BUCKET_SCHEMA), undefined, 'below half');
  assert.equal(submitWaitNote(total, new Float64Array(ROWS), BUCKET_SCHEMA), undefined, 'no submit wait known');
  assert.equal(submitWaitNote(new Float64Array(ROWS), dense(top), BUCKET_SCHEMA), undefined, 'no total: nothing to say');
  // The cause most I/Os met is named, from 1 % of them (the p99's share) on.
  const tags = submitWaitNote(total, dense(top), BUCKET_SCHEMA, { refused: 80, frozen: 2 });
  assert.equal(tags?.cause, 'refused');
  assert.match(submitWaitText(tags as NonNullable<typeof tags>, 'loop3'), / waiting for a tag on loop3$/);
  const frozen = submitWaitNote(total, dense(top), BUCKET_SCHEMA, { frozen: 1 });
  assert.equal(frozen?.cause, 'frozen', 'one of 100 I/Os found the queue frozen: named');
  assert.match(submitWaitText(frozen as NonNullable<typeof frozen>, 'loop3'), / waiting on a frozen queue on loop3$/);
  assert.equal(submitWaitNote(total, dense(top), BUCKET_SCHEMA, { frozen: 0.5 })?.cause, undefined, 'under 1 %: no cause named');
  // wbt's mark is the disk's, not its I/Os': named only where no I/O's cause is.
  const wbt = submitWaitNote(total, dense(top), BUCKET_SCHEMA, {}, { wbt: 12 });
  assert.equal(wbt?.cause, 'wbt');
  assert.match(submitWaitText(wbt as NonNullable<typeof wbt>, 'loop3'), / waiting in writeback throttling \(wbt\) on loop3$/);
  assert.equal(
    submitWaitNote(total, dense(top), BUCKET_SCHEMA, { refused: 80 }, { wbt: 12 })?.cause,
    'refused',
    'an I/O cause comes first',
  );
  assert.equal(submitWaitNote(total, dense(top), BUCKET_SCHEMA, {}, { wbt: 0 })?.cause, undefined, 'no window held writes back');
  // The tags mark (protocol 5) is the disk's too: a blocking submitter's tag wait, named as io_uring's refusals are.
  const tagsFull = submitWaitNote(total, dense(top), BUCKET_SCHEMA, {}, { tagsFull: 3, wbt: 12 });
  assert.equal(tagsFull?.cause, 'tags', 'every tag in use while bios waited: before wbt, which holds only writes');
  assert.match(submitWaitText(tagsFull as NonNullable<typeof tagsFull>, 'loop3'), / waiting for a tag on loop3$/);
  assert.equal(
    submitWaitNote(total, dense(top), BUCKET_SCHEMA, { frozen: 5 }, { tagsFull: 3 })?.cause,
    'frozen',
    'an I/O cause comes first',
  );
});

// Protocol 4 / snapshot 4: the submit wait and total phases. Every new field is accepted as
// written, refused when malformed (naming it), and files of earlier versions still open.
import { snapshotOf } from './fixtures.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  CLOSE_CODES,
  type ClassSeries,
  type DiskFrame,
  frameSchema,
  type IoSample,
  LATENCY_KINDS,
  overflowIndex,
  parseClientMessage,
  parseSnapshot,
  PROTOCOL_VERSION,
  samplePhaseNs,
  type SamplePhases,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  SNAPSHOT_VERSIONS_READ,
  type Snapshot,
} from '../src/index.js';

const T0 = 1795290000;
const read: ClassSeries = { c: 'Read', n: 10, d: [40, 10], q: [0, 10], w: [0, 6, 30, 2], t: [41, 7, 52, 1], wu: 2 };
const disk: DiskFrame = {
  dev: '7:0',
  cls: [read],
  causes: { frozen: 2 },
  wbt: 4,
  tags_full: 3,
  queue_changed: ['scheduler'],
  inflight: { n: 1, oldest_ns: 5e6, ios: [], waiting: 3, oldest_wait_ns: 2_500_000_000, frozen: true },
};
const sample: IoSample = {
  ts_us: T0 * 1e6 + 5,
  dev: '7:0',
  c: 'Read',
  sector: 8,
  bytes: 4096,
  q_ns: 500,
  d_ns: 40_000,
  w_ns: 2_000_000_000,
  pid: 1,
  comm: 'dd',
  cgroup: 1,
  outlier: true,
};
const v4: Snapshot = snapshotOf(T0, disk, [
  sample,
  { ...sample, ts_us: sample.ts_us + 1, w_ns: null },
  { ...sample, ts_us: sample.ts_us + 2, w_ns: undefined },
]);

test('versions: protocol 7 (a range request’s phases), snapshot 5 (tags_full), and every earlier snapshot version still read', () => {
  assert.equal(PROTOCOL_VERSION, 7);
  assert.equal(CLOSE_CODES.restart, 1012);
  assert.equal(SNAPSHOT_VERSION, 5);
  assert.deepEqual(SNAPSHOT_VERSIONS_READ, [1, 2, 3, 4, 5]);
});

test('a snapshot with w, t, wu, causes, tags_full, waiting bios and w_ns parses to the same value', () => {
  const { samples, ...rest } = v4;
  // JSON has no undefined: the third sample arrives without w_ns, as an older agent's would.
  const expected = { ...rest, samples: samples.map((s, i) => (i === 2 ? withoutW(s) : s)) };
  const r = parseSnapshot(JSON.stringify(v4));
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.deepEqual(r.value, expected);
  const cls = r.value.frames[0]?.disks[0]?.cls[0];
  assert.deepEqual([cls?.w, cls?.t, cls?.wu], [[0, 6, 30, 2], [41, 7, 52, 1], 2]);
  assert.deepEqual(r.value.frames[0]?.disks[0]?.causes, { frozen: 2 });
  assert.equal(r.value.frames[0]?.disks[0]?.inflight?.oldest_wait_ns, 2_500_000_000);
  assert.deepEqual(
    r.value.samples.map((s) => s.w_ns),
    [2_000_000_000, null, undefined],
  );
});

function withoutW(s: IoSample): IoSample {
  const { w_ns: _w, ...rest } = s;
  return rest;
}

/** The snapshot with its one disk of its one frame replaced. */
function withDisk(d: unknown): string {
  return JSON.stringify({ ...v4, frames: [{ ts: T0, step: 1, disks: [d] }] });
}
function withClass(c: unknown): string {
  return withDisk({ ...disk, cls: [c] });
}

test('malformed protocol 4 fields are refused, naming the field', () => {
  const at = 'frames.0.disks.0';
  const cases: [string, string, RegExp][] = [
    [withClass({ ...read, w: [30, 2, 0, 6] }), `${at}.cls.0.w`, /not strictly increasing/],
    [withClass({ ...read, w: [0, 0] }), `${at}.cls.0.w`, /count 0 at bucket 0 is not a positive integer/],
    [withClass({ ...read, w: [0] }), `${at}.cls.0.w`, /odd length/],
    [withClass({ ...read, t: [41, 1.5] }), `${at}.cls.0.t.1`, /int/i],
    [withClass({ ...read, t: [-1, 1] }), `${at}.cls.0.t.0`, />=0/],
    [withClass({ ...read, t: 'many' }), `${at}.cls.0.t`, /array/i],
    [withClass({ ...read, wu: -1 }), `${at}.cls.0.wu`, />=0/],
    [withClass({ ...read, wu: 0.5 }), `${at}.cls.0.wu`, /int/i],
    [withClass({ ...read, wu: 11 }), `${at}.cls.0.wu`, /must not be above n/],
    [withDisk({ ...disk, causes: { frozen: -1 } }), `${at}.causes.frozen`, />=0/],
    [withDisk({ ...disk, causes: { thawed: 1 } }), `${at}.causes`, /thawed|unrecognized/i],
    [withDisk({ ...disk, wbt: 1.5 }), `${at}.wbt`, /int/i],
    [withDisk({ ...disk, tags_full: 0.5 }), `${at}.tags_full`, /int/i],
    [withDisk({ ...disk, tags_full: -1 }), `${at}.tags_full`, />=0/],
    [withDisk({ ...disk, queue_changed: ['elevator'] }), `${at}.queue_changed.0`, /scheduler|nr_requests|invalid/i],
    [withDisk({ ...disk, queue_changed: ['scheduler', 'scheduler'] }), `${at}.queue_changed`, /at most once/],
    [withDisk({ ...disk, inflight: { ...disk.inflight, waiting: -2 } }), `${at}.inflight.waiting`, />=0/],
    [
      withDisk({ ...disk, inflight: { n: 0, oldest_ns: 0, ios: [], oldest_wait_ns: 5 } }),
      `${at}.inflight.oldest_wait_ns`,
      /only with "waiting"/,
    ],
    [withDisk({ ...disk, inflight: { ...disk.inflight, frozen: false } }), `${at}.inflight.frozen`, /expected true/],
    [JSON.stringify({ ...v4, samples: [{ ...sample, w_ns: -5 }] }), 'samples.0.w_ns', />=0/],
    [JSON.stringify({ ...v4, samples: [{ ...sample, w_ns: '5' }] }), 'samples.0.w_ns', /expected number/],
  ];
  for (const [text, field, message] of cases) {
    const r = parseSnapshot(text);
    assert.equal(r.ok, false, `accepted: ${field} in ${text.slice(0, 200)}`);
    if (!r.ok) {
      assert.equal(r.field, field, r.message);
      assert.match(r.message, message);
    }
  }
});

test('a w or t bucket past the file schema overflow is refused, naming the histogram', () => {
  const top = overflowIndex(BUCKET_SCHEMA);
  for (const key of ['w', 't'] as const) {
    const r = parseSnapshot(withClass({ ...read, [key]: [top + 1, 1] }));
    assert.equal(r.ok, false, key);
    if (!r.ok) {
      assert.equal(r.field, `frames.0.disks.0.cls.0.${key}`);
      assert.match(r.message, new RegExp(`bucket index ${top + 1} is outside 0\\.\\.${top}`));
    }
    assert.equal(parseSnapshot(withClass({ ...read, [key]: [top, 1] })).ok, true, `${key}: the overflow bucket itself is fine`);
  }
});

test('a version 3 snapshot (no protocol 4 fields) and a version 1 one still open as they are', () => {
  const v3 = {
    format: SNAPSHOT_FORMAT,
    version: 3,
    createdAt: '2026-11-01T12:00:00.000Z',
    agent: '0.3.0',
    host: { hostname: 'h', kernel: '6.18.0', instance: 'h' },
    schema: BUCKET_SCHEMA,
    range: { from: T0, to: T0 + 1, step: 1 },
    disks: [{ dev: '7:0', name: 'loop0', kind: 'request', present: true }],
    frames: [
      {
        ts: T0,
        step: 1,
        disks: [
          {
            dev: '7:0',
            cls: [{ c: 'Read', n: 4, d: [40, 4], q: [0, 4], b: 16384 }],
            inflight: { n: 0, oldest_ns: 0, ios: [] },
            cg: [{ g: '/', n: 4, d: [40, 4] }],
          },
        ],
      },
    ],
    samples: [withoutW({ ...sample, cg: '/' })],
  };
  const r3 = parseSnapshot(JSON.stringify(v3));
  assert.ok(r3.ok, r3.ok ? '' : r3.message);
  assert.deepEqual(r3.value, v3);
  const v1 = {
    ...v3,
    version: 1,
    host: { hostname: 'h', kernel: '6.18.0' },
    frames: [{ ts: T0, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 4, d: [40, 4], q: [] }] }] }],
  };
  const r1 = parseSnapshot(JSON.stringify({ ...v1, samples: [withoutW(sample)] }));
  assert.ok(r1.ok, r1.ok ? '' : r1.message);
  assert.equal(r1.value.version, 1);
});

test('samples requests take the four phases as kind (none given: the agent reads device)', () => {
  assert.deepEqual(LATENCY_KINDS, ['total', 'submit', 'queue', 'device']);
  for (const kind of LATENCY_KINDS) {
    const r = parseClientMessage(JSON.stringify({ t: 'samples', id: 1, from: T0, to: T0 + 1, kind, minNs: 5 }));
    assert.ok(r.ok, kind);
    assert.deepEqual(r.value, { t: 'samples', id: 1, from: T0, to: T0 + 1, kind, minNs: 5 });
  }
  const none = parseClientMessage(JSON.stringify({ t: 'samples', id: 1, from: T0, to: T0 + 1 }));
  assert.ok(none.ok && none.value.t === 'samples' && none.value.kind === undefined);
  for (const kind of ['wait', 'Total', 3]) {
    const r = parseClientMessage(JSON.stringify({ t: 'samples', id: 1, from: T0, to: T0 + 1, kind }));
    assert.equal(r.ok, false, String(kind));
    if (!r.ok) assert.equal(r.field, 'kind');
  }
});

test('samplePhaseNs: a sample phase by the one rule (total = w + q + d, a bio-based disk d, unknown null)', () => {
  const request = { w_ns: 3000, q_ns: 200, d_ns: 10 };
  const unseen = { w_ns: null, q_ns: 200, d_ns: 10 };
  const noStart = { w_ns: 3000, q_ns: null, d_ns: 10 };
  const bio = { q_ns: null, d_ns: 70 };
  const older = { q_ns: 200, d_ns: 10 }; // a request-based disk's sample from an agent before protocol 4
  const table: [SamplePhases, [number | null, number | null, number | null, number | null]][] = [
    // total, submit, queue, device
    [request, [3210, 3000, 200, 10]],
    [unseen, [null, null, 200, 10]],
    [noStart, [null, 3000, null, 10]],
    [bio, [70, null, null, 70]],
    [older, [null, null, 200, 10]],
  ];
  for (const [s, want] of table) {
    assert.deepEqual(
      LATENCY_KINDS.map((k) => samplePhaseNs(s, k)),
      want,
      JSON.stringify(s),
    );
  }
});

test('a frame with every protocol 4 field is a valid wire frame; w_ns of a sample stays optional', () => {
  assert.equal(frameSchema.safeParse({ ts: T0, step: 1, disks: [disk] }).success, true);
  assert.equal(frameSchema.safeParse({ ts: T0, step: 1, disks: [{ dev: '7:0', cls: [{ ...read, w: [], t: [], wu: 0 }] }] }).success, true);
});

test('protocol 7: a range request names the phases its frames must carry; each known phase at most once, at least one', () => {
  const range = (phases: unknown): ReturnType<typeof parseClientMessage> =>
    parseClientMessage(JSON.stringify({ t: 'range', id: 1, from: T0, to: T0 + 60, phases }));
  const ok = range(['device']);
  assert.ok(ok.ok && ok.value.t === 'range');
  assert.deepEqual(ok.value.t === 'range' ? ok.value.phases : undefined, ['device']);
  const all = range([...LATENCY_KINDS]);
  assert.ok(all.ok, 'every phase once');
  const none = parseClientMessage(JSON.stringify({ t: 'range', id: 1, from: T0, to: T0 + 60 }));
  assert.ok(none.ok && none.value.t === 'range' && none.value.phases === undefined, 'absent: every phase');
  for (const [bad, why] of [
    [[], /phases/],
    [['device', 'device'], /phases: each phase at most once/],
    [['latency'], /phases\.0/],
    ['device', /phases/],
  ] as const) {
    const r = range(bad);
    assert.ok(!r.ok, `${JSON.stringify(bad)} refused`);
    assert.match(r.message, why);
    assert.equal(r.field?.split('.')[0], 'phases');
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  diskInfoSchema,
  BUCKET_SCHEMA,
  MAX_SPAN_SECONDS,
  MAX_STEP_SECONDS,
  parseClientMessage,
  parseSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type Snapshot,
} from '../src/index.js';

const snapshot: Snapshot = {
  format: SNAPSHOT_FORMAT,
  version: SNAPSHOT_VERSION,
  createdAt: '2026-11-21T12:00:00.000Z',
  agent: '0.1.0',
  host: { hostname: 'h', kernel: '6.18.0' },
  schema: BUCKET_SCHEMA,
  range: { from: 1795290000, to: 1795290002, step: 1 },
  disks: [{ dev: '7:0', name: 'loop0', kind: 'request', present: true }],
  frames: [
    { ts: 1795290000, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 3, d: [40, 2, 41, 1], q: [0, 3] }], dropped: 1 }] },
    { ts: 1795290001, step: 1, disks: [] },
  ],
  samples: [
    {
      ts_us: 1795290000123456,
      dev: '7:0',
      c: 'Read',
      sector: 8,
      bytes: 4096,
      q_ns: 500,
      d_ns: 40000,
      pid: 1,
      comm: 'dd',
      cgroup: 1,
      outlier: true,
    },
  ],
};

test('a valid snapshot parses to the same value', () => {
  const r = parseSnapshot(JSON.stringify(snapshot));
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.deepEqual(r.value, snapshot);
});

test('malformed or hostile snapshots get a message naming the problem', () => {
  const cases: [string, RegExp][] = [
    ['not json', /not a JSON file/],
    ['[]', /not a blkheat snapshot/],
    [JSON.stringify({ ...snapshot, version: 99 }), /version 99 is not supported/],
    [JSON.stringify({ ...snapshot, schema: { scale: 3, minIndex: 0, maxIndex: 10 } }), /bucket schema/],
    [JSON.stringify({ ...snapshot, frames: [snapshot.frames[1], snapshot.frames[0]] }), /increasing time order/],
    [
      JSON.stringify({
        ...snapshot,
        frames: [{ ...snapshot.frames[0], disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 1, d: [9999, 1], q: [] }] }] }],
      }),
      /outside/,
    ],
    [JSON.stringify({ ...snapshot, disks: [{ dev: '../../etc', name: 'x', kind: 'request', present: true }] }), /MAJ:MIN/],
    [JSON.stringify({ ...snapshot, extra: 1 }), /extra|unrecognized/i],
    [JSON.stringify({ ...snapshot, samples: [{ ...snapshot.samples[0], comm: 'x'.repeat(100) }] }), /comm/],
  ];
  for (const [text, message] of cases) {
    const r = parseSnapshot(text);
    assert.equal(r.ok, false, `accepted: ${text.slice(0, 80)}`);
    if (!r.ok) assert.match(r.message, message);
  }
});

test('compare (added in 0.4.0): optional; baseline and comparison ranges are checked, naming the field', () => {
  const compare = { baseline: { from: 1795290000, to: 1795290001 }, comparison: { from: 1795290001, to: 1795290002 } };
  for (const c of [compare, { baseline: compare.baseline }]) {
    const r = parseSnapshot(JSON.stringify({ ...snapshot, compare: c }));
    assert.ok(r.ok, r.ok ? '' : r.message);
    assert.deepEqual(r.value.compare, c);
  }
  const cases: [unknown, RegExp][] = [
    [{}, /compare\.baseline/],
    [{ baseline: { from: 1795290001, to: 1795290000 } }, /compare\.baseline\.to: "to" must be after "from"/],
    [{ baseline: compare.baseline, comparison: { from: 1795290000, to: 1795290000 + MAX_SPAN_SECONDS + 1 } }, /compare\.comparison/],
    [{ baseline: { from: 1.5, to: 1795290000 } }, /compare\.baseline\.from/],
    [{ baseline: compare.baseline, extra: 1 }, /compare/],
  ];
  for (const [c, message] of cases) {
    const r = parseSnapshot(JSON.stringify({ ...snapshot, compare: c }));
    assert.equal(r.ok, false, `accepted: ${JSON.stringify(c)}`);
    if (!r.ok) assert.match(r.message, message);
  }
});

test('client messages are validated field by field', () => {
  assert.deepEqual(parseClientMessage('{"t":"subscribe"}'), { ok: true, value: { t: 'subscribe' } });
  const bad: [string, RegExp, string | undefined][] = [
    ['{', /not valid JSON/, undefined],
    ['[1]', /JSON object/, undefined],
    ['{"t":"nope"}', /t: expected/, 't'],
    ['{"t":"range","id":1,"from":1795290000,"to":1795289999}', /"to" must be after/, 'to'],
    ['{"t":"range","id":1,"from":"x","to":1795289999}', /from/, 'from'],
    ['{"t":"samples","id":1,"from":1795290000,"to":1795290001,"limit":999999}', /limit/, 'limit'],
    ['{"t":"samples","id":1,"from":1795290000,"to":1795290001,"minNs":10,"maxNs":5}', /^maxNs: must not be below minNs$/, 'maxNs'],
    [`{"t":"range","id":1,"from":1795290000,"to":${1795290000 + MAX_SPAN_SECONDS + 1}}`, /at most/, 'to'],
    [`{"t":"range","id":1,"from":1795290000,"to":1795290001,"step":${MAX_STEP_SECONDS + 1}}`, /step/, 'step'],
    ['{"t":"subscribe","disks":["sda"]}', /MAJ:MIN/, 'disks.0'],
    ['{"t":"subscribe","bogus":1}', /bogus|unrecognized/i, undefined],
  ];
  for (const [text, message, field] of bad) {
    const r = parseClientMessage(text);
    assert.equal(r.ok, false, text);
    if (!r.ok) {
      assert.match(r.message, message, text);
      if (field) assert.equal(r.field, field, text);
    }
  }
});

test('DiskInfo of a fleet view: host and link are checked (added in 3)', () => {
  const fleet = { dev: '2:1', name: 'db-1/nvme0n1', kind: 'request', present: true, host: 'db-1', link: 'http://db-1:7360/' };
  assert.equal(diskInfoSchema.safeParse(fleet).success, true);
  assert.equal(diskInfoSchema.safeParse({ ...fleet, link: 'javascript:alert(1)' }).success, false, 'only http(s) links');
  assert.equal(diskInfoSchema.safeParse({ ...fleet, link: 'http://a b/' }).success, false, 'no spaces');
  assert.equal(diskInfoSchema.safeParse({ ...fleet, host: '' }).success, false, 'a host is named');
  assert.equal(diskInfoSchema.safeParse({ ...fleet, name: 'x'.repeat(193) }).success, false, 'names up to 192 characters');
});

// Hostile keys: a "__proto__" key anywhere in a snapshot or a client message is refused, naming
// where it is (zod's z.record alone drops it, so `"e":{"__proto__":…}` would read as `{}`), and
// a snapshot version of the wrong type says so instead of "version 4 is not supported".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKET_SCHEMA,
  listText,
  parseClientMessage,
  parseSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type Snapshot,
} from '../src/index.js';

const T0 = 1795290000;
const snapshot: Snapshot = {
  format: SNAPSHOT_FORMAT,
  version: SNAPSHOT_VERSION,
  createdAt: '2026-11-21T12:00:00.000Z',
  agent: '0.1.0',
  host: { hostname: 'h', kernel: '6.18.0' },
  schema: BUCKET_SCHEMA,
  range: { from: T0, to: T0 + 2, step: 1 },
  disks: [{ dev: '7:0', name: 'loop0', kind: 'request', present: true }],
  frames: [{ ts: T0, step: 1, disks: [{ dev: '7:0', cls: [{ c: 'Read', n: 3, d: [40, 3], q: [0, 3], e: { IOERR: 1 } }] }] }],
  samples: [],
};

const text = JSON.stringify(snapshot);

test('the snapshot these tests edit is valid', () => {
  const r = parseSnapshot(text);
  assert.ok(r.ok, r.ok ? '' : r.message);
});

test('a "__proto__" key anywhere in a snapshot is refused, naming its path', () => {
  const cases: [string, string][] = [
    // The tester's case: a record whose only key was dropped, so the class read as error-free.
    [text.replace('"e":{"IOERR":1}', '"e":{"__proto__":{"IOERR":1}}'), 'frames.0.disks.0.cls.0.e.__proto__'],
    [text.replace('"e":{"IOERR":1}', '"e":{"IOERR":1,"__proto__":{}}'), 'frames.0.disks.0.cls.0.e.__proto__'],
    // The same key written with escapes is the same key.
    [text.replace('"e":{"IOERR":1}', '"e":{"\\u005f_proto_\\u005f":{"IOERR":1}}'), 'frames.0.disks.0.cls.0.e.__proto__'],
    [text.replace('"kernel":"6.18.0"', '"kernel":"6.18.0","__proto__":null'), 'host.__proto__'],
    [`${text.slice(0, -1)},"__proto__":{"version":1}}`, '__proto__'],
    [text.replace('"samples":[]', '"samples":[{"__proto__":1}]'), 'samples.0.__proto__'],
  ];
  for (const [t, path] of cases) {
    const r = parseSnapshot(t);
    assert.equal(r.ok, false, `accepted: ${path}`);
    if (!r.ok) {
      assert.equal(r.field, path);
      assert.equal(r.message, `${path}: a key named "__proto__" is not allowed`);
    }
  }
  // The word elsewhere (a value, a longer key) is not a key named __proto__.
  const note = parseSnapshot(JSON.stringify({ ...snapshot, note: '"__proto__": 1 \\u005f' }));
  assert.ok(note.ok, note.ok ? '' : note.message);
});

test('a deeply nested hostile snapshot is walked without overflowing the stack', () => {
  const deep = `{"format":"${SNAPSHOT_FORMAT}","x":${'['.repeat(200_000)}{"__proto__":1}${']'.repeat(200_000)}}`;
  const r = parseSnapshot(deep);
  assert.equal(r.ok, false);
  if (!r.ok) assert.equal(r.field, `x.${'0.'.repeat(200_000)}__proto__`);
});

test('a "__proto__" key in a client message is refused, naming its path', () => {
  const cases: [string, string][] = [
    ['{"t":"subscribe","__proto__":{"t":"range"}}', '__proto__'],
    ['{"t":"range","id":1,"from":1795290000,"to":1795290001,"disks":[{"__proto__":1}]}', 'disks.0.__proto__'],
    ['{"\\u005f_proto__":{},"t":"subscribe"}', '__proto__'],
  ];
  for (const [msg, path] of cases) {
    const r = parseClientMessage(msg);
    assert.equal(r.ok, false, msg);
    if (!r.ok) {
      assert.equal(r.field, path, msg);
      assert.equal(r.message, `${path}: a key named "__proto__" is not allowed`);
    }
  }
});

test('a snapshot version that is not a number says so, and versions read as "1, 2, 3, 4 and 5"', () => {
  const cases: [unknown, string][] = [
    ['4', 'snapshot "version" must be a number like 5, not the string "4" (this build reads versions 1, 2, 3, 4 and 5)'],
    [null, 'snapshot "version" must be a number like 5, not null (this build reads versions 1, 2, 3, 4 and 5)'],
    [[4], 'snapshot "version" must be a number like 5, not an array (this build reads versions 1, 2, 3, 4 and 5)'],
    [99, 'snapshot version 99 is not supported (this build reads versions 1, 2, 3, 4 and 5)'],
    [undefined, 'snapshot has no "version" (this build reads versions 1, 2, 3, 4 and 5)'],
  ];
  for (const [version, message] of cases) {
    const r = parseSnapshot(JSON.stringify({ ...snapshot, version }));
    assert.equal(r.ok, false, JSON.stringify(version));
    if (!r.ok) {
      assert.equal(r.message, message);
      assert.equal(r.field, 'version');
    }
  }
  const long = parseSnapshot(JSON.stringify({ ...snapshot, version: 'x'.repeat(5000) }));
  assert.ok(!long.ok && long.message.length < 200, 'a long string is not echoed whole');
});

test('listText joins lists for messages', () => {
  assert.equal(listText([]), '');
  assert.equal(listText(['from']), 'from');
  assert.equal(listText([2, 3], 'or'), '2 or 3');
  assert.equal(listText([1, 2, 3]), '1, 2 and 3');
  assert.equal(listText(['from', 'to', 'step', 'disk', 'class'], 'or'), 'from, to, step, disk or class');
});

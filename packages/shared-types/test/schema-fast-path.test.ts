// The fast path of a disk's classes in snapshot validation (schemas.ts plainClassSeries): what it
// takes as it is, classSeriesSchema accepts too, over valid classes and a few thousand broken
// ones; what it refuses still goes through the schema, so a broken class is named by its path as
// before, and a class of a shape it does not know (errors, sizes) is accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classSeriesSchema,
  type ClassSeries,
  type DiskFrame,
  MAX_BUCKET_COUNT,
  parseSnapshot,
  plainClassSeries,
  seededRandom,
  SNAPSHOT_LIMITS,
} from '../src/index.js';
import { snapshotOf } from './fixtures.js';

const T0 = 1795290000;
const plain: ClassSeries = { c: 'Sync-Write', n: 9, d: [3, 4, 40, 5], q: [0, 9], w: [1, 2], t: [41, 9], wu: 7, b: 36864 };

/** Values that break a field in one way or another, and some that do not. */
const ODD_VALUES: readonly unknown[] = [
  undefined,
  null,
  -1,
  0,
  1.5,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  '3',
  '',
  'Read',
  '1Read',
  'Read Write',
  'R'.repeat(64),
  'R'.repeat(65),
  true,
  {},
  [],
  [0],
  [0, 0],
  [0, 1],
  [2, 1, 1, 1],
  [1, 1, 2, 1],
  [-1, 1],
  [MAX_BUCKET_COUNT - 1, 1],
  [MAX_BUCKET_COUNT, 1],
  [0, 1.5],
  ['0', 1],
  [0, 2 ** 53],
  new Array(2 * MAX_BUCKET_COUNT + 2).fill(0).map((_, i) => (i % 2 === 0 ? i / 2 : 1)),
];
const FIELDS = ['c', 'n', 'd', 'q', 'w', 't', 'wu', 'b', 'e', 'pt', 'sz', 'x', '__proto__'] as const;

test('what the fast path takes as it is, classSeriesSchema accepts: every field broken every way, alone and several at once', () => {
  let taken = 0;
  let refused = 0;
  const check = (candidate: unknown, what: string): void => {
    if (plainClassSeries(candidate)) {
      taken++;
      const r = classSeriesSchema.safeParse(candidate);
      assert.ok(r.success, `${what}: the fast path took it, the schema refuses it (${r.success ? '' : r.error.issues[0]?.message})`);
    } else refused++;
  };
  check(plain, 'the plain class');
  assert.equal(plainClassSeries(plain), true, 'a plain class is taken by the fast path');
  for (const field of FIELDS)
    for (const [i, value] of ODD_VALUES.entries()) {
      const candidate: Record<string, unknown> = { ...plain };
      if (field === '__proto__') Object.defineProperty(candidate, field, { value, enumerable: true });
      else candidate[field] = value;
      check(candidate, `${field} = ${JSON.stringify(value)?.slice(0, 40)} (#${i})`);
      const without: Record<string, unknown> = { ...plain };
      delete without[field];
      check(without, `without ${field}`);
    }
  const random = seededRandom(28);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  for (let k = 0; k < 5000; k++) {
    const candidate: Record<string, unknown> = { ...plain };
    const changes = 1 + Math.floor(random() * 3);
    for (let j = 0; j < changes; j++) candidate[pick(FIELDS.filter((f) => f !== '__proto__'))] = pick(ODD_VALUES);
    check(candidate, `random #${k}: ${JSON.stringify(candidate).slice(0, 120)}`);
  }
  for (const other of [null, 7, 'Read', [plain], [], true]) check(other, JSON.stringify(other));
  // Both ways used: the check above is not vacuous.
  assert.ok(taken > 100 && refused > 1000, `taken ${taken}, refused ${refused}`);
});

/** The snapshot of one disk with `cls` as its classes. */
function withClasses(cls: readonly unknown[]): string {
  return JSON.stringify(snapshotOf(T0, { dev: '7:0', cls } as unknown as DiskFrame));
}

test('a class the fast path refuses is checked by the schema: named by its path when broken, accepted when only of another shape', () => {
  const at = 'frames.0.disks.0.cls';
  const cases: [unknown, string, RegExp][] = [
    [{ ...plain, c: 'Read Write' }, `${at}.2.c`, /class name/],
    [{ ...plain, n: -1 }, `${at}.2.n`, />=0/],
    [{ ...plain, d: [0, 1.5] }, `${at}.2.d.1`, /int/i],
    [{ ...plain, q: [5, 1, 2, 1] }, `${at}.2.q`, /strictly increasing/],
    [{ ...plain, wu: 10 }, `${at}.2.wu`, /must not be above n/],
    [{ ...plain, x: 1 }, `${at}.2`, /unrecognized key/i],
    [{ ...plain, d: undefined }, `${at}.2.d`, /expected array/],
  ];
  for (const [bad, path, message] of cases) {
    const r = parseSnapshot(withClasses([plain, { ...plain, c: 'Read' }, bad]));
    assert.ok(!r.ok, `${JSON.stringify(bad)} refused`);
    assert.equal(r.field, path, `${JSON.stringify(bad)}: ${r.message}`);
    assert.match(r.message, message);
  }
  // Errors, sizes and the mark are not the fast path's: the schema takes them.
  const rich: ClassSeries = { ...plain, c: 'Read', e: { IOERR: 2 }, pt: true, sz: [{ s: 12, n: 9, d: [40, 9] }] };
  assert.equal(plainClassSeries(rich), false);
  const r = parseSnapshot(withClasses([plain, rich]));
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.deepEqual(r.value.frames[0]?.disks[0]?.cls, [plain, rich]);
  // Past the class limit, the list is refused as a whole.
  const many = Array.from({ length: SNAPSHOT_LIMITS.classesPerDisk + 1 }, (_, i) => ({ ...plain, c: `Class${i}` }));
  const over = parseSnapshot(withClasses(many));
  assert.ok(!over.ok);
  assert.equal(over.field, at);
  assert.match(over.message, new RegExp(`<=${SNAPSHOT_LIMITS.classesPerDisk} items`));
});

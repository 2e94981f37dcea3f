// URL state round-trips; junk never breaks the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeUrlState, DEFAULT_URL_STATE, encodeUrlState, type UrlState } from '../src/model/urlstate.ts';

test('default state encodes to an empty query', () => {
  assert.equal(encodeUrlState(DEFAULT_URL_STATE), '');
  assert.deepEqual(decodeUrlState(''), {
    ...DEFAULT_URL_STATE,
    from: undefined,
    to: undefined,
    disks: undefined,
    cgroup: undefined,
    problems: [],
  });
});

test('every field round-trips', () => {
  const states: UrlState[] = [
    { live: true, span: 900, classes: [], kind: 'device', colour: 'log', norm: 'disk', percentiles: true, compare: undefined, stuck: 1 },
    {
      live: false,
      span: 600,
      from: 1_700_000_000,
      to: 1_700_000_600,
      disks: ['vda', 'loop0', '7:3'],
      classes: ['Read', 'Sync-Write', 'Metadata-Read'],
      kind: 'queue',
      colour: 'linear',
      norm: 'shared',
      percentiles: false,
      compare: { baseline: { from: 1_700_000_000, to: 1_700_000_300 }, comparison: { from: 1_700_000_300, to: 1_700_000_600 } },
      stuck: 0.25,
    },
    {
      live: true,
      span: 60,
      disks: [],
      classes: ['Flush'],
      kind: 'device',
      colour: 'linear',
      norm: 'shared',
      percentiles: true,
      compare: { baseline: { from: 1_700_000_000, to: 1_700_000_060 } },
      stuck: 30,
    },
    {
      live: true,
      span: 300,
      classes: [],
      cgroup: '/user.slice/backup.scope',
      kind: 'device',
      colour: 'log',
      norm: 'disk',
      percentiles: true,
      compare: undefined,
      stuck: 1,
    },
  ];
  for (const s of states) {
    const q = encodeUrlState(s);
    const back = decodeUrlState(`?${q}`);
    assert.deepEqual(back, { ...s, from: s.from, to: s.to, disks: s.disks, cgroup: s.cgroup, problems: [] }, q);
    assert.equal(encodeUrlState(back), q);
  }
  assert.match(encodeUrlState(states[1] as UrlState), /disks=vda,loop0,7:3/);
  assert.match(encodeUrlState(states[1] as UrlState), /scale=shared/);
  assert.match(encodeUrlState(states[1] as UrlState), /stuck=0\.25/);
  assert.doesNotMatch(encodeUrlState(states[0] as UrlState), /stuck/, 'the default threshold stays out of the URL');
});

test('stuck threshold: seconds within 0.01..3600, anything else is the default and a problem that says why', () => {
  assert.equal(decodeUrlState('stuck=2.5').stuck, 2.5);
  assert.equal(decodeUrlState('stuck=0.01').stuck, 0.01);
  assert.equal(decodeUrlState('stuck=3600').stuck, 3600);
  assert.deepEqual(decodeUrlState('stuck=2').problems, []);
  for (const bad of ['0', '0.001', '3601', '-1', '1e3', 'abc', '', '1.2345', 'Infinity', ' 1']) {
    const s = decodeUrlState(`stuck=${encodeURIComponent(bad)}`);
    assert.equal(s.stuck, 1, bad);
    assert.equal(s.problems?.length, 1, bad);
    assert.match(s.problems?.[0] ?? '', /stuck=.*expected a number of seconds from 0\.01 to 3600/, bad);
  }
});

test('junk falls back to defaults, field by field', () => {
  const s = decodeUrlState(
    '?from=abc&to=1&live=-5&disks=<script>,ok&classes=1bad,Read&lat=evil&color=rainbow&pct=maybe&scale=huge&token=x',
  );
  assert.equal(s.live, true);
  assert.equal(s.span, DEFAULT_URL_STATE.span);
  assert.deepEqual(s.disks, ['ok']);
  assert.deepEqual(s.classes, ['Read']);
  assert.equal(s.kind, undefined, 'a bad phase is the default (total when the data has it, else device)');
  assert.deepEqual(s.problems, ['lat=evil: expected total, submit, queue, device; using the default']);
  assert.equal(s.colour, 'log');
  assert.equal(s.norm, 'disk');
  assert.equal(s.percentiles, true);
  // A reversed range is not a range.
  assert.equal(decodeUrlState('from=1700000600&to=1700000000').live, true);
});

test('latency phase: each round-trips as lat=, the default stays out of the URL, junk is the default and named', () => {
  for (const kind of ['total', 'submit', 'queue', 'device'] as const) {
    const q = encodeUrlState({ ...DEFAULT_URL_STATE, kind });
    assert.equal(q, `lat=${kind}`, 'a chosen phase is written, device too: the default depends on the data');
    const back = decodeUrlState(`?${q}`);
    assert.equal(back.kind, kind);
    assert.deepEqual(back.problems, []);
    assert.equal(encodeUrlState(back), q);
  }
  assert.equal(encodeUrlState({ ...DEFAULT_URL_STATE, kind: undefined }), '');
  assert.equal(decodeUrlState('').kind, undefined, 'no lat=: the default');
  for (const bad of ['', 'Total', 'wait', 'device,queue', 'x'.repeat(200), '%00']) {
    const s = decodeUrlState(`?lat=${encodeURIComponent(bad)}&classes=Read`);
    assert.equal(s.kind, undefined, bad);
    assert.equal(s.problems.length, 1, bad);
    assert.match(s.problems[0] as string, /^lat=.{0,32}: expected total, submit, queue, device; using the default$/s, bad);
    assert.deepEqual(s.classes, ['Read'], `${bad}: the rest of the link still applies`);
  }
});

test('compare ranges: base and cmp round-trip; a bad value is named and ignored, the rest of the link works', () => {
  const q = encodeUrlState({ ...DEFAULT_URL_STATE, compare: { baseline: { from: 1_700_000_000, to: 1_700_000_300 } } });
  assert.equal(q, 'base=1700000000-1700000300');
  const both = decodeUrlState('?base=1700000000-1700000300&cmp=1700000300-1700000600&lat=queue');
  assert.deepEqual(both.compare, {
    baseline: { from: 1_700_000_000, to: 1_700_000_300 },
    comparison: { from: 1_700_000_300, to: 1_700_000_600 },
  });
  assert.deepEqual(both.problems, []);

  const cases: [string, RegExp][] = [
    ['base=abc', /^base=abc is not a time range \(expected FROM-TO in unix seconds\); ignored$/],
    ['base=1700000300-1700000000', /^base=1700000300-1700000000 is not a time range \(TO must be after FROM\); ignored$/],
    ['base=100-200', /between 2000 and 2200/],
    ['base=1700000000-1800000000', /at most 31 days/],
    ['cmp=1700000000-1700000300', /^cmp= without a baseline \(base=\) compares nothing; ignored$/],
  ];
  for (const [query, message] of cases) {
    const s = decodeUrlState(`?${query}&lat=queue`);
    assert.equal(s.compare, undefined, query);
    assert.equal(s.problems.length, 1, query);
    assert.match(s.problems[0] as string, message, query);
    assert.equal(s.kind, 'queue', `${query}: the rest of the link still applies`);
  }
  // A bad comparison drops only itself: the baseline is compared with the view.
  const half = decodeUrlState('?base=1700000000-1700000300&cmp=1700000300-x');
  assert.deepEqual(half.compare, { baseline: { from: 1_700_000_000, to: 1_700_000_300 } });
  assert.match(half.problems[0] as string, /^cmp=1700000300-x is not a time range/);
});

test('cgroup filter: round-trips readable, wins over classes, junk is dropped and named', () => {
  const urlProblems = (q: string): readonly string[] => decodeUrlState(q).problems;
  const s: UrlState = { ...DEFAULT_URL_STATE, cgroup: '/system.slice/postgres.service' };
  const q = encodeUrlState(s);
  assert.equal(q, 'cgroup=/system.slice/postgres.service');
  assert.equal(decodeUrlState(`?${q}`).cgroup, '/system.slice/postgres.service');
  for (const g of ['(none)', '(other)', 'cgroup#42', '/a b/c&d=e'])
    assert.equal(decodeUrlState(`?${encodeUrlState({ ...DEFAULT_URL_STATE, cgroup: g })}`).cgroup, g, g);
  // cg has no class split: both in one link keeps the cgroup, and encoding never writes both.
  const both = decodeUrlState('?classes=Read&cgroup=/x');
  assert.equal(both.cgroup, '/x');
  assert.deepEqual(both.classes, []);
  assert.equal(encodeUrlState({ ...DEFAULT_URL_STATE, classes: ['Read'], cgroup: '/x' }), 'cgroup=/x');
  for (const bad of ['relative', '', '/a//b', '/a%0Ab']) {
    assert.equal(decodeUrlState(`?cgroup=${bad}&classes=Read`).cgroup, undefined, bad);
    assert.deepEqual(decodeUrlState(`?cgroup=${bad}&classes=Read`).classes, ['Read'], 'a refused cgroup leaves the classes');
    assert.equal(urlProblems(`?cgroup=${bad}`).length, 1, bad);
  }
  assert.deepEqual(urlProblems('?cgroup=/ok'), []);
  assert.match(urlProblems('?cgroup=/ok&classes=Read')[0] ?? '', /class filter ignored/);
});

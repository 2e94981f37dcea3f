// URL state round-trips; junk never breaks the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeUrlState, DEFAULT_URL_STATE, encodeUrlState, type UrlState } from '../src/model/urlstate.ts';

test('default state encodes to an empty query', () => {
  assert.equal(encodeUrlState(DEFAULT_URL_STATE), '');
  assert.deepEqual(decodeUrlState(''), { ...DEFAULT_URL_STATE, from: undefined, to: undefined, disks: undefined, cgroup: undefined });
});

test('every field round-trips', () => {
  const states: UrlState[] = [
    { live: true, span: 900, classes: [], kind: 'device', colour: 'log', norm: 'disk', percentiles: true },
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
    },
    { live: true, span: 60, disks: [], classes: ['Flush'], kind: 'device', colour: 'linear', norm: 'shared', percentiles: true },
    {
      live: true,
      span: 300,
      classes: [],
      cgroup: '/user.slice/backup.scope',
      kind: 'device',
      colour: 'log',
      norm: 'disk',
      percentiles: true,
    },
  ];
  for (const s of states) {
    const q = encodeUrlState(s);
    const back = decodeUrlState(`?${q}`);
    assert.deepEqual(back, { ...s, from: s.from, to: s.to, disks: s.disks, cgroup: s.cgroup }, q);
    assert.equal(encodeUrlState(back), q);
  }
  assert.match(encodeUrlState(states[1] as UrlState), /disks=vda,loop0,7:3/);
  assert.match(encodeUrlState(states[1] as UrlState), /scale=shared/);
});

test('junk falls back to defaults, field by field', () => {
  const s = decodeUrlState(
    '?from=abc&to=1&live=-5&disks=<script>,ok&classes=1bad,Read&lat=evil&color=rainbow&pct=maybe&scale=huge&token=x',
  );
  assert.equal(s.live, true);
  assert.equal(s.span, DEFAULT_URL_STATE.span);
  assert.deepEqual(s.disks, ['ok']);
  assert.deepEqual(s.classes, ['Read']);
  assert.equal(s.kind, 'device');
  assert.equal(s.colour, 'log');
  assert.equal(s.norm, 'disk');
  assert.equal(s.percentiles, true);
  // A reversed range is not a range.
  assert.equal(decodeUrlState('from=1700000600&to=1700000000').live, true);
});

test('cgroup filter: round-trips readable, wins over classes, junk is dropped and named', async () => {
  const { urlProblems } = await import('../src/model/urlstate.ts');
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

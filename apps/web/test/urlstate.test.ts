// URL state round-trips; junk never breaks the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeUrlState, DEFAULT_URL_STATE, encodeUrlState, type UrlState } from '../src/model/urlstate.ts';

test('default state encodes to an empty query', () => {
  assert.equal(encodeUrlState(DEFAULT_URL_STATE), '');
  assert.deepEqual(decodeUrlState(''), { ...DEFAULT_URL_STATE, from: undefined, to: undefined, disks: undefined });
});

test('every field round-trips', () => {
  const states: UrlState[] = [
    { live: true, span: 900, classes: [], kind: 'device', colour: 'log', norm: 'disk', percentiles: true, stuck: 1 },
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
      stuck: 0.25,
    },
    { live: true, span: 60, disks: [], classes: ['Flush'], kind: 'device', colour: 'linear', norm: 'shared', percentiles: true, stuck: 30 },
  ];
  for (const s of states) {
    const q = encodeUrlState(s);
    const back = decodeUrlState(`?${q}`);
    assert.deepEqual(back, { ...s, from: s.from, to: s.to, disks: s.disks }, q);
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
  assert.equal(decodeUrlState('stuck=2').problems, undefined);
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
  assert.equal(s.kind, 'device');
  assert.equal(s.colour, 'log');
  assert.equal(s.norm, 'disk');
  assert.equal(s.percentiles, true);
  // A reversed range is not a range.
  assert.equal(decodeUrlState('from=1700000600&to=1700000000').live, true);
});

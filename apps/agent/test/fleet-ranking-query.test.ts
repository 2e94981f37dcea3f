// The ranking route's parameters (server/http-query.ts parseRankingQuery) and the PromQL its
// filters become (fleet/promql.ts): every bad parameter a 400 naming it, and user text quoted
// and escaped, never pasted. The same text against a real Prometheus: fleet-ranking.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RANKED } from '@blkheat/shared-types';
import { globToRe2, matcher, promString, selector } from '../src/fleet/promql.js';
import { scrapeWindow, sparkStep } from '../src/fleet/fleet-ranking.js';
import { parseRankingQuery, parseStuckQuery } from '../src/server/http-query.js';

const T = 1_800_000_000;
const parse = (q: string) => parseRankingQuery(new URLSearchParams(q));

test('ranking query: a span, a limit and four label filters, each checked', () => {
  assert.deepEqual(parse(`from=${T}&to=${T + 60}`), { ok: true, value: { from: T, to: T + 60, filter: {} } });
  assert.deepEqual(parse(`from=${T}&to=${T + 60}&limit=${MAX_RANKED}&job=blkheat&instance=db-*&disk=nvme%3F&class=Read&token=x`), {
    ok: true,
    value: { from: T, to: T + 60, limit: MAX_RANKED, filter: { job: 'blkheat', instance: 'db-*', disk: 'nvme?', class: 'Read' } },
  });
  const refused: [string, string, RegExp][] = [
    ['', 'from', /from: required/],
    [`from=${T}`, 'to', /to: required/],
    [`from=${T}&to=${T}`, 'to', /must be after from/],
    [`from=x&to=${T}`, 'from', /expected an integer/],
    [`from=1&to=${T}`, 'from', /unix seconds between/],
    [`from=${T}&to=${T + 32 * 86400}`, 'to', /at most 31 days/],
    [`from=${T}&to=${T + 60}&limit=0`, 'limit', /expected 1 to 200/],
    [`from=${T}&to=${T + 60}&limit=201`, 'limit', /expected 1 to 200/],
    [`from=${T}&to=${T + 60}&limit=-1`, 'limit', /expected 1 to 200/],
    [`from=${T}&to=${T + 60}&job=`, 'job', /empty/],
    [`from=${T}&to=${T + 60}&instance=${'a'.repeat(129)}`, 'instance', /longer than 128/],
    [`from=${T}&to=${T + 60}&disk=%1b[31m`, 'disk', /control characters/],
    // Invalid UTF-8 decodes to U+FFFD, which Prometheus' lexer refuses ("invalid UTF-8 rune": a 502).
    [`from=${T}&to=${T + 60}&instance=%ED%A0%80`, 'instance', /not well-formed text \(U\+FFFD/],
    [`from=${T}&to=${T + 60}&disk=a%EF%BF%BDb`, 'disk', /not well-formed text \(U\+FFFD/],
    [`from=${T}&to=${T + 60}&class=Read"}`, 'class', /op class name/],
    [`from=${T}&to=${T + 60}&class=Read&class=Write`, 'class', /given more than once/],
    [`from=${T}&to=${T + 60}&step=5`, 'step', /unknown parameter \(expected from, to, limit, job, instance, disk or class\)/],
    [`from=${T}&to=${T + 60}&__proto__=1`, '__proto__', /unknown parameter/],
  ];
  for (const [q, field, message] of refused) {
    const r = parse(q);
    assert.ok(!r.ok, `?${q} refused`);
    if (!r.ok) {
      assert.equal(r.field, field, `?${q}: ${r.message}`);
      assert.match(r.message, message, `?${q}`);
    }
  }
  // An instance label may be any text: 128 characters of it, quotes and braces included.
  assert.ok(parse(`from=${T}&to=${T + 60}&instance=${encodeURIComponent('a"}|b'.padEnd(128, 'x'))}`).ok);
});

test('stuck query: invalid UTF-8 in a filter is a 400 naming it, as in the ranking', (t) => {
  const refused: [string, string][] = [
    ['instance=%ED%A0%80', 'instance'],
    ['disk=%C3', 'disk'],
    ['job=a%EF%BF%BD', 'job'],
  ];
  const answers = refused.map(([q]) => parseStuckQuery(new URLSearchParams(q)));
  t.diagnostic(answers.map((r, i) => `?${refused[i]?.[0]} -> ${r.ok ? 'accepted' : r.message}`).join(' | '));
  for (const [i, [q, field]] of refused.entries()) {
    const r = answers[i];
    assert.ok(r && !r.ok, `?${q} refused`);
    if (r && !r.ok) {
      assert.equal(r.field, field, `?${q}: ${r.message}`);
      assert.match(r.message, /not well-formed text \(U\+FFFD/, `?${q}`);
    }
  }
  assert.ok(parseStuckQuery(new URLSearchParams('instance=d%C3%A9j%C3%A0')).ok, 'well-formed non-ASCII is a filter');
});

test('PromQL from user text: quoted, globs escaped, label names checked', () => {
  assert.equal(promString('db-1'), '"db-1"');
  assert.equal(promString('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(promString('a\nb\u0000'), '"a\\u000ab\\u0000"', 'control characters as Go escapes');
  assert.throws(() => promString('a\ud800'), /lone surrogate/);
  assert.equal(globToRe2('db-*'), 'db-.*');
  assert.equal(globToRe2('nvme?n1'), 'nvme.n1');
  assert.equal(globToRe2('a.b|c(d)+[e]^$\\'), 'a\\.b\\|c\\(d\\)\\+\\[e\\]\\^\\$\\\\', 'regex characters match themselves');
  assert.equal(matcher('instance', '=~', globToRe2('db.1*"')), 'instance=~"db\\\\.1.*\\""');
  assert.throws(() => matcher('in stance', '=', 'x'), /not a label name/);
  assert.equal(selector('m', []), 'm');
  assert.equal(selector('m', ['a="1"', 'b=~"2"']), 'm{a="1", b=~"2"}');
});

test('the window of a range: the range and a scrape interval, less a millisecond, evaluated at its end', (t) => {
  const one = scrapeWindow(T, T + 15, 15);
  const hour = scrapeWindow(T, T + 3600, 1);
  t.diagnostic(`15 s at 15 s: ${JSON.stringify(one)}; 1 h at 1 s: ${JSON.stringify(hour)}`);
  assert.deepEqual(one, { window: '29999ms', at: T + 29.999 });
  assert.deepEqual(hour, { window: '3600999ms', at: T + 3600.999 });
});

test('the sparkline step: ~24 points over the range, two scrapes a step at least, or none', () => {
  assert.equal(sparkStep(T, T + 3600, 15), 150);
  assert.equal(sparkStep(T, T + 30, 1), 2);
  assert.equal(sparkStep(T, T + 300, 15), 30, 'two scrapes a step');
  assert.equal(sparkStep(T, T + 45, 15), undefined, 'fewer than two steps: no sparkline');
});

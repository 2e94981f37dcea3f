// The spread pick of a samples answer (sample-spread.ts): at most `limit`, every match when they
// fit, the slowest tenth always in, the rest spread over time so every part of the range with
// I/O has points (a quiet stretch keeps its few), the same choice when asked again a second later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '@blkheat/testkit';
import { pickSpread, SPREAD_SLOWEST_SHARE, spreadHash, type SpreadKeys, SpreadPicker } from '../src/index.js';

interface Hit {
  readonly tsUs: number;
  readonly latencyNs: number;
  readonly sector: number;
}

const T0 = 1_795_290_000;

/** `perSecond(s)` matches in second s of [0, seconds), at random times, sectors and latencies. */
function hits(seconds: number, perSecond: (s: number) => number, seed = 7): Hit[] {
  const r = seededRandom(seed);
  const out: Hit[] = [];
  for (let s = 0; s < seconds; s++) {
    const n = perSecond(s);
    for (let i = 0; i < n; i++) {
      out.push({
        tsUs: (T0 + s) * 1e6 + Math.floor(r() * 1e6),
        latencyNs: Math.floor(1e5 * Math.exp(3 * r())),
        sector: Math.floor(r() * 1e9),
      });
    }
  }
  return out.sort((a, b) => a.tsUs - b.tsUs);
}

const key: SpreadKeys<Hit> = { tsUs: (h) => h.tsUs, latencyNs: (h) => h.latencyNs, hash: (h) => spreadHash(h.tsUs, h.sector, h.latencyNs) };

function pick(all: readonly Hit[], from: number, to: number, limit: number) {
  return pickSpread(
    all.filter((h) => h.tsUs >= from * 1e6 && h.tsUs < to * 1e6),
    from * 1e6,
    to * 1e6,
    limit,
    key,
  );
}

test('no more matches than the limit: all of them, in order, not truncated', () => {
  const all = hits(10, () => 50);
  const r = pick(all, T0, T0 + 10, 500);
  assert.deepEqual(r.items, all);
  assert.equal(r.truncated, false);
  assert.equal(r.matched, 500);
  assert.equal(pick(all, T0, T0 + 10, 499).items.length, 499);
});

test('a busy minute (200,000 matches, limit 2,000): exactly the limit, in order, every tenth of the range drawn, the slowest all in', () => {
  const all = hits(60, () => 3334);
  const r = pick(all, T0, T0 + 60, 2000);
  assert.equal(r.matched, all.length);
  assert.equal(r.truncated, true);
  assert.equal(r.items.length, 2000);
  for (let i = 1; i < r.items.length; i++) assert.ok((r.items[i] as Hit).tsUs >= (r.items[i - 1] as Hit).tsUs, 'kept in their order');
  const tenths = new Array<number>(10).fill(0);
  for (const h of r.items) {
    const i = Math.floor((h.tsUs / 1e6 - T0) / 6);
    tenths[i] = (tenths[i] ?? 0) + 1;
  }
  for (const [i, n] of tenths.entries()) assert.ok(n >= 170 && n <= 230, `tenth ${i}: ${n} points (${tenths.join(', ')})`);
  const slowest = [...all].sort((a, b) => b.latencyNs - a.latencyNs).slice(0, 2000 * SPREAD_SLOWEST_SHARE);
  const kept = new Set(r.items);
  for (const h of slowest) assert.ok(kept.has(h), `a slowest one (${h.latencyNs} ns) is kept`);
});

test('a quiet stretch next to a busy one keeps its few I/Os (a stall is the incident)', () => {
  // 50 s at 2,000/s, then a 10 s stall doing 3 I/Os a second.
  const all = hits(60, (s) => (s < 50 ? 2000 : 3));
  const r = pick(all, T0, T0 + 60, 1000);
  const stalled = all.filter((h) => h.tsUs >= (T0 + 50) * 1e6);
  assert.equal(stalled.length, 30);
  const kept = new Set(r.items);
  for (const h of stalled) assert.ok(kept.has(h), 'every I/O of the stall is drawn');
  assert.equal(r.items.length, 1000);
});

test('asked again a second later (a live window sliding on), nearly the same points where the windows overlap', () => {
  const all = hits(61, () => 3000, 11);
  const a = pick(all, T0, T0 + 60, 2000);
  const b = pick(all, T0 + 1, T0 + 61, 2000);
  const inBoth = (h: Hit): boolean => h.tsUs >= (T0 + 1) * 1e6 && h.tsUs < (T0 + 60) * 1e6;
  const aKept = new Set(a.items.filter(inBoth));
  const shared = b.items.filter((h) => inBoth(h) && aKept.has(h)).length;
  assert.ok(shared >= 0.8 * aKept.size, `${shared} of ${aKept.size} points stay`);
  assert.deepEqual(pick(all, T0, T0 + 60, 2000).items, a.items, 'the same question, the same answer');
});

test('the picker takes any positions in increasing order, a limit of one, and refuses an empty range', () => {
  const all = hits(5, () => 40);
  const p = new SpreadPicker(T0 * 1e6, (T0 + 5) * 1e6, 1);
  all.forEach((h, i) => p.count(h.tsUs, h.latencyNs, 10 * i));
  p.plan();
  all.forEach((h, i) => p.offer(h.tsUs, spreadHash(h.tsUs, h.sector, h.latencyNs), 10 * i));
  const r = p.result();
  assert.equal(r.at.length, 1);
  assert.equal((r.at[0] as number) % 10, 0);
  assert.throws(() => new SpreadPicker(T0 * 1e6, T0 * 1e6, 10), RangeError);
  assert.throws(() => new SpreadPicker(T0 * 1e6, (T0 + 1) * 1e6, 0), RangeError);
  assert.notEqual(spreadHash(1, 2, 3), spreadHash(1, 2, 4));
  assert.notEqual(spreadHash(1, null, 3), spreadHash(1, 0, 3));
});

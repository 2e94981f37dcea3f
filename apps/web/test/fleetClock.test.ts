// Where a live view stands (issues 29 and 30): the source's clock from its hello (source.ts
// helloClock, clockEdge). An agent's now moves a second a second; a fleet server's live end
// (hello.fleet.liveTo, liveLag, protocol 6) moves a step each step, `liveLag` after a column's
// end, with or without live frames, and an old backfill's end never holds it back. A fleet's
// clock calls onEdgeMoved as it moves (a big fleet sends no live frames to move the view).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type HelloMessage } from '@blkheat/shared-types';
import { DataSource, helloClock } from '../src/pipeline/source.ts';
import { createDataStore } from '../src/store/pipelineStore.ts';
import { createUiStore } from '../src/store/uiStore.ts';

/** A multiple of 5 and 10. */
const E = 1_700_000_000;
const fleet = { prometheus: 'http://prom', scrapeInterval: 5 };

function source(onEdgeMoved?: () => void): DataSource {
  return new DataSource({ ui: createUiStore(), store: createDataStore(), onEdgeMoved });
}

function edgeAfter(hello: Pick<HelloMessage, 'now' | 'step' | 'fleet'>, elapsedMs: number, s = source()): number {
  s.setAgentClock(helloClock(hello, Date.now() - elapsedMs));
  return s.edge();
}

test('a fleet’s live end moves a step each step, liveLag after a column’s end', (t) => {
  // Told at E + 4 that the data ends at E, the newest column seen complete 2 s after its end.
  const hello = { now: E + 4, step: 5, fleet: { ...fleet, liveTo: E, liveLag: 2 } };
  const seen = [0, 2900, 3100, 7900, 8100, 60_000].map((ms) => edgeAfter(hello, ms) - E);
  t.diagnostic(`edge - E after 0, 2.9, 3.1, 7.9, 8.1, 60 s: ${seen.join(', ')}`);
  assert.deepEqual(seen, [0, 0, 5, 5, 10, 60], 'E + 7 closes the column [E, E + 5), E + 12 the next');
});

test('an agent’s now moves a second a second; a fleet server that has not said its end gives its clock', () => {
  assert.deepEqual(
    [0, 999, 1000, 30_500].map((ms) => edgeAfter({ now: E, step: 1 }, ms) - E),
    [0, 0, 1, 30],
  );
  assert.deepEqual(
    [0, 2500].map((ms) => edgeAfter({ now: E, step: 5, fleet }, ms) - E),
    [0, 2],
    'no liveTo: the server’s now, not an old window',
  );
});

test('an empty backfill ten minutes old does not hold a fleet’s view back', (t) => {
  const s = source();
  s.coverLive(E - 900, E - 600);
  s.setAgentClock(helloClock({ now: E + 4, step: 5, fleet: { ...fleet, liveTo: E, liveLag: 2 } }, Date.now()));
  t.diagnostic(`backfill covered to E - 600; edge E + ${s.edge() - E}; view ${JSON.stringify(s.visible())}`);
  assert.equal(s.edge(), E);
  assert.deepEqual(s.visible(), { following: true, span: 300, from: E - 300, to: E });
});

test('a fleet’s clock calls onEdgeMoved as it moves the edge; an agent’s does not', async (t) => {
  let moved = 0;
  const s = source(() => moved++);
  // The next move is 60 ms away: since the column end + lag, 4.94 s of a 5 s step have gone.
  s.setAgentClock(helloClock({ now: E + 2, step: 5, fleet: { ...fleet, liveTo: E, liveLag: 2 } }, Date.now() - 4940));
  assert.equal(s.edge(), E);
  await new Promise((r) => setTimeout(r, 300));
  const fleetMoves = moved;
  const edge = s.edge();
  // An agent's clock: its frames move the view; the fleet's timer is dropped.
  s.setAgentClock(helloClock({ now: E, step: 1 }, Date.now()));
  await new Promise((r) => setTimeout(r, 1200));
  t.diagnostic(`fleet clock: ${fleetMoves} move(s) in 300 ms, edge E + ${edge - E}; agent clock: ${moved - fleetMoves} in 1.2 s`);
  assert.equal(fleetMoves, 1, 'one move');
  assert.equal(edge, E + 5, 'to the next column’s end');
  assert.equal(moved, fleetMoves, 'an agent’s clock does not tick');
});

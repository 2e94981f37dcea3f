// An empty drill-down says its true reason (issue 29, 2): no samples taken, seconds no longer
// kept, thinned with age, or none of the cell's I/Os sampled; from the agent's `kept` (protocol 5),
// which the data layer carries from the answer to the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type SamplesAnswer, type SamplesKept, type SamplesRequest } from '@blkheat/shared-types';
import { formatClock } from '../src/model/format.ts';
import { noSamplesReason } from '../src/model/samples.ts';
import type { AgentSource } from '../src/pipeline/source.ts';
import { dataHarness, LOOP0 } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_000;
const cell = { from: T0, to: T0 + 1 };

test('the reason an empty cell gives follows what the agent keeps for its seconds', () => {
  const kept = (k: Partial<SamplesKept>): SamplesKept => ({ step: 1, since: T0 - 3600, budget: 2000, ...k });
  assert.match(
    noSamplesReason(cell, kept({}), false),
    /None of this cell's I\/Os was sampled: the kernel samples at most 2,000 I\/Os a second/,
  );
  assert.match(noSamplesReason(cell, kept({ budget: 0 }), false), /takes no samples \(started with --samples-budget 0\)/);
  assert.match(
    noSamplesReason(cell, kept({ since: T0 + 60 }), false),
    new RegExp(`no longer kept: the agent has them since ${formatClock(T0 + 60)}`),
  );
  assert.match(
    noSamplesReason({ from: T0, to: T0 + 120 }, kept({ since: T0 + 60 }), false),
    /before .* are no longer kept, and none of this cell's I\/Os after it/,
  );
  assert.match(noSamplesReason(cell, kept({ step: 10 }), false), /thinned to about 1 in 10 \(at most 200 a second, the slowest first\)/);
  assert.match(noSamplesReason(cell, kept({ since: null }), false), /not kept any sample yet/);
  assert.match(noSamplesReason(cell, undefined, false), /does not say which it still keeps/);
  assert.match(noSamplesReason(cell, kept({}), true), /in the snapshot/);
});

test("the agent's kept reaches the samples table's state with an empty answer", async () => {
  const kept: SamplesKept = { step: 10, since: T0 - 7200, budget: 500 };
  const asked: Omit<SamplesRequest, 'id'>[] = [];
  const client = {
    connected: true,
    hello: undefined,
    request: (msg: Omit<SamplesRequest, 'id'>): Promise<SamplesAnswer> => {
      asked.push(msg);
      return Promise.resolve({ t: 'samples', id: 1, samples: [], truncated: false, kept });
    },
  } as unknown as AgentSource;
  const h = dataHarness({ disks: [LOOP0], client });
  await h.dm.selectCells({
    dev: '7:0',
    from: T0,
    to: T0 + 1,
    bucketLo: 40,
    bucketHi: 40,
    schema: BUCKET_SCHEMA,
    kind: 'device',
    classes: [],
  });
  assert.ok(
    asked.some((m) => m.t === 'samples' && m.from === T0 && m.to === T0 + 1),
    JSON.stringify(asked),
  );
  const samples = h.store.getState().samples;
  assert.equal(samples.status, 'done');
  assert.deepEqual(samples.kept, kept);
  assert.match(noSamplesReason(cell, samples.kept, false), /thinned to about 1 in 10 \(at most 50 a second/);
});

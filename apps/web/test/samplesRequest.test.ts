// A cell picked under a cgroup filter or in a size × latency column asks the agent for exactly
// those samples (protocol 5: `cgroups`, `sizeClasses`), so the answer's limit and truncation are
// the query's; an older agent is asked without them and its answer filtered here, as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKET_SCHEMA, type HelloMessage, type IoSample, type SamplesAnswer, type SamplesRequest } from '@blkheat/shared-types';
import type { AgentSource } from '../src/pipeline/source.ts';
import { dataHarness, LOOP0 } from './fixtures/dataLayer.ts';

const T0 = 1_700_000_000;

function sample(cg: string, bytes: number, i: number): IoSample {
  return {
    ts_us: T0 * 1e6 + i,
    dev: '7:0',
    c: 'Read',
    sector: i * 8,
    bytes,
    q_ns: 1000,
    d_ns: 2_000_000,
    pid: 7,
    comm: 'fio',
    cgroup: 1,
    cg,
    outlier: false,
  };
}

/** An agent speaking `protocol` that answers every samples request with `answer`, and records what it was asked. */
function agentOf(protocol: number, answer: readonly IoSample[]): { client: AgentSource; asked: Omit<SamplesRequest, 'id'>[] } {
  const asked: Omit<SamplesRequest, 'id'>[] = [];
  const hello = { t: 'hello', protocol } as HelloMessage;
  const client = {
    connected: true,
    hello,
    request: (msg: Omit<SamplesRequest, 'id'>): Promise<SamplesAnswer> => {
      asked.push(msg);
      return Promise.resolve({ t: 'samples', id: 1, samples: answer, truncated: false });
    },
  } as unknown as AgentSource;
  return { client, asked };
}

const cell = { dev: '7:0', from: T0, to: T0 + 1, bucketLo: 40, bucketHi: 40, schema: BUCKET_SCHEMA, kind: 'device', classes: [] } as const;
const mixed = [sample('/backup', 4096, 1), sample('/web', 4096, 2), sample('/backup', 65536, 3)];

test('protocol 5: the cgroup and the size class go in the request, and the answer is listed as the agent filtered it', async () => {
  // The agent filters, so its answer is listed as it is: this stub does not filter, and all three
  // are listed (the page did not filter them again).
  const { client, asked } = agentOf(5, mixed);
  const h = dataHarness({ disks: [LOOP0], client });
  await h.dm.selectCells({ ...cell, cgroup: '/backup', sizeClass: 12 });
  const req = asked.find((m) => m.t === 'samples');
  assert.deepEqual([req?.cgroups, req?.sizeClasses, req?.limit], [['/backup'], [12], 2000]);
  assert.deepEqual(h.store.getState().samples.rows, mixed);
});

test('an agent before protocol 5 is asked without them, and its answer is filtered here', async () => {
  const { client, asked } = agentOf(4, mixed);
  const h = dataHarness({ disks: [LOOP0], client });
  await h.dm.selectCells({ ...cell, cgroup: '/backup', sizeClass: 12 });
  const req = asked.find((m) => m.t === 'samples');
  assert.equal(req?.cgroups, undefined);
  assert.equal(req?.sizeClasses, undefined);
  assert.deepEqual(h.store.getState().samples.rows, [mixed[0]], 'only /backup I/Os of at most 4 KiB');
});

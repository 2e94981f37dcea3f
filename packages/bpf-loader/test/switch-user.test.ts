// switchUser(uid, gid): the addon's way to give up root where Node refuses its own
// (CVE-2024-22017; the agent's service/drop-root.ts). Its arguments are checked before anything
// changes; done as root in a child process, every thread of it is the new user, with no
// capability left, and root cannot be taken back.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { BpfError, switchUser } from '../src/index.js';

test('switchUser refuses uids and gids that are not whole numbers in range, and changes nothing', () => {
  const before = [process.getuid?.(), process.getgid?.()];
  const cases: [unknown, unknown, RegExp][] = [
    [-1, 0, /uid must be an integer in \[0, 4294967294\]/],
    [4294967295, 0, /uid must be an integer/],
    [1.5, 0, /uid must be an integer/],
    ['65534', 0, /uid must be a number/],
    [65534, -2, /gid must be an integer/],
  ];
  for (const [uid, gid, message] of cases) {
    assert.throws(
      () => (switchUser as (u: unknown, g: unknown) => void)(uid, gid),
      (err: unknown) => err instanceof BpfError && err.code === 'EINVAL' && message.test(err.message),
      `${String(uid)}, ${String(gid)}`,
    );
  }
  assert.throws(() => (switchUser as (...a: unknown[]) => void)(1), /gid must be a number/);
  assert.deepEqual([process.getuid?.(), process.getgid?.()], before);
});

// A child with a worker thread (and libuv's pool) running: every thread must change, as with Node's own calls.
const CHILD = `
import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { switchUser } from ${JSON.stringify(new URL('../src/index.ts', import.meta.url).pathname)};
const worker = new Worker('setInterval(() => {}, 1000)', { eval: true });
await new Promise((resolve) => worker.once('online', resolve));
switchUser(65534, 65534);
const threads = readdirSync('/proc/self/task').map((tid) => {
  const s = readFileSync('/proc/self/task/' + tid + '/status', 'utf8');
  const field = (name) => new RegExp('^' + name + ':[ \\\\t]*(.*)$', 'm').exec(s)[1];
  return { uid: field('Uid'), gid: field('Gid'), groups: field('Groups'), capEff: field('CapEff'), capPrm: field('CapPrm') };
});
let back = 'kept';
try { switchUser(0, 0); back = 'regained'; } catch (err) { back = err.code; }
console.log(JSON.stringify({ threads, back }));
process.exit(0);
`;

test('as root, switchUser makes every thread of the process the user, with no capabilities, and root cannot be taken back', (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('SKIPPED LOUDLY: not root: switching user needs root');
    return;
  }
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as {
    threads: { uid: string; gid: string; groups: string; capEff: string; capPrm: string }[];
    back: string;
  };
  assert.ok(out.threads.length >= 3, `threads seen: ${out.threads.length}`);
  for (const th of out.threads) {
    assert.deepEqual(th, {
      uid: '65534\t65534\t65534\t65534',
      gid: '65534\t65534\t65534\t65534',
      groups: '',
      capEff: '0000000000000000',
      capPrm: '0000000000000000',
    });
  }
  assert.equal(out.back, 'EPERM', 'root was taken back');
  t.diagnostic(`${out.threads.length} threads, all uid/gid 65534 with no capabilities; switching back: ${out.back}`);
});

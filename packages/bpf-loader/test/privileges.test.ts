// Without root: every privileged call fails with a BpfError naming the missing privilege.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRoot, runUnprivileged } from '@blkheat/testkit';

test('as nobody (uid 65534): load and enableStats fail with EPERM naming the privilege', async (t) => {
  if (!isRoot()) {
    t.skip('SKIPPED LOUDLY: dropping privileges needs a root test run (this process is not root)');
    return;
  }
  const result = await runUnprivileged(new URL('./fixtures/unprivileged.ts', import.meta.url));
  assert.equal(result.code, 0, `child failed:\n${result.stderr}`);
  const report = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as {
    uid: number;
    euid: number;
    opened: number;
    load: { name: string; code: string; errno: number; op: string; message: string };
    enableStats: { name: string; code: string; errno: number; op: string; message: string };
    btf: unknown;
  };
  assert.equal(report.uid, 65534);
  assert.equal(report.euid, 65534);
  assert.equal(report.opened, 3, 'opening and inspecting an object file needs no privilege');

  assert.equal(report.load.name, 'BpfError');
  assert.equal(report.load.code, 'EPERM');
  assert.equal(report.load.errno, 1);
  assert.equal(report.load.op, 'load');
  assert.match(report.load.message, /loading BPF programs needs root \(CAP_BPF \+ CAP_PERFMON, or CAP_SYS_ADMIN on older kernels\)/);
  assert.match(report.load.message, /euid 65534 without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN/);

  assert.equal(report.enableStats.name, 'BpfError');
  assert.equal(report.enableStats.code, 'EPERM');
  assert.match(report.enableStats.message, /enabling BPF run-time statistics needs root \(CAP_SYS_ADMIN\)/);

  assert.equal(report.btf, true, 'kernel BTF is world-readable');
});

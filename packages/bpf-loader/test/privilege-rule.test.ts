// The privilege rule has one statement (src/privileges.ts); the native errors name the same
// rule. Pure: reads errors.cc's text, loads no addon and no BPF.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  CAP_BPF,
  CAP_PERFMON,
  CAP_SYS_ADMIN,
  effectiveCapabilities,
  missingTracingPrivilege,
  TRACING_PRIVILEGE,
} from '../src/privileges.js';

const bit = (cap: number): bigint => 1n << BigInt(cap);

test('the native EPERM hints for load and attach state the rule privileges.ts states', () => {
  const cc = readFileSync(new URL('../src/native/errors.cc', import.meta.url), 'utf8');
  assert.ok(cc.includes(`"loading BPF programs needs root (${TRACING_PRIVILEGE})"`), 'load hint');
  assert.ok(cc.includes(`"attaching BPF programs to tracepoints needs root (${TRACING_PRIVILEGE})"`), 'attach hint');
  assert.equal(
    cc.match(/if \(\(bpf && perfmon\) \|\| admin\) return "";/g)?.length,
    2,
    'load and attach need CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN',
  );
});

test('CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN, is enough; otherwise the message names what is missing', () => {
  assert.equal(missingTracingPrivilege(bit(CAP_BPF) | bit(CAP_PERFMON)), undefined);
  assert.equal(missingTracingPrivilege(bit(CAP_SYS_ADMIN)), undefined);
  assert.equal(missingTracingPrivilege(undefined), undefined, 'cannot tell: the kernel decides');
  const none = missingTracingPrivilege(0n);
  assert.match(
    none ?? '',
    /needs root \(CAP_BPF \+ CAP_PERFMON, or CAP_SYS_ADMIN on older kernels\); this process lacks CAP_BPF and CAP_PERFMON$/,
  );
  assert.match(missingTracingPrivilege(bit(CAP_BPF)) ?? '', /lacks CAP_PERFMON$/);
  assert.equal(effectiveCapabilities('Name:\tx\nCapEff:\t000000c000200000\n'), bit(CAP_BPF) | bit(CAP_PERFMON) | bit(CAP_SYS_ADMIN));
  assert.equal(effectiveCapabilities('Name:\tx\n'), undefined);
});

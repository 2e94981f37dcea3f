// The host's I/O pressure (collector/host/pressure.ts), without the kernel: fixture files in the
// format of /proc/pressure/io, rewritten between reads, and a scripted monotonic clock. Deltas of
// the `total=` counters per second; nothing for the first read, a counter that went back, reads
// too far apart, a missing file (said once in the log) or junk (a warning once, never a throw);
// and the frame of the newest second carries what was read.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { frameSchema } from '@blkheat/shared-types';
import { buildFrame } from '../src/collector/decode/frame-builder.js';
import { ClassNamer } from '../src/collector/decode/classes.js';
import { DeviceRegistry } from '../src/collector/host/devices.js';
import { MAX_INTERVAL_NS, parsePressure, PressureReader } from '../src/collector/host/pressure.js';
import { emptyHistValue } from '../src/collector/abi/layout.js';
import { ABI } from './lib/abi.js';
import { fakeSysfs } from './lib/fake-sysfs.js';

const SECOND = 1_000_000_000n;

/** The file's text, as the kernel writes it, for `total=` counters `some` and `full` (µs). */
const psiText = (some: number, full: number): string =>
  `some avg10=1.25 avg60=0.40 avg300=0.09 total=${some}\nfull avg10=0.50 avg60=0.10 avg300=0.02 total=${full}\n`;

interface Rig {
  readonly path: string;
  readonly reader: PressureReader;
  readonly logs: string[];
  readonly warnings: string[];
  /** Writes the file, moves the clock on by `dt` ns, and reads. */
  step(text: string, dt?: bigint): ReturnType<PressureReader['read']>;
}

function rig(t: TestContext, file = 'io'): Rig {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-psi-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, file);
  let now = 1000n * SECOND;
  const logs: string[] = [];
  const warnings: string[] = [];
  const reader = new PressureReader({ path, now: () => now, log: (l) => logs.push(l), warn: (m) => warnings.push(m) });
  return {
    path,
    reader,
    logs,
    warnings,
    step(text, dt = SECOND) {
      writeFileSync(path, text);
      now += dt;
      return reader.read();
    },
  };
}

test('parse: the two total= counters; junk says what is wrong', () => {
  assert.deepEqual(parsePressure(psiText(2010344203, 1239749737)), { some: 2010344203, full: 1239749737 });
  assert.deepEqual(
    parsePressure('full avg10=0 total=5\nsome total=7\nfuture avg10=1 total=x\n'),
    { some: 7, full: 5 },
    'order and other kinds of line do not matter',
  );
  for (const [text, problem] of [
    ['', 'no "some" line'],
    ['garbage\n\u0000\u0001', 'no "some" line'],
    ['some avg10=0.00 total=12\n', 'no "full" line'],
    ['some avg10=0.00 total=-3\nfull total=1\n', 'no whole "total=" on the "some" line'],
    ['some total=1.5\nfull total=1\n', 'no whole "total=" on the "some" line'],
    ['some total=1\nfull avg10=0.00\n', 'no whole "total=" on the "full" line'],
    ['some total=99999999999999999999\nfull total=1\n', 'no whole "total=" on the "some" line'],
    ['some total=1\nsome total=2\nfull total=1\n', 'two "some" lines'],
  ] as const) {
    assert.deepEqual(parsePressure(text), { problem }, JSON.stringify(text));
  }
});

test('per second: the counters deltas, nothing for the first read', (t) => {
  const r = rig(t);
  assert.equal(r.step(psiText(5_000_000, 1_000_000)), undefined, 'the first read has nothing to take a delta from');
  assert.deepEqual(r.step(psiText(5_420_000, 1_100_000)), { some_us: 420_000, full_us: 100_000 });
  assert.deepEqual(r.step(psiText(5_420_000, 1_100_000)), { some_us: 0, full_us: 0 }, 'no stall: zeros, not nothing');
  assert.deepEqual(r.step(psiText(6_420_000, 2_100_000)), { some_us: 1_000_000, full_us: 1_000_000 }, 'stalled the whole second');
  // A timer a little late: the stall is scaled to one second, never more than a second.
  assert.deepEqual(r.step(psiText(7_520_000, 2_100_000), (11n * SECOND) / 10n), { some_us: 1_000_000, full_us: 0 });
  assert.deepEqual(r.step(psiText(8_020_000, 2_200_000), SECOND / 2n), { some_us: 1_000_000, full_us: 200_000 }, 'scaled up');
  assert.deepEqual(r.step(psiText(8_020_333, 2_200_000), (3n * SECOND) / 2n), { some_us: 222, full_us: 0 }, 'rounded to whole µs');
  assert.deepEqual([r.logs, r.warnings], [[], []]);
});

test('a counter that went back (reset, wrap) or reads too far apart give nothing; the next second counts again', (t) => {
  const r = rig(t);
  r.step(psiText(5_000_000, 1_000_000));
  assert.equal(r.step(psiText(4_000_000, 1_000_500)), undefined, '"some" went back');
  assert.deepEqual(r.step(psiText(4_300_000, 1_000_600)), { some_us: 300_000, full_us: 100 }, 'from the new values on');
  assert.equal(r.step(psiText(4_400_000, 200)), undefined, '"full" went back');
  assert.deepEqual(r.step(psiText(4_400_010, 210)), { some_us: 10, full_us: 10 });
  assert.equal(r.step(psiText(4_500_010, 310), MAX_INTERVAL_NS + 1n), undefined, 'cannot say which second of the gap stalled');
  assert.deepEqual(r.step(psiText(4_500_020, 320), MAX_INTERVAL_NS), { some_us: 5, full_us: 5 }, 'at the limit: scaled to a second');
  assert.deepEqual([r.logs, r.warnings], [[], []], 'none of this is a problem to report');
});

test('a missing file (kernel without PSI): nothing, said once in the log, never read again', (t) => {
  const r = rig(t);
  for (let i = 0; i < 3; i++) assert.equal(r.reader.read(), undefined);
  assert.equal(r.reader.unavailable, true);
  assert.equal(r.logs.length, 1);
  assert.match(r.logs[0] as string, /no I\/O pressure \(.*: no such file: a kernel without PSI, or PSI off at boot\): frames carry no psi/);
  assert.deepEqual(r.warnings, [], 'not a warning: such kernels exist');
  // The file showing up later is not read: PSI is chosen at boot.
  assert.equal(r.step(psiText(1, 1)), undefined);
  assert.equal(r.step(psiText(2, 2)), undefined);
});

test('junk, then a good file: a warning once, never a throw, no delta across the junk', (t) => {
  const r = rig(t);
  assert.equal(r.step(psiText(100, 10)), undefined);
  assert.deepEqual(r.step(psiText(200, 20)), { some_us: 100, full_us: 10 });
  assert.equal(r.step('some avg10=0.00 avg60=0.00 avg300=0.00 total=300\n'), undefined, 'no "full" line');
  assert.equal(r.step('\u0000\u00ff not a pressure file at all'), undefined);
  assert.equal(r.warnings.length, 1, 'warned once');
  assert.match(
    r.warnings[0] as string,
    /is not as expected \(no "full" line\): no I\/O pressure in the seconds it cannot be read \(said once\)/,
  );
  assert.equal(r.step(psiText(400, 40)), undefined, 'the first good read after junk starts afresh');
  assert.deepEqual(r.step(psiText(450, 45)), { some_us: 50, full_us: 5 });
  assert.equal(r.warnings.length, 1);
  assert.equal(r.reader.unavailable, false);
  assert.deepEqual(r.logs, []);
});

test('a file that cannot be read (a directory here): a warning once, nothing, still tried each second', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'blkheat-psi-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const warnings: string[] = [];
  const reader = new PressureReader({ path: dir, warn: (m) => warnings.push(m) });
  assert.equal(reader.read(), undefined);
  assert.equal(reader.read(), undefined);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /cannot read .* \(.*EISDIR.*\)/);
  assert.equal(reader.unavailable, false);
});

test('the frame of the second carries the pressure read for it, a valid wire frame; none without', (t) => {
  const reg = new DeviceRegistry(fakeSysfs(t));
  const namer = new ClassNamer(new Map([['REQ_OP_READ', 0]]), ABI.classBits);
  const v = emptyHistValue(ABI);
  v.count = 3;
  v.device[40] = 3;
  const entries = [{ dev: (254 << 20) | 0, cls: 0, size: 12, cgroup: '/', value: v }];
  const psi = { some_us: 420_000, full_us: 100_000 };
  const busy = buildFrame(1795290000, entries, reg, namer, { partitions: false }, { psi });
  assert.deepEqual(busy.psi, psi);
  assert.equal(busy.disks[0]?.cls[0]?.n, 3);
  assert.equal(frameSchema.safeParse(busy).success, true);
  const idle = buildFrame(1795290001, [], reg, namer, { partitions: false }, { psi: { some_us: 7, full_us: 0 } });
  assert.deepEqual(idle, { ts: 1795290001, step: 1, disks: [], psi: { some_us: 7, full_us: 0 } }, 'an idle second keeps its pressure');
  assert.equal('psi' in buildFrame(1795290002, entries, reg, namer, { partitions: false }, {}), false, 'not known: no field');
});

test("this machine's own /proc/pressure/io, when it has one, reads in the format parsed here", (t) => {
  const reader = new PressureReader();
  assert.equal(reader.read(), undefined, 'first read');
  if (reader.unavailable) return t.skip('this kernel has no /proc/pressure/io');
  const got = reader.read();
  assert.ok(got, 'a second read gives the stall in between');
  for (const v of [got.some_us, got.full_us]) assert.ok(Number.isInteger(v) && v >= 0 && v <= 1_000_000, `${v} µs`);
});

// Per-host queries on demand (issue 30, 3): a range that names disks asks Prometheus for their
// hosts only (an instance matcher, escaped for any host name), and answers exactly what the
// whole fleet's range answers for those disks. Against the fleet rig's real Prometheus (no kernel).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prometheusUnavailable } from '@blkheat/testkit';
import type { DiskInfo, Frame } from '@blkheat/shared-types';
import { FleetDirectory } from '../src/fleet/fleet-disks.js';
import { hostMatcher } from '../src/fleet/fleet-frames.js';
import { eventually, startFleetRig } from './lib/fleet-rig.js';

const missing = prometheusUnavailable();

test('hostMatcher names the hosts of the disks asked, escaped; every host or an unknown disk: no matcher', () => {
  const dir = new FleetDirectory();
  dir.learn([
    { instance: 'db.1:9100', dev: '8:0', disk: 'sda' },
    { instance: 'db.1:9100', dev: '8:16', disk: 'sdb' },
    { instance: 'we"ird|host\\x', dev: '8:0', disk: 'sda' },
    { instance: 'web-2', dev: '259:0', disk: 'nvme0n1' },
  ]);
  const id = (instance: string, dev: string): string => dir.idOf(instance, dev) as string;
  assert.equal(hostMatcher(dir, {}), '');
  assert.equal(hostMatcher(dir, { disks: [id('db.1:9100', '8:0'), id('db.1:9100', '8:16')] }), '{instance=~"db\\\\.1:9100"}');
  assert.equal(
    hostMatcher(dir, { disks: [id('we"ird|host\\x', '8:0'), id('web-2', '259:0')] }),
    '{instance=~"we\\"ird\\\\|host\\\\\\\\x|web-2"}',
  );
  assert.equal(hostMatcher(dir, { disks: [id('web-2', '259:0'), '9:9'] }), '', 'a disk not known yet: ask for every host');
  assert.equal(hostMatcher(dir, { disks: dir.disks.map((d) => d.id) }), '', 'every host: no matcher');
});

test(
  'a range naming one host’s disk asks Prometheus for that host only, and answers what the whole fleet’s range has for it',
  { timeout: 120_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t) => {
    const rig = await startFleetRig(t);
    const base = rig.fleet.url;
    const disks = await eventually('three disks', async () => {
      const r = (await (await fetch(`${base}api/v1/disks`)).json()) as { disks: DiskInfo[] };
      return r.disks.length === 3 ? r.disks : undefined;
    });
    const slow = disks.find((d) => d.host === 'host-c');
    assert.ok(slow);
    const span = await eventually('a range with data', async () => {
      const to = Math.floor(Date.now() / 1000) - 5;
      const r = (await (await fetch(`${base}api/v1/range?from=${to - 30}&to=${to}`)).json()) as { frames: Frame[] };
      // host-c's own seconds: the other hosts' may be in while its scrapes are not yet.
      const slowSeconds = r.frames.filter((f) => f.disks.some((d) => d.dev === slow.dev)).length;
      return slowSeconds >= 5 ? { from: to - 30, to } : undefined;
    });
    const all = (await (await fetch(`${base}api/v1/range?from=${span.from}&to=${span.to}`)).json()) as { frames: Frame[] };
    const one = (await (await fetch(`${base}api/v1/range?from=${span.from}&to=${span.to}&disk=${slow.dev}`)).json()) as {
      frames: Frame[];
    };
    const onlySlow = (frames: readonly Frame[]): Frame[] =>
      frames.map((f) => ({ ...f, disks: f.disks.filter((d) => d.dev === slow.dev) })).filter((f) => f.disks.length > 0);
    assert.ok(onlySlow(one.frames).length >= 5);
    assert.deepEqual(onlySlow(one.frames), onlySlow(all.frames));
    assert.ok(
      one.frames.every((f) => f.disks.every((d) => d.dev === slow.dev)),
      'no other host in the answer',
    );
  },
);

// The page's alert (model/alert.ts): the loudest incident now, for the sticky header badge and
// the tab's title: the oldest stuck I/O or waiting bio of any disk, else failed I/Os in the
// newest second, else a history fault; nothing for a snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DiskFrame, Frame } from '@blkheat/shared-types';
import { pageAlert, pageTitle } from '../src/model/alert.ts';

const T0 = 1_700_000_000;
const names = new Map([
  ['7:0', 'loop0'],
  ['7:1', 'loop1'],
]);
const name = (dev: string): string => names.get(dev) ?? dev;
const frame = (...disks: DiskFrame[]): Frame => ({ ts: T0, step: 1, disks });
const inFlight = (dev: string, ageS: number): DiskFrame => ({
  dev,
  cls: [],
  inflight: {
    n: 1,
    oldest_ns: ageS * 1e9,
    ios: [{ c: 'Read', pid: 9, comm: 'dd', sector: 8, bytes: 4096, age_ns: ageS * 1e9, dev_age_ns: ageS * 1e9 }],
  },
});
const failing = (dev: string, n: number): DiskFrame => ({ dev, cls: [{ c: 'Read', n, d: [40, n], q: [], e: { IOERR: n } }] });

test('page alert: the oldest stuck I/O of any disk first, then failed I/Os, then a history fault; the title leads with it', () => {
  const fault = { startedAt: T0 - 60, historyFault: { message: 'ENOSPC', since: T0 - 10 } };
  const stuck = pageAlert(frame(inFlight('7:0', 3), inFlight('7:1', 12.3), failing('7:0', 2)), 'live', 1, name, fault);
  assert.deepEqual(stuck, { kind: 'stuck', text: 'stuck 12.3 s on loop1' });
  assert.equal(pageTitle(stuck, 'db1', false), '⚠ stuck 12.3 s on loop1 · blkheat · db1');
  const waiting: DiskFrame = {
    dev: '7:0',
    cls: [],
    inflight: { n: 0, oldest_ns: 0, ios: [], waiting: 5, oldest_wait_ns: 9e9, frozen: true },
  };
  assert.equal(pageAlert(frame(waiting), 'live', 1, name, undefined)?.text, 'stuck 9.00 s on loop0', 'bios waiting for a request count');
  assert.deepEqual(pageAlert(frame(inFlight('7:0', 0.5), failing('7:1', 3)), 'live', 1, name, fault), {
    kind: 'errors',
    text: '3 failed I/Os on loop1',
  });
  assert.deepEqual(pageAlert(frame(inFlight('7:0', 0.5)), 'live', 1, name, fault), { kind: 'history', text: 'history not recorded' });
  assert.equal(pageAlert(frame(inFlight('7:0', 0.5)), 'live', 1, name, { startedAt: T0 }), undefined, 'nothing stands out');
  assert.equal(pageTitle(undefined, 'db1', false), 'blkheat · db1');
  assert.equal(pageAlert(frame(inFlight('7:0', 30)), 'snapshot', 1, name, undefined), undefined, 'a snapshot is not now');
  assert.equal(pageTitle(undefined, 'db1', true), 'blkheat · db1 (snapshot)');
});

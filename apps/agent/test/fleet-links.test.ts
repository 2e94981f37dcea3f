// Links and the fleet row of a big fleet, on the directory alone (no Prometheus): with
// honor_labels a host finds its target by the instance its blkheat_build_info HELP names (as
// Prometheus' target metadata gives it), else by its scrapes' timestamps, and two targets
// Prometheus stamped with the same milliseconds name neither host (no wrong link); past 64 disks
// the fleet lists its fleet row first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FLEET_ROW_ID } from '@blkheat/shared-types';
import { FleetDirectory, linksOf, OVERVIEW_ABOVE_DISKS } from '../src/fleet/fleet-disks.js';
import type { PromSeries, PromTarget, PromTargetMetadata } from '../src/fleet/prometheus-api.js';
import { buildInfoHelp, instanceOfBuildInfoHelp } from '../src/server/instance-help.js';

const target = (address: string): PromTarget => ({
  labels: { instance: address, job: 'blkheat' },
  scrapeUrl: `http://${address}/metrics`,
  health: 'up',
  lastError: '',
});
const scrapedAt = (instance: string, ...times: number[]): PromSeries => ({
  metric: { instance },
  values: times.map((t) => [t, '1'] as const),
});

test('a host links to the target scraped at its timestamps; shared timestamps link no one', () => {
  const targets = ['10.0.0.1:7360', '10.0.0.2:7360', '10.0.0.3:7360', '10.0.0.4:7360'].map(target);
  const up = [
    scrapedAt('10.0.0.1:7360', 100.001, 115.001),
    scrapedAt('10.0.0.2:7360', 100.002, 115.002),
    // Two targets Prometheus stamped alike: the times say nothing about which host is which.
    scrapedAt('10.0.0.3:7360', 100.5, 115.5),
    scrapedAt('10.0.0.4:7360', 100.5, 115.5),
  ];
  const ends = [scrapedAt('db-1', 100.001, 115.001), scrapedAt('db-2', 100.002, 115.002), scrapedAt('db-3', 100.5, 115.5)];
  const links = linksOf(targets, ['db-1', 'db-2', 'db-3', '10.0.0.4:7360'], up, ends);
  assert.equal(links.get('db-1'), 'http://10.0.0.1:7360/');
  assert.equal(links.get('db-2'), 'http://10.0.0.2:7360/');
  assert.equal(links.has('db-3'), false, 'an ambiguous host gets no link, not a wrong one');
  assert.equal(links.get('10.0.0.4:7360'), 'http://10.0.0.4:7360/', "a target's own instance label names it");
});

test('a host links to the target whose blkheat_build_info HELP names it, though its scrape times are shared; a claim by two URLs links no one', () => {
  const targets = ['10.0.0.3:7360', '10.0.0.4:7360', '10.0.0.5:7360', '10.0.0.6:7360', '10.0.0.7:7360'].map(target);
  // Every target stamped alike: the times tell no one apart.
  const up = targets.map((t) => scrapedAt(t.labels.instance as string, 100.5, 115.5));
  const ends = ['db-3', 'db-4', 'db-5', 'db-6'].map((h) => scrapedAt(h, 100.5, 115.5));
  const named = (address: string, instance: string | undefined): PromTargetMetadata => ({
    target: { instance: address, job: 'blkheat' },
    help: buildInfoHelp(instance),
    type: 'gauge',
  });
  const metadata = [
    named('10.0.0.3:7360', 'db-3'),
    named('10.0.0.4:7360', 'db-4'),
    // Two agents given one --instance: neither target can be said to be db-5's.
    named('10.0.0.5:7360', 'db-5'),
    named('10.0.0.6:7360', 'db-5'),
    // An agent that sets no instance says none.
    named('10.0.0.7:7360', undefined),
    // A target Prometheus no longer lists names nothing.
    named('10.0.0.9:7360', 'db-6'),
  ];
  const links = linksOf(targets, ['db-3', 'db-4', 'db-5', 'db-6'], up, ends, metadata);
  assert.equal(links.get('db-3'), 'http://10.0.0.3:7360/');
  assert.equal(links.get('db-4'), 'http://10.0.0.4:7360/');
  assert.equal(links.has('db-5'), false, 'an instance two targets claim gets no link');
  assert.equal(links.has('db-6'), false, 'no claim by a listed target, and times shared: no link');
  assert.equal(links.size, 2);
});

test("the instance in blkheat_build_info's HELP reads back as written, whatever its text; other texts name none", () => {
  for (const instance of ['db-1', 'host "quoted" \\ back', 'πάνω.example:9100', ' spaced ', 'a.\n'])
    assert.equal(instanceOfBuildInfoHelp(buildInfoHelp(instance)), instance, JSON.stringify(instance));
  assert.equal(buildInfoHelp(undefined), 'Agent version and protocol version.', 'no --instance: the help of agents before it');
  for (const help of [
    buildInfoHelp(undefined),
    buildInfoHelp(''),
    'Agent version and protocol version. Its instance label: "x"',
    'anything',
  ])
    assert.equal(instanceOfBuildInfoHelp(help), undefined, help);
});

test('past OVERVIEW_ABOVE_DISKS disks the fleet is big: its fleet row is listed first; hosts number from 1', () => {
  const dir = new FleetDirectory();
  const hosts = Math.ceil(OVERVIEW_ABOVE_DISKS / 4);
  const disks = (from: number, to: number): Record<string, string>[] =>
    Array.from({ length: to - from }, (_, i) => from + i).flatMap((h) =>
      [0, 16, 32, 48].map((minor) => ({ __name__: 'blkheat_device_latency_seconds', instance: `h${h}`, dev: `8:${minor}`, class: 'Read' })),
    );
  dir.learn(disks(0, hosts));
  assert.equal(dir.disks.length, OVERVIEW_ABOVE_DISKS);
  assert.equal(dir.big, false);
  assert.ok(dir.diskInfos().every((d) => d.dev !== FLEET_ROW_ID));
  dir.learn(disks(hosts, hosts + 1));
  assert.equal(dir.big, true);
  const infos = dir.diskInfos();
  assert.deepEqual(infos[0], { dev: FLEET_ROW_ID, name: 'fleet/all disks', kind: 'request', present: true, host: 'fleet' });
  assert.equal(infos.length, OVERVIEW_ABOVE_DISKS + 5);
  assert.equal(dir.idOf('h0', '8:48'), '1:4');
  assert.equal(dir.seriesOf('h0'), 4);
  assert.equal(dir.unlinked(), hosts + 1);
});

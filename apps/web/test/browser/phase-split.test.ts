// Size × latency and the cgroup filter follow the phase on screen (protocol 4 splits the submit
// wait and total by size and cgroup), in headless chromium with the fake agent serving a known
// shape (fixtures/incident.ts: on loop0 every Read is 4 KiB and fast, every Write 1 MiB and slow,
// PG has the Reads and half the Writes, BACKUP the other Writes; fixtures/submitWait.ts: every
// I/O of loop0 waited WAIT_S for a request, and its sizes and cgroups carry that as a protocol 4
// agent sends it, without a queue phase). Under Total a BACKUP filter draws BACKUP's writes at
// their total latency and counts exactly BACKUP's I/Os; the size panel draws each size at its
// total. Under Queue, which this data does not split by size or cgroup, both say so and show
// what they can. BACKUP's own I/O pressure (cg_psi: 90 % of each second stalled) is the second
// pressure strip while it is filtered, and a line of the tooltip. Needs apps/web/dist and chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOfSeconds, type Frame } from '@blkheat/shared-types';
import { hook, idle, screenshot } from '@blkheat/testkit';
import { openSummed, skipWithoutDashboard } from '../fixtures/browser.ts';
import { startFakeAgent } from '../fixtures/fakeAgent.ts';
import { BACKUP, cgroupSums, FAST_S, LARGE_S, LOOP0, SLOW_S, SMALL_S, withIncident } from '../fixtures/incident.ts';
import { WAIT_S, withSubmitWait } from '../fixtures/submitWait.ts';
import { defaultDisks, syntheticSource, type SyntheticSource } from '../fixtures/synthetic.ts';
import { bucketBoundsSeconds } from '../../src/model/latency.ts';

/** BACKUP's I/O pressure: stalled this share of each second (`some`), two thirds of that every task (`full`). */
const BACKUP_STALL = 0.9;

/** The source with BACKUP's cg_psi in every frame, as a protocol 4 agent reads it. */
function withBackupPressure(base: SyntheticSource): SyntheticSource {
  const frame = (f: Frame): Frame => ({
    ...f,
    cg_psi: [{ g: BACKUP, some_us: Math.round(BACKUP_STALL * 1e6 * f.step), full_us: Math.round(0.6 * 1e6 * f.step) }],
  });
  return {
    ...base,
    frame: (ts) => frame(base.frame(ts)),
    frames: (from, to) => base.frames(from, to).map(frame),
    snapshot: (from, to, note) => {
      const snap = base.snapshot(from, to, note);
      return { ...snap, frames: snap.frames.map(frame) };
    },
  };
}

test(
  'size × latency and the cgroup filter follow the phase: total by size and cgroup, and what the data cannot split said',
  { timeout: 90_000 },
  async (t) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const source = withBackupPressure(withSubmitWait(withIncident(syntheticSource({ disks: defaultDisks(started - 260) }))));
    const agent = await startFakeAgent({ source });
    t.after(() => agent.close());
    const schema = source.schema;
    // The total of an I/O in device bucket b, as the fixture makes it: b's lower bound plus the wait.
    const totalBucket = (deviceS: number): number =>
      bucketOfSeconds(bucketBoundsSeconds(bucketOfSeconds(deviceS, schema), schema)[0] + WAIT_S, schema);
    const from = started - 200;
    const to = started - 80;

    const page = await openSummed(t, `${agent.url}?from=${from}&to=${to}&lat=total&cgroup=${encodeURIComponent(BACKUP)}`);
    const st = await hook(page).state();
    assert.deepEqual([st.kind, st.cgroup], ['total', BACKUP]);
    assert.equal(await page.locator('[data-testid=filter-bar]').getAttribute('data-applied'), 'true', 'total is split by cgroup');
    const range = st.summaryRange as { from: number; to: number };
    const backup = cgroupSums(source, LOOP0, range.from, range.to).get(BACKUP) ?? 0;
    assert.ok(backup > 0, 'BACKUP wrote in the range');
    assert.equal((await hook(page).counts())[LOOP0]?.histogram, backup, 'exactly BACKUP’s I/Os, at their total latency');
    const hist = await hook(page).histogram(LOOP0);
    assert.equal(hist[totalBucket(SLOW_S)], backup, 'every one of them in the bucket of their total (slow write + the wait)');
    assert.equal(hist[bucketOfSeconds(SLOW_S, schema)], 0, 'none at its device latency');

    // Size × latency under Total: each size at its own total, no "device time" fallback.
    assert.equal(await page.locator('[data-testid=size-device-only]').count(), 0);
    const sizes = await hook(page).sizeLatency(LOOP0);
    assert.ok(sizes, 'the size panel has loop0');
    const cellsOf = (s: number) => sizes.cells.filter((c) => c.s === s).map((c) => c.bucket);
    assert.deepEqual(cellsOf(SMALL_S), [totalBucket(FAST_S)], '4 KiB reads at their total');
    assert.deepEqual(cellsOf(LARGE_S), [totalBucket(SLOW_S)], '1 MiB writes at their total');
    assert.match((await page.locator('[data-testid=size-latency] .panel-head').textContent()) ?? '', /total latency/);

    // BACKUP's own I/O pressure: a second strip, beside the host's, while it is filtered.
    const cgRow = page.locator('[data-testid=cgroup-pressure-row]');
    await cgRow.waitFor({ timeout: 10_000 });
    assert.equal(await cgRow.getAttribute('data-cgroup'), BACKUP);
    assert.match((await cgRow.textContent()) ?? '', new RegExp(`cgroup ${BACKUP}`));
    const drawn = await hook(page).pressure(true);
    const shares = (drawn?.some ?? []).filter((v): v is number => v !== null);
    assert.ok(
      shares.length > 10 && shares.every((v) => Math.abs(v - BACKUP_STALL) < 1e-9),
      `BACKUP's strip: ${JSON.stringify(shares.slice(0, 5))}`,
    );
    const hot = await hook(page).hottestCell(LOOP0);
    assert.ok(hot);
    const c = await hook(page).cellCenter(LOOP0, hot.from, hot.bucket);
    assert.ok(c);
    await page.mouse.move(c.x, c.y);
    const line = page.locator('[data-testid=tooltip-cgroup-pressure]');
    await line.waitFor({ timeout: 5000 });
    assert.equal(Number(await line.getAttribute('data-some')), BACKUP_STALL);
    assert.equal((await line.textContent()) ?? '', `some 90.0%, full 60.0% (cgroup ${BACKUP}, its io.pressure)`);
    await screenshot(page, 'phase-split-total', 'web-browser');
    await page.mouse.move(0, 0);

    // Queue: this data has no queue phase by size or cgroup. The filter says it is not applied, and
    // the size panel that it shows device time.
    await page.click('[data-testid=kind-queue]');
    await idle(page);
    assert.equal(await page.locator('[data-testid=filter-bar]').getAttribute('data-applied'), 'false');
    assert.match(
      (await page.locator('[data-testid=filter-not-applied]').textContent()) ?? '',
      /Queue latency is not split by cgroup in this data/,
    );
    assert.match(
      (await page.locator('[data-testid=size-device-only]').textContent()) ?? '',
      /^device time: this panel has no per-size queue latency data$/,
    );
    assert.equal(await cgRow.count(), 1, 'the cgroup’s pressure is drawn whatever the phase');
    const queued = await hook(page).sizeLatency(LOOP0);
    assert.deepEqual(
      queued?.cells.filter((c) => c.s === LARGE_S).map((c) => c.bucket),
      [bucketOfSeconds(SLOW_S, schema)],
      'device latency, as the panel says',
    );
  },
);

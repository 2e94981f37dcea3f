// The throughput strip under each heat map, in headless chromium with the fake agent: frames
// whose loop0 carries known bytes (64 KiB per I/O) and I/Os in flight (ts mod 7) draw IOPS,
// MB/s and in-flight values per column equal to those of the frames, while vda (old data: no
// `b`, no `inflight`) reports no data, never 0, in its values and its lanes' captions. The
// pixels agree: at the x of a heat map column (the same x mapping) the in-flight lane is filled
// for 6 in flight and empty for 0, read while live seconds have slid the bars (only the new columns
// painted). The tooltip shows the hovered column's values. Needs
// apps/web/dist and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { DiskFrame, Frame } from '@blkheat/shared-types';
import { hook, type Hooked, idle, screenshot } from '@blkheat/testkit';
import { openFakeAgent, skipWithoutDashboard } from '../fixtures/browser.ts';
import { defaultDisks, syntheticSource, type SyntheticSource } from '../fixtures/synthetic.ts';
import { THROUGHPUT_KEYS } from '../../src/model/throughput.ts';

const LOOP0 = '7:0';
const VDA = '253:0';
const BYTES_PER_IO = 65_536;
const inflightAt = (ts: number): number => ts % 7;

/** loop0 with bytes and in-flight counts (protocol 3), the other disks as old data. */
function withThroughput(base: SyntheticSource): SyntheticSource {
  const disk = (d: DiskFrame, ts: number): DiskFrame =>
    d.dev !== LOOP0
      ? d
      : { ...d, cls: d.cls.map((c) => ({ ...c, b: c.n * BYTES_PER_IO })), inflight: { n: inflightAt(ts), oldest_ns: 1e6, ios: [] } };
  const frame = (f: Frame): Frame => {
    const disks = f.disks.map((d) => disk(d, f.ts));
    // A second loop0 was idle still reports what was in flight (the agent keeps such a disk).
    if (!disks.some((d) => d.dev === LOOP0) && inflightAt(f.ts) > 0) disks.push(disk({ dev: LOOP0, cls: [] }, f.ts));
    return { ...f, disks };
  };
  return { ...base, frame: (ts) => frame(base.frame(ts)), frames: (from, to) => base.frames(from, to).map(frame) };
}

/** I/Os of `dev` the source completed in [ts, ts + step) (classes diskstats counts). */
function completed(src: SyntheticSource, dev: string, ts: number, step: number): number {
  let n = 0;
  for (let s = ts; s < ts + step; s++) for (const c of src.frame(s).disks.find((d) => d.dev === dev)?.cls ?? []) if (!c.pt) n += c.n;
  return n;
}

test(
  'throughput strip: IOPS, MB/s and in flight per column, no data for old data, pixels on the heat map x',
  { timeout: 90_000 },
  async (t: TestContext) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const source = withThroughput(syntheticSource({ disks: defaultDisks(started - 260) }));
    const { agent, page } = await openFakeAgent(t, { source });
    await page.goto(agent.url);
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat?.state().mode === 'live', undefined, { timeout: 20_000 });
    await page.waitForFunction((dev) => ((globalThis as unknown as Hooked).__blkheat.throughput(dev)?.iops.length ?? 0) > 30, LOOP0, {
      timeout: 20_000,
    });
    await idle(page);

    const loop = await hook(page).throughput(LOOP0);
    assert.ok(loop, 'loop0 has a strip');
    const step = loop.step;
    let checked = 0;
    for (let i = 0; i < loop.iops.length; i++) {
      const ts: number = loop.from + i * step;
      if (loop.iops[i] === null || ts + step > started) continue; // not arrived yet, or a live column still filling
      const n = completed(source, LOOP0, ts, step);
      assert.ok(Math.abs((loop.iops[i] as number) - n / step) < 1e-9, `IOPS at ${ts}: ${loop.iops[i]} vs ${n / step}`);
      assert.ok(Math.abs((loop.mbps[i] as number) - (n * BYTES_PER_IO) / step / 1e6) < 1e-9, `MB/s at ${ts}: ${loop.mbps[i]}`);
      let worst = 0;
      for (let x = ts; x < ts + step; x++) worst = Math.max(worst, inflightAt(x));
      assert.equal(loop.queue[i], worst, `in flight at ${ts}`);
      checked++;
    }
    assert.ok(checked >= 30, `${checked} columns checked`);
    assert.equal(loop.scales.queue, 6, 'the in-flight lane is scaled to its largest value');
    assert.match(loop.captions.queue, /^in flight ≤ 6$/, 'its caption says so');
    assert.match(loop.captions.mbps, /^MB\/s ≤ \d/, 'loop0 has byte counts: its MB/s caption is a scale');

    const vda = await hook(page).throughput(VDA);
    assert.ok(vda, 'vda has a strip');
    const rec = vda.iops.map((v, i) => (v !== null ? i : -1)).filter((i) => i >= 0);
    assert.ok(rec.length >= 30 && rec.some((i) => (vda.iops[i] as number) > 0), 'vda has IOPS');
    for (const i of rec) {
      assert.equal(vda.mbps[i], null, 'no bytes in the data: MB/s is no data, not 0');
      assert.equal(vda.queue[i], null, 'no in-flight counts in the data: no data, not 0');
    }
    // The captions say so too: "≤ 0" read as a measured zero (the fleet row's strips said it).
    assert.deepEqual(
      { mbps: vda.captions.mbps, queue: vda.captions.queue, oldest: vda.captions.oldest },
      { mbps: 'MB/s: no data', queue: 'in flight: no data', oldest: 'oldest in flight: no data' },
      'vda: lanes without data are captioned so',
    );
    assert.match(vda.captions.iops, /^IOPS ≤ \d/, 'vda has IOPS: a scale');

    // Pixels, at the x of heat map columns: the in-flight lane full for 6, empty for 0.
    const lane = THROUGHPUT_KEYS.indexOf('queue');
    const laneMid = (lane + 0.5) / THROUGHPUT_KEYS.length; // lanes are equal bands, top to bottom
    if (step === 1) {
      const cols = loop.queue.map((q, i) => ({ q, ts: loop.from + i }));
      const pick = (q: number): number | undefined => cols.slice(Math.floor(cols.length / 3), -3).find((c) => c.q === q)?.ts;
      const full = pick(6);
      const empty = pick(0);
      assert.ok(full !== undefined && empty !== undefined, 'columns with 6 and 0 in flight in view');
      // Read while the live bars are slid (painted for a wider window, only new columns painted
      // since, shifted left by a transform): the pixels must still sit on the heat map's x.
      const readPixels = () =>
        page.evaluate(
          ({ dev, full, empty, laneMid }) => {
            const blkheat = (globalThis as unknown as Hooked).__blkheat;
            const hot = blkheat.hottestCell(dev);
            if (!hot) return undefined;
            const doc = (
              globalThis as unknown as {
                document: {
                  querySelector(
                    q: string,
                  ): { getBoundingClientRect(): { top: number; height: number }; style: { transform: string } } | null;
                };
              }
            ).document;
            const bars = doc.querySelector('[data-testid="throughput-loop0"]');
            const read = (ts: number) => {
              const c = blkheat.cellCenter(dev, ts, hot.bucket);
              const r = bars?.getBoundingClientRect();
              if (!c || !r) return undefined;
              return blkheat.throughputPixelAt(dev, c.x, r.top + r.height * laneMid);
            };
            return { full: read(full), empty: read(empty), painted: blkheat.throughput(dev)?.painted, slid: bars?.style.transform ?? '' };
          },
          { dev: LOOP0, full, empty, laneMid },
        );
      let px = await readPixels();
      for (let tries = 0; tries < 40 && !(px?.painted === 'incremental' && px.slid !== ''); tries++) {
        await page.waitForTimeout(250);
        px = await readPixels();
      }
      assert.ok(px?.full && px.empty, `pixels read: ${JSON.stringify(px)}`);
      assert.equal(px.painted, 'incremental', 'live seconds paint only the new columns of the bars');
      assert.match(px.slid, /^translateX\(-\d+(\.\d+)?px\)$/, 'and slide the rest');
      assert.ok(px.full[3] > 200, `6 in flight: the lane is filled (${px.full})`);
      assert.equal(px.empty[3], 0, `0 in flight: nothing drawn (${px.empty})`);
    }
    await screenshot(page, 'throughput-strip', 'web-browser');

    // The tooltip of a hovered cell names the column's three values.
    const hot = await hook(page).hottestCell(LOOP0);
    assert.ok(hot);
    const c = await hook(page).cellCenter(LOOP0, hot.from, hot.bucket);
    assert.ok(c);
    await page.mouse.move(c.x, c.y);
    await page.waitForSelector('[data-testid=tooltip-queue]', { timeout: 5000 });
    // The tooltip stays on the second it was opened over while live columns scroll on, so the
    // second is read from the tooltip itself, not recomputed from the pointer's x.
    const shownTs = Number(await page.locator('[data-testid=tooltip-time]').getAttribute('data-ts'));
    assert.ok(Number.isInteger(shownTs) && Math.abs(shownTs - hot.from) <= 2, `tooltip second ${shownTs} near ${hot.from}`);
    assert.equal(await page.locator('[data-testid=tooltip-queue]').textContent(), String(inflightAt(shownTs)));
  },
);

// Honest numbers (issue 29) in headless chromium with the fake agent, over a fixed two-minute
// range of known data: beside the usual disks, loop1 did one read of 32.2 s (the agent kept its
// sample record) and loop2 one of 50 s (no record). loop2's percentiles read "≤ 53.8 s", the top
// of its bucket; loop1's read "32.2 s", the sampled I/O's own latency, not its bucket's top. Rates
// are over the whole range and say so, with the busiest second beside them. The worst-disk line
// names loop2, then loop1, and a disk with an I/O stuck now before both. The op-class table split
// per disk shows each disk's own p50. Screenshot in artifacts/web-browser/. Needs apps/web/dist
// and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import {
  bucketCount,
  bucketOfSeconds,
  conservedCount,
  type DiskFrame,
  type DiskInfo,
  type Frame,
  type IoSample,
  quantileBucket,
  upperBoundSeconds,
} from '@blkheat/shared-types';
import { hook, idle, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { formatCount, formatRate, formatSpan } from '../../src/model/format.ts';
import { formatLatency } from '../../src/model/latency.ts';
import { openFakeAgent, type Page, skipWithoutDashboard } from '../fixtures/browser.ts';
import { type Hang, LOOP0, withIncidents } from '../fixtures/incidents.ts';
import { defaultDisks, syntheticSource, type SyntheticSource } from '../fixtures/synthetic.ts';

const VDA = '253:0';
const LOOP1: DiskInfo = { dev: '7:1', name: 'loop1', kind: 'request', present: true, sizeBytes: 2 ** 26 };
const LOOP2: DiskInfo = { dev: '7:2', name: 'loop2', kind: 'request', present: true, sizeBytes: 2 ** 26 };
/** loop1's one read (sampled) and loop2's (not), seconds. */
const SAMPLED_READ_S = 32.2;
const UNSAMPLED_READ_S = 50;

type Range = { readonly from: number; readonly to: number };

/** One read of `seconds` on `dev`; `dropped`: no sample record kept of it. */
function slowRead(dev: string, seconds: number, dropped: boolean): DiskFrame {
  return {
    dev,
    cls: [{ c: 'Read', n: 1, b: 4096, d: [bucketOfSeconds(seconds), 1], q: [bucketOfSeconds(2e-6), 1] }],
    ...(dropped ? { dropped: 1 } : {}),
  };
}

/** The default source, plus loop1's sampled 32.2 s read at `at1` and loop2's unsampled 50 s read at `at2`. */
function withSlowReads(base: SyntheticSource, at1: number, at2: number): SyntheticSource {
  const frame = (f: Frame): Frame =>
    f.ts === at1
      ? { ...f, disks: [...f.disks, slowRead(LOOP1.dev, SAMPLED_READ_S, false)] }
      : f.ts === at2
        ? { ...f, disks: [...f.disks, slowRead(LOOP2.dev, UNSAMPLED_READ_S, true)] }
        : f;
  const record: IoSample = {
    ts_us: at1 * 1e6 + 250_000,
    dev: LOOP1.dev,
    c: 'Read',
    sector: 2048,
    bytes: 4096,
    q_ns: 2000,
    d_ns: Math.round(SAMPLED_READ_S * 1e9),
    pid: 4242,
    comm: 'slowread',
    cgroup: 1,
    outlier: true,
  };
  const withRecord = (from: number, to: number, samples: IoSample[]): IoSample[] =>
    at1 >= from && at1 < to ? [...samples, record].sort((a, b) => a.ts_us - b.ts_us) : samples;
  return {
    ...base,
    disks: [...base.disks, LOOP1, LOOP2],
    frame: (ts) => frame(base.frame(ts)),
    frames: (from, to) => base.frames(from, to).map(frame),
    samples: (ts) => withRecord(ts, ts + 1, base.samples(ts)),
    samplesIn: (from, to) => withRecord(from, to, base.samplesIn(from, to)),
  };
}

/** The source's dense device-latency histogram of class `c` over `r`, summed over `devs`. */
function classHist(src: SyntheticSource, devs: readonly string[], c: string, r: Range): number[] {
  const h = new Array<number>(bucketCount(src.schema)).fill(0);
  for (const f of src.frames(r.from, r.to))
    for (const d of f.disks)
      if (devs.includes(d.dev))
        for (const cls of d.cls)
          if (cls.c === c)
            for (let i = 0; i < cls.d.length; i += 2) h[cls.d[i] as number] = (h[cls.d[i] as number] as number) + (cls.d[i + 1] as number);
  return h;
}

/** "≤ X": the top of the bucket holding the p50 of a histogram, as the page writes a bound. */
function p50Bound(h: readonly number[], src: SyntheticSource): string {
  return `≤ ${formatLatency(upperBoundSeconds(quantileBucket(h, 0.5) as number, src.schema))}`;
}

/** The p50 cell of an op-class table row (cells: I/Os, errors, p50, p99). */
async function p50Cell(page: Page, row: string): Promise<string> {
  return ((await page.locator(`[data-testid="class-row-${row}"] td.num`).nth(2).textContent()) ?? '').trim();
}

test(
  'honest numbers: percentiles as bounds or exact, rates over the range with a peak, the worst disk named, op classes per disk',
  { timeout: 90_000 },
  async (t: TestContext) => {
    if (skipWithoutDashboard(t)) return;
    const started = Math.floor(Date.now() / 1000);
    const range = { from: started - 150, to: started - 30 };
    let hang: Hang = { start: Infinity, done: Infinity };
    const source = withIncidents(
      withSlowReads(syntheticSource({ disks: defaultDisks(started - 260) }), started - 100, started - 90),
      () => hang,
    );
    const { agent, session: s, page } = await openFakeAgent(t, { source });
    await page.goto(`${agent.url}?from=${range.from}&to=${range.to}&disks=vda,loop0,zram0,loop1,loop2`);
    await waitLive(page);
    await idle(page);
    const st = await hook(page).state();
    assert.deepEqual(st.summaryRange, range, 'the summary is of the range in the link');

    // 1. loop1's one read was sampled: every percentile is its exact latency, no "≤".
    const q = (name: string, label: string) => page.locator(`[data-testid="disk-quantiles-${name}"] .q-${label.replace('.', '')}`);
    await page.locator('[data-testid="disk-quantiles-loop1"] .q-p99[data-kind=exact]').waitFor({ timeout: 10_000 });
    await idle(page);
    const exact = formatLatency(SAMPLED_READ_S);
    assert.equal(exact, '32.2 s');
    for (const label of ['p50', 'p90', 'p99', 'p99.9']) assert.equal(await q('loop1', label).innerText(), `${label} ${exact}`);
    assert.match((await page.locator('[data-testid="disk-stats-loop1"]').innerText()) ?? '', / · p99 32\.2 s( ·|$)/);
    assert.match((await page.locator('[data-testid="histogram-loop1"]').getAttribute('aria-label')) ?? '', /p99 32\.2 s/);
    assert.equal((await hook(page).percentiles(LOOP1.dev)).p99, SAMPLED_READ_S);

    // 2. loop2's read has no record: a bound, the top of its bucket (not 50 s, not a guess in it).
    const bound = `≤ ${formatLatency(upperBoundSeconds(bucketOfSeconds(UNSAMPLED_READ_S), source.schema))}`;
    assert.equal(bound, '≤ 53.8 s');
    for (const label of ['p50', 'p99']) {
      assert.equal(await q('loop2', label).getAttribute('data-kind'), 'bound');
      assert.equal(await q('loop2', label).innerText(), `${label} ${bound}`);
    }
    assert.match((await page.locator('[data-testid="disk-stats-loop2"]').innerText()) ?? '', / · p99 ≤ 53\.8 s( ·|$)/);

    // 3. Rates: per second over the whole range (idle seconds too), saying over how long, and the
    // busiest second beside them. loop1's one read is 1 in 120 s, not 1 in the one second it took.
    const seconds = range.to - range.from;
    const frames = source.frames(range.from, range.to);
    for (const [dev, name] of [
      [VDA, 'vda'],
      [LOOP1.dev, 'loop1'],
    ] as const) {
      const perSecond = frames.map((f) => {
        const d = f.disks.find((x) => x.dev === dev);
        return d ? conservedCount(d) : 0;
      });
      const n = perSecond.reduce((a, v) => a + v, 0);
      const want = `${formatCount(n)} I/Os · ${formatRate(n / seconds)}/s over ${formatSpan(seconds)} · peak ${formatRate(Math.max(...perSecond))}/s`;
      const text = (await page.locator(`[data-testid="disk-stats-${name}"]`).innerText()) ?? '';
      t.diagnostic(`${name}: "${text}"`);
      assert.ok(text.startsWith(want), `${name}: "${text}" starts with "${want}"`);
    }
    assert.ok(
      ((await page.locator('[data-testid="disk-stats-loop1"]').innerText()) ?? '').startsWith('1 I/Os · 0.00833/s over 2 min · peak 1/s'),
    );

    // 4. The worst disk: loop2 (p99 ≤ 53.8 s), then loop1 (32.2 s exact).
    const worst = (i: number) => page.locator(`[data-testid="worst-disk-${i}"]`);
    assert.equal(await worst(0).getAttribute('data-dev'), LOOP2.dev);
    assert.equal(((await worst(0).textContent()) ?? '').trim(), 'loop2 p99 ≤ 53.8 s');
    assert.equal(await worst(1).getAttribute('data-dev'), LOOP1.dev);
    assert.equal(((await worst(1).textContent()) ?? '').trim(), '› loop1 p99 32.2 s');
    assert.match((await page.locator('[data-testid="worst-disks"]').textContent()) ?? '', /^worst in view:/);

    // 5. The op-class table: together, Read's p50 is the busy vda's; per disk, each disk its own.
    const shownDevs = [VDA, LOOP0, '252:0', LOOP1.dev, LOOP2.dev];
    assert.equal(await p50Cell(page, 'Read'), p50Bound(classHist(source, shownDevs, 'Read', range), source));
    assert.equal(await page.locator('[data-testid="class-row-loop0-Read"]').count(), 0, 'not split yet');
    await page.click('[data-testid=class-split]');
    await page.locator('[data-testid="class-row-loop0-Read"]').waitFor({ timeout: 5000 });
    assert.equal(await page.locator('[data-testid=class-split]').getAttribute('aria-pressed'), 'true');
    const loop0 = await p50Cell(page, 'loop0-Read');
    const vda = await p50Cell(page, 'vda-Read');
    t.diagnostic(`Read p50: loop0 ${loop0}, vda ${vda}`);
    assert.equal(loop0, p50Bound(classHist(source, [LOOP0], 'Read', range), source), "loop0's own p50");
    assert.equal(vda, p50Bound(classHist(source, [VDA], 'Read', range), source), "vda's own p50");
    assert.notEqual(loop0, vda, "loop0's slow reads no longer hide under vda's");
    const loop1Bound = `≤ ${formatLatency(upperBoundSeconds(bucketOfSeconds(SAMPLED_READ_S), source.schema))}`;
    assert.equal(loop1Bound, '≤ 38.1 s');
    assert.equal(await p50Cell(page, 'loop1-Read'), loop1Bound, "loop1's class row: its bucket's top (the tables show bounds)");
    await screenshot(page, 'honest-numbers', 'web-browser');

    // 6. An I/O stuck now on loop0 puts it first.
    const S = Math.floor(Date.now() / 1000) + 1.4;
    hang = { start: S, done: Math.floor(S) + 60 };
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { document: { querySelector(q: string): { getAttribute(a: string): string | null } | null } }).document
          .querySelector('[data-testid="worst-disk-0"]')
          ?.getAttribute('data-dev') === '7:0',
      undefined,
      { timeout: 15_000 },
    );
    assert.match(((await worst(0).textContent()) ?? '').trim(), /^loop0 stuck \d+(\.\d+)? s · p99 ≤ [\d.]+ (µs|ms)/);
    assert.equal(await worst(1).getAttribute('data-dev'), LOOP2.dev);
    assert.deepEqual(unexpectedErrors(s), []);
  },
);

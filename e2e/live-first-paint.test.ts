// A fresh live page, and the same page reloaded, never show an old window as live (issue 29), on
// the real agent with real I/O: the agent has recorded a loop device read at a steady pace for
// well over the view's span before the page opens. From the first animation frame it paints on,
// every state the page shows is sampled: the view stands at the agent's now, the heat maps (the
// data window) and the row heads and side histograms (the summary) read seconds of that window.
// Once settled, every number the disk's row shows is checked against the agent's own range
// answer for the window shown (GET /api/v1/range): the I/O count, the histogram bucket by bucket,
// and p50/p99 within the bucket the answer puts them in. The apps/web browser test live-edge does
// the same against a fake agent with ten minutes of history and a slow backfill.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { lowerBoundSeconds, quantileBucket, upperBoundSeconds } from '@blkheat/shared-types';
import { createLoopDevice, hook, idle, launchFor, paintedStates, paintedViolations, samplePaintedStates, waitLive } from '@blkheat/testkit';
import { backgroundFio, canRun, shot, startAgent } from './lib/dashboard.ts';
import { agentRange, histogramOf } from './drill/truth.ts';

const SPAN_S = 30;
/** Recorded before the page opens: longer than the view, so an old window would show. */
const RECORDED_S = 45;

/** Every painted state of the page so far fits the rules in the file's header. */
async function checkPainted(t: TestContext, page: Page, what: string): Promise<void> {
  const seen = await paintedStates(page);
  const { stale, late, outside, text } = paintedViolations(seen);
  t.diagnostic(`${what}: ${seen.length} painted states; first ${text(seen.slice(0, 1))}; last ${text(seen.slice(-1))}`);
  assert.ok(seen.length > 50, `${what}: ${seen.length} painted states sampled`);
  assert.deepEqual(stale.length, 0, `${what}: the view stood more than 3 s before now: ${text(stale)}`);
  assert.deepEqual(late.length, 0, `${what}: the heat maps showed a window before the view: ${text(late)}`);
  assert.deepEqual(outside.length, 0, `${what}: row heads and histograms read seconds outside the view: ${text(outside)}`);
}

/** The disk's numbers on screen against the agent's range answer for the summary's seconds. */
async function checkNumbers(t: TestContext, page: Page, agentUrl: string, dev: string, what: string): Promise<void> {
  await idle(page);
  const h = hook(page);
  const st = await h.state();
  const range = st.summaryRange;
  assert.ok(range, `${what}: the page has summed a range`);
  assert.equal(st.kind, 'total', `${what}: the page shows total latency (the agent times from submission)`);
  const [counts, shown, percentiles] = await Promise.all([h.counts(), h.histogram(dev), h.percentiles(dev)]);
  const answer = await agentRange(agentUrl, range.from, range.to, [dev]);
  const truth = histogramOf(answer.frames, dev, 'total', range.from, range.to);
  const n = truth.reduce((a, b) => a + b, 0);
  t.diagnostic(`${what}: [${range.from}, ${range.to}) ${n} I/Os; page p50 ${percentiles['p50']} s, p99 ${percentiles['p99']} s`);
  assert.ok(n > (range.to - range.from) * 100, `${what}: the range holds the reads (${n})`);
  assert.equal(counts[dev]?.histogram, n, `${what}: the row's I/O count is the agent's`);
  assert.deepEqual(shown, truth, `${what}: the side histogram is the agent's, bucket by bucket`);
  for (const [label, q] of [
    ['p50', 0.5],
    ['p99', 0.99],
  ] as const) {
    const bucket = quantileBucket(truth, q);
    const got = percentiles[label];
    assert.ok(bucket !== undefined && got !== undefined, `${what}: ${label} shown and known`);
    assert.ok(
      got >= lowerBoundSeconds(bucket) * 0.999 && got <= upperBoundSeconds(bucket) * 1.001,
      `${what}: ${label} ${got} s outside the agent's bucket ${bucket} [${lowerBoundSeconds(bucket)}, ${upperBoundSeconds(bucket)}] `,
    );
  }
}

test(
  `a fresh live page and a reload stand at now from the first paint; the row's numbers are the agent's range answer`,
  { timeout: 240_000 },
  async (t) => {
    if (!canRun(t, { fio: true })) return;
    const loop = createLoopDevice({ sizeMiB: 64, t });
    const agent = await startAgent(t, ['--disk', loop.name]);
    backgroundFio(t, loop.path, ['--rw=randread', '--bs=4k', '--direct=1', '--rate_iops=400', '--size=60M']);
    await new Promise((resolve) => setTimeout(resolve, RECORDED_S * 1000));

    const { page } = await launchFor(t, { width: 1400, height: 1000, colorScheme: 'dark' });
    await samplePaintedStates(page);
    await page.goto(`${agent.url}?live=${SPAN_S}`);
    await waitLive(page, 30_000);
    await page.waitForTimeout(5000);
    await checkPainted(t, page, 'fresh page');
    await checkNumbers(t, page, agent.url, loop.dev, 'fresh page');
    await shot(page, 'live-first-paint');

    // The same page reloaded: its sampler starts again with the new document.
    await page.reload();
    await waitLive(page, 30_000);
    await page.waitForTimeout(5000);
    await checkPainted(t, page, 'reloaded');
    await checkNumbers(t, page, agent.url, loop.dev, 'reloaded');
    await shot(page, 'live-first-paint-reloaded');
  },
);

// A fleet range's last column when the hosts are scraped at different intervals: a host's
// difference that starts in the last column ends with its next scrape, which can come up to the
// coarsest interval after the range's end. The fleet server once looked only two of the finest
// intervals past it (5 s hosts beside 15 s ones: 12 s), and a 15 s host scraped 14 s into its
// column read as no I/O there: the page's newest column after it asked its frames again
// (fleet-live-browser.test.ts caught it in 2 of 8 runs against the real Prometheus). Here a
// stand-in Prometheus answers raw samples by the window asked, with the host's scrapes placed
// where the old window missed one, so the check fails every time the window is short.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BUCKET_SCHEMA, lowerBoundSeconds, upperBoundSeconds } from '@blkheat/shared-types';
import { FleetDirectory } from '../src/fleet/fleet-disks.js';
import { fleetFrames } from '../src/fleet/fleet-frames.js';
import type { PromSeries } from '../src/fleet/prometheus-api.js';
import { PrometheusApi } from '../src/fleet/prometheus-api.js';
import { DEVICE_LATENCY_METRIC, QUEUE_LATENCY_METRIC, WINDOW_END_METRIC } from '../src/server/metrics.js';

const STEP = 15;
const C = 1_700_000_100; // a multiple of 15
/** The host is scraped this long into each 15 s column (its window ends there too). */
const INTO_COLUMN_S = 14;
/** One I/O a scrape, in this dense bucket (device and queue latency alike). */
const BUCKET = 20;
const INSTANCE = 'host-15s:9400';

/** The host's scrapes: times (its window ends) and cumulative I/O counts, from well before C to well after the range. */
const scrapes = Array.from({ length: 10 }, (_, i) => ({ at: C + (i - 3) * STEP + INTO_COLUMN_S, total: i + 1 }));

function histogramAt(total: number): { count: string; buckets: [number, string, string, string][] } {
  return { count: String(total), buckets: [[0, String(lowerBoundSeconds(BUCKET)), String(upperBoundSeconds(BUCKET)), String(total)]] };
}

/** Answers `name[Ns]` at `time` with the scrapes in (time - N, time], as Prometheus does. */
async function standIn(t: TestContext): Promise<string> {
  const server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const m = /^(\w+)(\{[^}]*\})?\[(\d+)s\]$/.exec(q.get('query') ?? '');
    const time = Number(q.get('time'));
    const seen = m ? scrapes.filter((s) => s.at > time - Number(m[3]) && s.at <= time) : [];
    const labels = { instance: INSTANCE, dev: '8:0', class: 'Read' };
    const result: PromSeries[] = [];
    if (m?.[1] === WINDOW_END_METRIC)
      result.push({ metric: { __name__: m[1], instance: INSTANCE }, values: seen.map((s) => [s.at, String(s.at)]) });
    else if (m?.[1] === DEVICE_LATENCY_METRIC || m?.[1] === QUEUE_LATENCY_METRIC)
      result.push({ metric: { __name__: m[1], ...labels }, histograms: seen.map((s) => [s.at, histogramAt(s.total)]) });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result } }));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('a range’s last column holds a 15 s host’s I/O beside 5 s hosts: its closing scrape is looked for the coarsest interval past the end', async (t) => {
  const api = new PrometheusApi(await standIn(t));
  const plan = { from: C, to: C + 3 * STEP, step: STEP };
  const { frames } = await fleetFrames(api, new FleetDirectory(), plan, {}, { finest: 5, coarsest: STEP }, BUCKET_SCHEMA);
  const perColumn = [C, C + STEP, C + 2 * STEP].map((ts) => {
    const cls = frames.find((f) => f.ts === ts)?.disks[0]?.cls[0];
    return { ts, n: cls?.n ?? 0, d: cls?.d ?? [], q: cls?.q ?? [] };
  });
  t.diagnostic(`columns: ${JSON.stringify(perColumn)}`);
  for (const col of perColumn) {
    // The difference from the scrape 14 s into the column to the next one: one I/O, in BUCKET.
    assert.deepEqual(
      { n: col.n, d: col.d, q: col.q },
      { n: 1, d: [BUCKET, 1], q: [BUCKET, 1] },
      `column ${col.ts}${col.ts === C + 2 * STEP ? ' (the last: its closing scrape comes 14 s after the range’s end)' : ''}`,
    );
  }
});

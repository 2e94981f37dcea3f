// The ranked table's per-disk counts kept in final chunks (apps/agent/src/fleet/fleet-ranking-chunks.ts):
// the quantile computed here as Prometheus computes it, the cut of a range into chunks and the
// parts asked every time, the cache's bound; then on a real Prometheus (Debian's) scraping 20
// simulated hosts × 4 disks every second, the table from chunks against the table Prometheus
// ranks itself over the same range, and its chunks asked once then kept. No kernel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketCount, BUCKET_SCHEMA, lowerBoundSeconds, upperBoundSeconds } from '@blkheat/shared-types';
import { prometheusUnavailable } from '@blkheat/testkit';
import { FleetDirectory, hostDiskKey } from '../src/fleet/fleet-disks.js';
import { finalAfter } from '../src/fleet/fleet-frames.js';
import { rankFleet, scrapeWindow, warmRankingChunk, warmRankingFifths } from '../src/fleet/fleet-ranking.js';
import {
  chunkSeconds,
  type PartCounts,
  RankingChunkCache,
  rangeCounts,
  rangeParts,
  sparkFromParts,
} from '../src/fleet/fleet-ranking-chunks.js';
import { nativeQuantile } from '../src/fleet/native-buckets.js';
import { PrometheusApi } from '../src/fleet/prometheus-api.js';
import { eventually } from './lib/fleet-rig.js';
import { startSimulatedFleetRig } from './lib/simulated-fleet-rig.js';

const missing = prometheusUnavailable();
const HOSTS = 20;
const schema = BUCKET_SCHEMA;

/** A part's counts: each host's disk sda with `n` in its one dense bucket. */
function part(...disks: readonly { readonly instance: string; readonly bucket: number; readonly n: number }[]): PartCounts {
  return {
    keys: disks.map((d) => hostDiskKey(d.instance, '8:0')),
    disks: disks.map(() => 'sda'),
    offsets: Uint32Array.from([0, ...disks.map((_, i) => i + 1)]),
    buckets: Uint16Array.from(disks.map((d) => d.bucket)),
    counts: Float64Array.from(disks.map((d) => d.n)),
  };
}

test('the quantile of dense counts is Prometheus’ histogram_quantile: the rank’s bucket, linear inside it; NaN without counts', () => {
  const counts = new Float64Array(bucketCount(schema));
  assert.ok(Number.isNaN(nativeQuantile(0.99, counts, schema)), 'no counts: NaN');
  // 99 in bucket 40 and 1 in bucket 60: p50 is half-way up bucket 40, p99 its top, p99.9 in bucket 60.
  counts[40] = 99;
  counts[60] = 1;
  const [lo40, hi40] = [lowerBoundSeconds(40, schema), upperBoundSeconds(40, schema)];
  assert.equal(nativeQuantile(0.5, counts, schema), lo40 + (hi40 - lo40) * (50 / 99));
  assert.equal(nativeQuantile(0.99, counts, schema), hi40);
  const [lo60, hi60] = [lowerBoundSeconds(60, schema), upperBoundSeconds(60, schema)];
  assert.equal(nativeQuantile(0.999, counts, schema), lo60 + (hi60 - lo60) * ((0.999 * 100 - 99) / 1));
  // The zero bucket's lower bound is 0 (positive buckets only), the overflow bucket's upper one
  // is a bucket above 64 s, as Prometheus gives them.
  const low = new Float64Array(bucketCount(schema));
  low[0] = 4;
  assert.equal(nativeQuantile(0.5, low, schema), upperBoundSeconds(0, schema) * 0.5);
  const high = new Float64Array(bucketCount(schema));
  high[high.length - 1] = 2;
  assert.equal(nativeQuantile(0.5, high, schema), 64 + (2 ** ((schema.maxIndex + 1) / 2 ** schema.scale) - 64) * 0.5);
});

test('a range is cut at whole chunks, its head and tail at fifths: the final ones kept, the rest and parts not final yet asked every time; no final chunk, no cut', () => {
  assert.equal(chunkSeconds(15), 300, '20 scrapes at 15 s');
  assert.equal(chunkSeconds(1), 20);
  assert.deepEqual(rangeParts(1010, 1590, 100, 2000), {
    chunkS: 100,
    chunks: [1100, 1200, 1300, 1400],
    fifthS: 20,
    fifths: [1020, 1040, 1060, 1080, 1500, 1520, 1540, 1560],
    live: [
      [1010, 1020],
      [1580, 1590],
    ],
  });
  assert.deepEqual(
    rangeParts(1000, 1600, 100, 1450),
    {
      chunkS: 100,
      chunks: [1000, 1100, 1200, 1300],
      fifthS: 20,
      fifths: [1400, 1420],
      live: [
        [1440, 1500],
        [1500, 1600],
      ],
    },
    'not final after 1450; the tail cut where a chunk starts (each part inside one chunk span: a sparkline point)',
  );
  assert.deepEqual(
    rangeParts(10, 40, 7, 100),
    {
      chunkS: 7,
      chunks: [14, 21, 28],
      fifthS: undefined,
      fifths: [],
      live: [
        [10, 14],
        [35, 40],
      ],
    },
    'a chunk of 7 s has no whole fifths: its head and tail are asked whole',
  );
  assert.equal(rangeParts(1010, 1150, 100, 2000), undefined, 'no whole chunk');
  assert.equal(rangeParts(1000, 1600, 100, 1050), undefined, 'no final chunk');
});

test('the sparkline from the parts: a point per chunk span, clipped to the range, merged past the most points; null where no I/O', () => {
  const slow = { instance: 'slow', bucket: 60, n: 10 };
  const calm = { instance: 'calm', bucket: 20, n: 10 };
  const parts = [
    { from: 1050, to: 1100, counts: part(slow, calm) }, // the head, half a span
    { from: 1100, to: 1200, counts: part(calm) }, // a chunk where slow did nothing
    { from: 1200, to: 1300, counts: part({ ...slow, bucket: 70 }, calm) },
    { from: 1300, to: 1340, counts: part({ ...slow, bucket: 40, n: 100 }) }, // the tail
  ];
  const p99 = (c: Float64Array): number => nativeQuantile(0.99, c, schema);
  /** The p99 of n I/Os all in bucket k. */
  const top = (k: number, n = 10): number => {
    const c = new Float64Array(bucketCount(schema));
    c[k] = n;
    return p99(c);
  };
  const keys = [hostDiskKey('slow', '8:0'), hostDiskKey('calm', '8:0')];
  const s = sparkFromParts(parts, 100, keys, schema, 24, p99);
  assert.ok(s);
  assert.deepEqual([s.from, s.step], [1000, 100], 'the first point ends where the first chunk starts');
  assert.deepEqual(
    s.lines.get(keys[0] as string),
    [top(60), null, top(70), top(40, 100)],
    'slow: a point per span, none where it had no I/O',
  );
  assert.deepEqual(s.lines.get(keys[1] as string), [top(20), top(20), top(20), null]);
  // Past the most points, k spans a point (the fewest that fit), their counts summed.
  const merged = sparkFromParts(parts, 100, keys, schema, 2, p99);
  assert.ok(merged);
  assert.deepEqual([merged.from, merged.step], [1000, 200]);
  const both = new Float64Array(bucketCount(schema));
  both[70] = 10;
  both[40] = 100;
  assert.deepEqual(merged.lines.get(keys[0] as string), [top(60), p99(both)]);
  assert.equal(sparkFromParts([], 100, keys, schema, 24, p99), undefined, 'no parts, no sparkline');
});

test('the counts of a range are its parts’ summed: final chunks asked once then kept, the others asked every time; the cache is bounded', async () => {
  const cache = new RankingChunkCache();
  const asked: string[] = [];
  const [A, B] = [hostDiskKey('host-a', '8:0'), hostDiskKey('host-b', '8:0')];
  // Each part: host-a 1 I/O per second in bucket 40; host-b 1 per second in bucket 50 from 1200 on.
  const ask = (from: number, to: number): Promise<PartCounts> => {
    asked.push(`${from}-${to}`);
    const a = { instance: 'host-a', bucket: 40, n: to - from };
    return Promise.resolve(from >= 1200 ? part(a, { instance: 'host-b', bucket: 50, n: to - from }) : part(a));
  };
  const parts = rangeParts(1010, 1590, 100, 2000);
  assert.ok(parts);
  const fifths = new RankingChunkCache();
  const first = await rangeCounts(cache, parts, ask, schema, fifths);
  assert.equal(first.asked, 14);
  assert.deepEqual(
    asked.sort(),
    ['1010-1020', '1020-1040', '1040-1060', '1060-1080', '1080-1100', '1100-1200', '1200-1300', '1300-1400', '1400-1500']
      .concat(['1500-1520', '1520-1540', '1540-1560', '1560-1580', '1580-1590'])
      .sort(),
  );
  assert.equal(first.disks.get(A)?.counts[40], 580, 'every second of [1010, 1590) once');
  assert.equal(first.disks.get(B)?.counts[50], 390);
  assert.deepEqual(cache.counts, { kept: 0, asked: 4 }, 'the chunks in theirs');
  assert.deepEqual(fifths.counts, { kept: 0, asked: 8 }, 'the fifths in theirs');
  assert.deepEqual(fifths.size.chunks, 8);
  asked.length = 0;
  const again = await rangeCounts(cache, parts, ask, schema, fifths);
  assert.equal(again.asked, 2);
  assert.deepEqual(asked.sort(), ['1010-1020', '1580-1590'], 'what lies outside the head’s and the tail’s final fifths only');
  assert.deepEqual(cache.counts, { kept: 4, asked: 4 });
  assert.deepEqual(fifths.counts, { kept: 8, asked: 8 });
  assert.deepEqual([...(again.disks.get(A)?.counts ?? [])], [...(first.disks.get(A)?.counts ?? [])]);
  assert.deepEqual(
    again.parts.map((p) => [p.from, p.to]),
    first.parts.map((p) => [p.from, p.to]),
    'the same parts, oldest first',
  );

  // Bound: 2 (key, disk) + 2 (offsets) + 2 (a bucket and its count) numbers a one-disk chunk; 3 of them fit in 20.
  const small = new RankingChunkCache(20);
  for (let i = 0; i < 10; i++) small.put(100, i * 100, part({ instance: 'host-a', bucket: 40, n: i }));
  assert.deepEqual(small.size, { chunks: 3, numbers: 18 });
  assert.equal(small.get(100, 600), undefined, 'the first kept went first');
  assert.equal(small.get(100, 900)?.counts[0], 9);
  assert.equal(small.nearlyFull, true);
  assert.equal(new RankingChunkCache(20).nearlyFull, false);
  // A warm loop's wanted parts: 18 numbers of 20 kept over three quarters stop it; 12 do not.
  assert.equal(small.wantedOverThreeQuarters(100, [700, 800, 900]), true);
  assert.equal(small.wantedOverThreeQuarters(100, [800, 900, 100]), false, 'two kept (12 numbers), one not');
});

test(
  'a big fleet’s table from chunks ranks as Prometheus does over the same range, and its final chunks are asked once, then kept',
  { timeout: 240_000, skip: missing ? `SKIPPED LOUDLY: ${missing}` : false },
  async (t) => {
    const { prom, sim } = await startSimulatedFleetRig(t, HOSTS);
    await eventually('every host scraped', async () => ((await prom.targetsUp()).up === HOSTS ? true : undefined));
    const api = new PrometheusApi(prom.url);
    const dir = new FleetDirectory();
    const scrape = 1;
    const chunkS = chunkSeconds(scrape);
    // Three whole chunks and more of scrapes, then a range over them that is not chunk-aligned.
    await new Promise((r) => setTimeout(r, (4 * chunkS + finalAfter(scrape) + 5) * 1000));
    const now = Math.floor(Date.now() / 1000);
    const finalBefore = now - finalAfter(scrape);
    // Every scrape of the range stored: Prometheus' answer and the parts' are of the same scrapes.
    const to = finalBefore - 3;
    const from = Math.floor(to / chunkS) * chunkS - 3 * chunkS - 7;
    const req = { from, to, limit: 80, scrapeInterval: scrape };
    const whole = await rankFleet(api, dir, req);
    const cache = new RankingChunkCache();
    const fifths = new RankingChunkCache();
    const chunks = { cache, fifths, finalBefore, schema };
    const fromChunks = await rankFleet(api, dir, req, chunks);
    const again = await rankFleet(api, dir, req, chunks);
    t.diagnostic(
      `range [${from}, ${to}) at chunks of ${chunkS} s, final before ${finalBefore}: Prometheus' table ${whole.prometheusQueries} queries, ` +
        `from chunks ${fromChunks.prometheusQueries} then ${again.prometheusQueries}; cache ${JSON.stringify(cache.counts)}; ` +
        `first ${fromChunks.disks[0]?.instance}/${fromChunks.disks[0]?.disk} p99 ${fromChunks.disks[0]?.p99} (Prometheus ${whole.disks[0]?.p99})`,
    );
    assert.equal(whole.disks.length, HOSTS * 4, 'every disk ranked');
    assert.equal(fromChunks.disks[0]?.instance, sim.slowInstance, 'the slow host first');
    assert.equal(whole.disks[0]?.instance, sim.slowInstance);
    const cut = rangeParts(from, to, chunkS, finalBefore);
    assert.ok(cut && cut.fifths.length > 0, `the head and the tail have final fifths (${JSON.stringify(cut)})`);
    assert.equal(cache.counts.asked, 3, 'three final chunks asked');
    assert.equal(cache.counts.kept, 3, 'then kept');
    assert.deepEqual(fifths.counts, { asked: cut.fifths.length, kept: cut.fifths.length }, 'the final fifths asked, then kept');
    assert.equal(
      again.prometheusQueries,
      fromChunks.prometheusQueries - 3 - cut.fifths.length,
      'the second time, neither the chunks nor the fifths are asked',
    );
    // Prometheus' rate() extrapolates each window over its scrapes' own span: the parts' sums
    // equal the range's to well under a thousandth when scrapes are an interval apart (on a quiet
    // machine, exactly). A window's span ends at the scrapes just after its edges: one that
    // Prometheus started late, or a scrape missed (a loaded machine; one CI run's I/Os were 1.8e-3
    // off), changes the span of the part before the edge and of the part after it, each by its
    // lateness over the part. The witness is when Prometheus stored the first successful scrape after
    // each edge, against each target's own beat. The edges are every part's: chunks, fifths, the rest.
    const edges = [
      ...new Set([
        from,
        to,
        ...cut.chunks.flatMap((c) => [c, c + chunkS]),
        ...cut.fifths.flatMap((f) => [f, f + (cut.fifthS ?? 0)]),
        ...cut.live.flat(),
      ]),
    ].sort((a, b) => a - b);
    /** Edges between two parts: each late one moves the counts of both. */
    const inner = edges.filter((e) => e > from && e < to).length;
    const ups = await api.rawSamples('up', to - from + 4 * scrape, to + 2 * scrape);
    let lateS = 0;
    for (const s of ups) {
      const times = (s.values ?? []).filter((v) => v[1] === '1').map((v) => v[0]);
      const phases = times.map((x) => x % scrape).sort((a, b) => a - b);
      const beat = phases[Math.floor(phases.length / 2)] ?? 0;
      for (const e of edges) {
        const first = times.find((x) => x > e);
        // When the target's beat comes next after the edge.
        const due = e + ((((beat - e) % scrape) + scrape) % scrape || scrape);
        lateS = Math.max(lateS, first === undefined ? scrape : Math.abs(first - due));
      }
    }
    assert.equal(ups.length, HOSTS, 'the scrape times of every host read');
    // Each inner edge late by lateS moves the parts either side of it by lateS times their rate:
    // the range's count by 2 lateS / (to - from) of it an edge (with chunks alone, about one edge
    // a chunk: 2 lateS / chunkS).
    const moved = (2 * lateS * inner) / (to - from);
    const iosBound = 1e-3 + moved;
    // A quantile of the parts' sum is Prometheus' at a rank moved by at most `shift`: the parts'
    // counts below any latency move by at most `moved` of the range's, and their total as much
    // again. So it lies between Prometheus' own quantiles at q − shift and q + shift (the same one
    // when every edge scrape was on its beat), to 1e-3.
    const shift = 2 * moved;
    const promQuantiles = async (q: number): Promise<Map<string, number>> => {
      const w = scrapeWindow(from, to, scrape);
      const got = await api.instant(
        `histogram_quantile(${Math.min(1, Math.max(0, q))}, sum by (instance, dev, disk) (rate(blkheat_device_latency_seconds[${w.window}])))`,
        w.at,
      );
      return new Map(got.map((g) => [`${g.metric.instance}/${g.metric.disk}`, Number(g.value[1])]));
    };
    const [p99Lo, p99Hi, p999Lo, p999Hi] = [
      await promQuantiles(0.99 - shift),
      await promQuantiles(0.99 + shift),
      await promQuantiles(0.999 - shift),
      await promQuantiles(0.999 + shift),
    ];
    const byKey = new Map(whole.disks.map((d) => [`${d.instance}/${d.disk}`, d]));
    let worstP99 = 0;
    let worstIos = 0;
    for (const d of fromChunks.disks) {
      const key = `${d.instance}/${d.disk}`;
      const w = byKey.get(key);
      assert.ok(w, `${key} in Prometheus' table`);
      worstP99 = Math.max(worstP99, Math.abs(d.p99 - w.p99) / w.p99);
      worstIos = Math.max(worstIos, Math.abs(d.ios - w.ios) / Math.max(1, w.ios));
      for (const [name, got, lo, hi] of [
        ['p99', d.p99, p99Lo.get(key), p99Hi.get(key)],
        ['p99.9', d.p999, p999Lo.get(key), p999Hi.get(key)],
      ] as const) {
        assert.ok(
          got !== null && lo !== undefined && hi !== undefined && got >= lo * (1 - 1e-3) && got <= hi * (1 + 1e-3),
          `${key} ${name} ${got}: Prometheus' own at its rank ± ${shift.toExponential(2)} (scrapes at the edges off their beat by up to ${lateS} s) ` +
            `is ${lo}..${hi} (its table: ${name === 'p99' ? w.p99 : w.p999})`,
        );
      }
      assert.deepEqual([d.errors, d.untimed, d.oldestInflightS], [w.errors, w.untimed, w.oldestInflightS], `${key}: the rest of the row`);
    }
    t.diagnostic(
      `largest differences from Prometheus' own table: p99 ${worstP99.toExponential(2)}, I/Os ${worstIos.toExponential(2)} (relative); ` +
        `the scrapes at the ${edges.length} part and range edges (${inner} inner) off their target's beat by up to ${(lateS * 1000).toFixed(1)} ms, so I/Os within ${iosBound.toExponential(2)} ` +
        `and the quantiles within Prometheus' own at their rank ± ${shift.toExponential(2)}`,
    );
    assert.ok(
      worstIos <= iosBound,
      `I/Os within ${iosBound} of Prometheus' (scrapes at the edges off their beat by up to ${lateS} s): ${worstIos}`,
    );
    // The sparkline from the parts: each whole chunk span's point is Prometheus' p99 over it.
    const slow = fromChunks.disks[0];
    const spark = fromChunks.spark;
    assert.ok(slow?.spark && spark && spark.step === chunkS, `a point per chunk span (${JSON.stringify(spark)})`);
    let compared = 0;
    for (const [p, v] of slow.spark.entries()) {
      const a = spark.from + p * spark.step;
      if (a < from || a + spark.step > to) continue;
      const w = scrapeWindow(a, a + spark.step, scrape);
      const sel = `blkheat_device_latency_seconds{instance="${slow.instance}",dev="${slow.dev}"}`;
      const [got] = await api.instant(`histogram_quantile(0.99, sum by (instance, dev, disk) (rate(${sel}[${w.window}])))`, w.at);
      const want = Number(got?.value[1]);
      assert.ok(v !== null && Math.abs(v - want) <= 1e-3 * want, `point ${p} [${a}, ${a + spark.step}): ${v} vs Prometheus' ${want}`);
      compared++;
    }
    assert.equal(compared, 3, 'the three whole chunk spans compared');
    assert.equal(slow.spark.length, Math.ceil((to - spark.from) / spark.step), 'a point per span the range touches');
    assert.deepEqual(
      again.disks.map((d) => [d.instance, d.disk, d.p99, d.ios]),
      fromChunks.disks.map((d) => [d.instance, d.disk, d.p99, d.ios]),
      'kept chunks give the same table',
    );

    // The warm loop (service.ts): what a page opening on a span now, or up to a chunk from now,
    // would ask of its head's and tail's final fifths is kept beforehand, and a table of that
    // span then asks only the rest of its head and tail.
    const rest = again.prometheusQueries - cut.live.length;
    // On a chunk's start: both spans' heads then hold 7 s past a chunk start less 67 s, a whole
    // fifth (4 s) and 3 s; an unaligned end left the later head under a fifth in a CI run.
    const nowW = Math.floor(Date.now() / 1000 / chunkS) * chunkS;
    const warmed = { cache: new RankingChunkCache(), fifths: new RankingChunkCache(), finalBefore: nowW - finalAfter(scrape), schema };
    const span = 3 * chunkS + 7;
    let rounds = 0;
    while (await warmRankingFifths(api, warmed, nowW, span, scrape)) rounds++;
    const fifthsWarmed = warmed.fifths.size.chunks;
    while (await warmRankingChunk(api, warmed, nowW - span - chunkS, nowW, scrape)) rounds++;
    const nowCut = rangeParts(nowW - span, nowW, chunkS, warmed.finalBefore);
    const later = rangeParts(nowW + chunkS - span, nowW + chunkS, chunkS, warmed.finalBefore);
    assert.ok(nowCut?.fifthS && later, 'both spans are cut');
    const keptFifth = (f: number): boolean => warmed.fifths.get(nowCut.fifthS as number, f) !== undefined;
    assert.ok(nowCut.fifths.every(keptFifth), `the fifths of the span ending now kept (${nowCut.fifths.join(', ')})`);
    const laterHead = later.fifths.filter((f) => f < (later.chunks[0] ?? Infinity));
    assert.ok(
      laterHead.length > 0 && laterHead.every(keptFifth),
      `and the head's of the span ending a chunk later (${laterHead.join(', ')})`,
    );
    assert.equal(await warmRankingFifths(api, warmed, nowW, span, scrape), false, 'then none is left to keep');
    const warmTable = await rankFleet(api, dir, { from: nowW - span, to: nowW, limit: 80, scrapeInterval: scrape }, warmed);
    t.diagnostic(
      `warm loop: ${fifthsWarmed} fifths and ${warmed.cache.size.chunks} chunks kept in ${rounds} rounds; ` +
        `a table of the span ending now asked ${warmTable.prometheusQueries} queries (${nowCut.live.length} parts, ${rest} for the ranked hosts)`,
    );
    assert.equal(
      warmTable.prometheusQueries,
      nowCut.live.length + rest,
      'the table asks only the rest of its head and tail, and the ranked hosts’ rows',
    );
    assert.equal(warmTable.disks[0]?.instance, sim.slowInstance, 'the slow host first');
  },
);

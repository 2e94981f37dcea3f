// Every I/O from the moment it is submitted (docs/accounting.md, Submit wait): what a bio waits
// for before its request exists is measured, and the total agrees with what the application
// (fio) saw, on loop devices over a FUSE file whose daemon takes 5 ms a request.
//  - Tags: nr_requests 4 under 32 reads in flight: the reads wait for a tag, not for the disk;
//    io_uring's tries are refused (causes.refused), psync's sleep for a tag (tags_full).
//  - Freeze: a read held in the device while the scheduler is switched: the switch freezes the
//    queue, and the next reads wait for it, seen waiting (and ageing) while the queue is frozen;
//    and the scheduler switched every 0.3 s under load, each second of it marked.
// Reads held by blk-throttle, before any block tracepoint: collector-pressure.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import {
  bucketOfNs,
  classOp,
  denseTotal,
  lowerBoundSeconds,
  quantileBucket,
  upperBoundSeconds,
  type InflightState,
} from '@blkheat/shared-types';
import {
  createDelayedLoopDevice,
  directRead,
  fuseUnavailable,
  runCommand,
  runDd,
  runFio,
  sleep,
  startFio,
  waitFor,
} from '@blkheat/testkit';
import { bucketText, classTotals, ms, readTotals, record } from './lib/collect.js';

const fuseMissing = fuseUnavailable();
const skip = fuseMissing ? `SKIPPED LOUDLY: ${fuseMissing}` : false;

/** Mean of a dense histogram, each bucket at its geometric middle (within 10 % of any latency in it). */
function meanSeconds(dense: Float64Array): number {
  let n = 0;
  let s = 0;
  dense.forEach((c, k) => {
    if (c === 0) return;
    const hi = upperBoundSeconds(k);
    const mid = Number.isFinite(hi) && lowerBoundSeconds(k) > 0 ? Math.sqrt(lowerBoundSeconds(k) * hi) : lowerBoundSeconds(k);
    n += c;
    s += c * mid;
  });
  return n > 0 ? s / n : NaN;
}

test(
  'tags: with nr_requests 4 under 32 reads in flight, the total agrees with fio’s clat within a bucket and the submit wait is the difference',
  { timeout: 120_000, skip },
  async (t) => {
    const d = await createDelayedLoopDevice({ delayMs: 5, sizeMiB: 64, t });
    const queue = `/sys/block/${d.name}/queue`;
    // The device's own teardown puts its depth back (testkit's resetLoopQueue).
    writeFileSync(`${queue}/nr_requests`, '4');
    const rec = await record(t, { disks: [d.name] });
    const from = Math.floor(Date.now() / 1000) + 1;
    const fio = await runFio({ filename: d.path, rw: 'randread', ioengine: 'io_uring', iodepth: 32, runtimeS: 8 });
    const to = Math.floor(Date.now() / 1000) + 1;
    await rec.waitForSecond(to);
    // Every second fio ran, whole: fio's percentiles cover all its reads.
    const reads = readTotals(classTotals(rec.frames, d.dev, from - 1, to + 1));
    const clat = fio.readClat;
    assert.ok(clat, 'fio reported no read latency');
    const timed = denseTotal(reads.t);
    assert.equal(timed + reads.wu, reads.n, 'every read is in the total or counted as submission not seen');
    assert.equal(denseTotal(reads.w), timed, 'submit wait and total count the same reads');
    assert.ok(reads.wu <= Math.max(2, reads.n * 0.01), `${reads.wu} of ${reads.n} reads without their submission`);

    const p = (q: number): number => quantileBucket(reads.t, q) ?? -1;
    const [p50, p99] = [p(0.5), p(0.99)];
    const [fio50, fio99] = [bucketOfNs(clat.p50), bucketOfNs(clat.p99)];
    const dev50 = quantileBucket(reads.d, 0.5) ?? -1;
    const means = { total: meanSeconds(reads.t), submit: meanSeconds(reads.w), queue: meanSeconds(reads.q), device: meanSeconds(reads.d) };
    t.diagnostic(
      `${reads.n} reads (${reads.wu} without submission); fio clat p50 ${ms(clat.p50 / 1e9)}, p99 ${ms(clat.p99 / 1e9)}; ` +
        `blkheat total p50 ${bucketText(p50)}, p99 ${bucketText(p99)}; device p50 ${bucketText(dev50)}; ` +
        `means: total ${ms(means.total)}, submit ${ms(means.submit)}, queue ${ms(means.queue)}, device ${ms(means.device)}`,
    );
    // io_uring tries each read REQ_NOWAIT first: with no tag free it is turned away and retried
    // from a worker. Every whole second of fio's run is marked so.
    const refusedBySecond = [...Array(to - 1 - from).keys()].map(
      (i) => rec.frames.find((f) => f.ts === from + i)?.disks.find((x) => x.dev === d.dev)?.causes?.refused ?? 0,
    );
    // Said before any verdict, so that a failure shows whether the refusals were seen.
    const { refusalsKept, refusalsLinked, refusalsOverwritten } = rec.collector.stats().kernel;
    t.diagnostic(
      `reads turned away for want of a tag, by second: ${refusedBySecond.join(', ')}; first submissions kept ${refusalsKept}, ` +
        `taken by their resubmission ${refusalsLinked}, overwritten before it ${refusalsOverwritten}`,
    );
    // A refused read whose first try is lost is timed from its resubmission, short of what fio saw.
    assert.ok(
      refusalsKept > 0 && refusalsLinked >= 0.97 * refusalsKept,
      `${refusalsLinked} of ${refusalsKept} refused reads took their first submission`,
    );
    assert.ok(Math.abs(p50 - fio50) <= 1, `total p50 ${bucketText(p50)} vs fio's ${ms(clat.p50 / 1e9)} (bucket ${bucketText(fio50)})`);
    assert.ok(Math.abs(p99 - fio99) <= 1, `total p99 ${bucketText(p99)} vs fio's ${ms(clat.p99 / 1e9)} (bucket ${bucketText(fio99)})`);
    // The reads wait for a tag, not for the disk: most of the total is submit wait, and the
    // phases add up to the total (each mean within the 10 % of its buckets' middles).
    assert.ok(p50 > dev50 + 4, `total p50 ${bucketText(p50)} is not well above device p50 ${bucketText(dev50)}`);
    assert.ok(means.submit > 0.5 * means.total, `submit wait ${ms(means.submit)} is not most of the total ${ms(means.total)}`);
    const parts = means.submit + means.queue + means.device;
    assert.ok(Math.abs(parts / means.total - 1) < 0.15, `submit + queue + device = ${ms(parts)}, total ${ms(means.total)}`);
    assert.ok(
      refusedBySecond.every((n) => n > 0),
      `seconds without the tags mark: ${refusedBySecond
        .map((n, i) => (n > 0 ? '' : String(from + i)))
        .filter(Boolean)
        .join(', ')}`,
    );
  },
);

test(
  'tags, blocking: psync ×16 under nr_requests 4 sleep for a tag unseen by any tracepoint; every second of it is marked tags_full, none refused, and the total agrees with fio’s clat',
  { timeout: 120_000, skip },
  async (t) => {
    const d = await createDelayedLoopDevice({ delayMs: 5, sizeMiB: 64, t });
    writeFileSync(`/sys/block/${d.name}/queue/nr_requests`, '4');
    const rec = await record(t, { disks: [d.name] });
    const from = Math.floor(Date.now() / 1000) + 1;
    const fio = await runFio({ filename: d.path, rw: 'randread', numjobs: 16, runtimeS: 8 });
    const to = Math.floor(Date.now() / 1000) + 1;
    await rec.waitForSecond(to);
    const disk = (ts: number) => rec.frames.find((f) => f.ts === ts)?.disks.find((x) => x.dev === d.dev);
    // Each second's scan runs as it closes: the seconds whose close fio outlived.
    const seconds = [...Array(to - 2 - from).keys()].map((i) => from + i);
    const marked = seconds.map((ts) => disk(ts)?.tags_full ?? 0);
    const waiting = seconds.map((ts) => `${disk(ts)?.inflight?.waiting ?? 0}/${disk(ts)?.inflight?.n ?? 0}`);
    const refused = seconds.reduce((n, ts) => n + (disk(ts)?.causes?.refused ?? 0), 0);
    const reads = readTotals(classTotals(rec.frames, d.dev, from - 1, to + 1));
    const clat = fio.readClat;
    assert.ok(clat, 'fio reported no read latency');
    const [p99, fio99] = [quantileBucket(reads.t, 0.99) ?? -1, bucketOfNs(clat.p99)];
    t.diagnostic(
      `${reads.n} reads; tags_full by second: ${marked.join(', ')}; bios waiting / requests with the driver at each scan: ${waiting.join(', ')}; refused ${refused}; ` +
        `fio clat p99 ${ms(clat.p99 / 1e9)}, blkheat total p99 ${bucketText(p99)}, submit mean ${ms(meanSeconds(reads.w))}, device mean ${ms(meanSeconds(reads.d))}`,
    );
    assert.equal(refused, 0, 'psync submits without REQ_NOWAIT: nothing is turned away');
    assert.ok(
      marked.every((n) => n === 1),
      `seconds of fio's run without the tags mark: ${seconds.filter((_, i) => marked[i] !== 1).join(', ')}`,
    );
    assert.ok(Math.abs(p99 - fio99) <= 1, `total p99 ${bucketText(p99)} vs fio's ${ms(clat.p99 / 1e9)} (bucket ${bucketText(fio99)})`);
    assert.ok(meanSeconds(reads.w) > meanSeconds(reads.d), 'the reads waited for a tag longer than for the disk');
    // Before fio and after it: no bios waiting, no mark.
    const quiet = rec.frames
      .filter((f) => f.ts < from - 1 || f.ts > to)
      .flatMap((f) => f.disks.filter((x) => x.dev === d.dev && x.tags_full));
    assert.deepEqual(quiet, [], 'a tags mark outside fio’s run');
  },
);

/** Writes `value` to a sysfs file in a child process (a scheduler switch blocks while it freezes the queue). */
function writeInBackground(path: string, value: string): Promise<number | null> {
  const child = spawn('sh', ['-c', 'echo "$1" > "$0"', path, value], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('close', resolve));
}

const HOLD_S = 10;

test(
  `freeze: bios waiting on a frozen queue show as ageing waiters within 2 s, frozen, and their total lands with fio’s clat (~${HOLD_S} s)`,
  { timeout: 120_000, skip },
  async (t) => {
    const d = await createDelayedLoopDevice({ delayMs: 5, sizeMiB: 64, t });
    const rec = await record(t, { disks: [d.name] });
    await sleep(1200);
    // One read held in the device: the queue cannot drain, so a freeze waits for it, and so does
    // every bio submitted meanwhile (bio_queue_enter).
    d.holdNextRead();
    const held = directRead(t, d.path, 4096);
    await waitFor(() => d.holdState() === 'holding', 5000, 'the FUSE daemon holding the read');
    const heldAt = Date.now();
    const switched = writeInBackground(`/sys/block/${d.name}/queue/scheduler`, 'mq-deadline');
    await sleep(300);
    const fioStarted = Date.now();
    const frozenFrom = Math.floor(fioStarted / 1000);
    const fio = runFio({ filename: d.path, rw: 'randread', numjobs: 4, runtimeS: HOLD_S + 4, size: '32m' });

    const waiting = (from: number): { ts: number; s: InflightState }[] =>
      rec.frames.flatMap((f) => {
        const s = f.ts >= from ? f.disks.find((x) => x.dev === d.dev)?.inflight : undefined;
        return s && (s.waiting ?? 0) > 0 ? [{ ts: f.ts, s }] : [];
      });
    await waitFor(() => waiting(frozenFrom).length > 0, 4000, 'a frame with bios waiting for a request');
    // A second's frame closes (and its scan runs) at the end of the second.
    const firstAfterMs = ((waiting(frozenFrom)[0] as { ts: number }).ts + 1) * 1000 - fioStarted;
    await waitFor(() => waiting(frozenFrom).length >= 4, 8000, 'four frames with waiting bios');
    const seen = waiting(frozenFrom).slice(0, 4);
    t.diagnostic(
      `waiting bios by second: ${seen.map(({ ts, s }) => `${ts}: ${s.waiting} waiting, oldest ${(Number(s.oldest_wait_ns) / 1e9).toFixed(2)} s${s.frozen ? ', frozen' : ''}`).join('; ')} (first ~${firstAfterMs} ms after fio began)`,
    );
    assert.ok(firstAfterMs <= 2200, `waiting bios first shown ~${firstAfterMs} ms after they were submitted, want within 2 s`);
    for (const { s } of seen) {
      assert.ok((s.waiting ?? 0) >= 4, `${s.waiting} bios waiting, fio's 4 jobs each have one`);
      assert.equal(s.frozen, true, 'the queue is said to be frozen while it is');
    }
    const ages = seen.map(({ s }) => s.oldest_wait_ns ?? 0);
    for (let i = 1; i < ages.length; i++)
      assert.ok((ages[i] as number) > (ages[i - 1] as number), `the oldest wait does not grow: ${ages.join(', ')}`);

    await sleep(Math.max(0, heldAt + HOLD_S * 1000 - Date.now()));
    d.release();
    assert.equal(await switched, 0, 'the scheduler switch failed');
    const switchedS = Math.floor(Date.now() / 1000);
    await held.exited;
    const result = await fio;
    const to = Math.floor(Date.now() / 1000) + 1;
    await rec.waitForSecond(to);
    const totals = classTotals(rec.frames, d.dev, frozenFrom, to + 1);
    const reads = readTotals(totals);
    const top = (dense: Float64Array): number => dense.findLastIndex((c) => c > 0);
    const clat = result.readClat;
    assert.ok(clat, 'fio reported no read latency');
    const slowest = top(reads.t);
    const frozenCount = rec.frames
      .filter((f) => f.ts >= frozenFrom)
      .reduce((n, f) => n + (f.disks.find((x) => x.dev === d.dev)?.causes?.frozen ?? 0), 0);
    t.diagnostic(
      `after release: slowest total ${bucketText(slowest)}, device ${bucketText(top(reads.d))}; fio clat max ${ms(clat.max / 1e9)}; ` +
        `${frozenCount} I/Os counted as having found the queue frozen`,
    );
    assert.ok(Math.abs(slowest - bucketOfNs(clat.max)) <= 1, `slowest total ${bucketText(slowest)} vs fio's slowest ${ms(clat.max / 1e9)}`);
    // The switch itself: queue/scheduler changed, seen by the agent's look after it was done.
    const changed = rec.frames.flatMap((f) => {
      const q = f.ts >= frozenFrom - 1 ? f.disks.find((x) => x.dev === d.dev)?.queue_changed : undefined;
      return q ? [{ ts: f.ts, q }] : [];
    });
    t.diagnostic(
      `queue settings changed: ${changed.map((c) => `${c.ts}: ${c.q.join(', ')}`).join('; ') || 'none'} (switch done in ${switchedS})`,
    );
    // (A scheduler brings its own depth: nr_requests may change with it.)
    assert.equal(changed.length, 1, 'the switch is given once');
    assert.ok((changed[0] as { q: readonly string[] }).q.includes('scheduler'), 'the switch is given as queue/scheduler');
    assert.ok(
      (changed[0] as { ts: number }).ts >= switchedS - 1 && (changed[0] as { ts: number }).ts <= switchedS + 2,
      `given in second ${(changed[0] as { ts: number }).ts}, the switch was done in ${switchedS}`,
    );
    assert.ok(lowerBoundSeconds(slowest) >= HOLD_S * 0.6, `slowest total ${bucketText(slowest)}: the freeze's wait is missing`);
    // fio's reads waited before they had a request (the held read took long with the device).
    const atLeast = (dense: Float64Array, seconds: number): number =>
      dense.reduce((n, c, k) => n + (lowerBoundSeconds(k) >= seconds ? c : 0), 0);
    const longWait = atLeast(reads.w, HOLD_S / 2);
    t.diagnostic(
      `reads over ${HOLD_S / 2} s: ${atLeast(reads.t, HOLD_S / 2)} by total, ${longWait} by submit wait, ${atLeast(reads.d, HOLD_S / 2)} by device time; ` +
        `${reads.wu} of ${reads.n} reads without their submission`,
    );
    const slow = rec.samples.filter((x) => x.dev === d.dev && x.d_ns + (x.w_ns ?? 0) >= (HOLD_S / 2) * 1e9);
    t.diagnostic(
      `sampled reads over ${HOLD_S / 2} s: ${slow.map((x) => `${x.comm}/${x.pid} sector ${x.sector} device ${ms(x.d_ns / 1e9)} submit wait ${x.w_ns === null || x.w_ns === undefined ? 'not seen' : ms(x.w_ns / 1e9)}`).join('; ')}`,
    );
    assert.ok(longWait >= 4, `only ${longWait} reads waited long before their request (fio's 4 jobs did)`);
    assert.ok(frozenCount >= 4, `${frozenCount} I/Os marked as having found the queue frozen, fio's 4 did`);
  },
);

test(
  'scheduler switches every 0.3 s under 4 readers (the udev trigger): the total p99 agrees with fio’s, and each second of switching is marked frozen',
  { timeout: 120_000, skip },
  async (t) => {
    const d = await createDelayedLoopDevice({ delayMs: 5, sizeMiB: 64, t });
    const rec = await record(t, { disks: [d.name] });
    const from = Math.floor(Date.now() / 1000) + 1;
    const RUN_S = 8;
    // Each write switches the elevator, which freezes the queue until what is in flight drains.
    const switcher = spawn(
      'sh',
      [
        '-c',
        `end=$(($(date +%s) + ${RUN_S})); while [ $(date +%s) -lt $end ]; do echo mq-deadline > "$0"; sleep 0.15; echo none > "$0"; sleep 0.15; done`,
        `/sys/block/${d.name}/queue/scheduler`,
      ],
      { stdio: 'ignore' },
    );
    t.after(() => switcher.kill('SIGKILL'));
    const switched = new Promise<number | null>((resolve) => switcher.once('close', resolve));
    const fio = await runFio({ filename: d.path, rw: 'randread', numjobs: 4, runtimeS: RUN_S, size: '32m' });
    assert.equal(await switched, 0, 'the scheduler switches failed');
    const to = Math.floor(Date.now() / 1000);
    await rec.waitForSecond(to + 1);
    const reads = readTotals(classTotals(rec.frames, d.dev, from - 1, to + 2));
    const clat = fio.readClat;
    assert.ok(clat, 'fio reported no read latency');
    const p99 = quantileBucket(reads.t, 0.99) ?? -1;
    const frozenBySecond = [...Array(to - from - 1).keys()].map(
      (i) => rec.frames.find((f) => f.ts === from + i)?.disks.find((x) => x.dev === d.dev)?.causes?.frozen ?? 0,
    );
    t.diagnostic(
      `${reads.n} reads (${reads.wu} without submission); fio clat p99 ${ms(clat.p99 / 1e9)}; blkheat total p99 ${bucketText(p99)}, ` +
        `device p99 ${bucketText(quantileBucket(reads.d, 0.99) ?? -1)}; reads that found the queue frozen, by second: ${frozenBySecond.join(', ')}`,
    );
    assert.ok(Math.abs(p99 - bucketOfNs(clat.p99)) <= 1, `total p99 ${bucketText(p99)} vs fio's ${ms(clat.p99 / 1e9)}`);
    assert.ok(
      frozenBySecond.every((n) => n > 0),
      `seconds of switching without a frozen mark: ${frozenBySecond
        .map((n, i) => (n > 0 ? '' : String(from + i)))
        .filter(Boolean)
        .join(', ')}`,
    );
  },
);

test(
  'wbt: buffered writes to ext4 under reads over wbt’s target wait for wbt before their request, and wbt’s mark is on those seconds',
  { timeout: 120_000, skip },
  async (t) => {
    const d = await createDelayedLoopDevice({ delayMs: 5, sizeMiB: 128, t });
    const mnt = mkdtempSync('/tmp/blkheat-wbt-');
    t.after(async () => {
      await runCommand('umount', [mnt]).catch(() => undefined);
      rmSync(mnt, { recursive: true, force: true });
    });
    await runCommand('mkfs.ext4', ['-q', '-F', '-E', 'nodiscard,lazy_itable_init=1,lazy_journal_init=1', d.path]);
    await runCommand('mount', ['-o', 'nodiscard', d.path, mnt]);
    const rec = await record(t, { disks: [d.name] });
    /** The writes of each whole second of `run` (reads with buffered writes beside them): how many waited for their request. */
    const phase = async (
      runS: number,
    ): Promise<{ ts: number; writes: number; held: number; p99: number; wbt: number; frozen: number; tagsFull: number }[]> => {
      const from = Math.floor(Date.now() / 1000) + 1;
      const reads = startFio({ filename: d.path, rw: 'randread', runtimeS: runS + 1, readonly: true }, t);
      // Buffered 4 KiB writes at random places, an fsync every 64: write-back sends them as
      // separate requests, each of which wbt admits only under its limit.
      await runFio({ filename: join(mnt, 'f'), rw: 'randwrite', direct: false, size: '16m', fsync: 64, runtimeS: runS });
      // The whole seconds the writer ran through (the reads go on a second longer).
      const to = Math.floor(Date.now() / 1000);
      await reads.done;
      await rec.waitForSecond(to + 1);
      return [...Array(to - from).keys()].map((i) => {
        const ts = from + i;
        const disk = rec.frames.find((f) => f.ts === ts)?.disks.find((x) => x.dev === d.dev);
        const writes = [...classTotals(rec.frames, d.dev, ts, ts + 1)].filter(([cls]) => classOp(cls) === 'Write').map(([, c]) => c);
        const waits = new Float64Array(writes[0]?.w.length ?? 0);
        for (const c of writes) c.w.forEach((v, k) => (waits[k] = (waits[k] as number) + v));
        // Writes that waited longer than the device takes for one: held back, not just allocated.
        const held = waits.reduce((n, c, k) => n + (lowerBoundSeconds(k) >= 0.01 ? c : 0), 0);
        return {
          ts,
          writes: writes.reduce((n, c) => n + c.n, 0),
          held,
          p99: quantileBucket(waits, 0.99) ?? -1,
          wbt: disk?.wbt ?? 0,
          frozen: disk?.causes?.frozen ?? 0,
          tagsFull: disk?.tags_full ?? 0,
        };
      });
    };
    const text = (seconds: Awaited<ReturnType<typeof phase>>): string =>
      seconds
        .map(
          (s) =>
            `${s.ts}: ${s.writes} writes, ${s.held} waited over 10 ms (p99 ${s.p99 < 0 ? '-' : bucketText(s.p99)}), wbt mark ${s.wbt}, frozen ${s.frozen}, tags full ${s.tagsFull}`,
        )
        .join('; ');
    // Control: wbt off (0), the same load: no write waits for its request, and no mark. Turned
    // off on a disk just written to, as an operator would in an incident: the buffered writes,
    // under wbt's default target, leave its timer running (writes alone scale wbt up, to a
    // negative step, and it re-arms until it is back at 0). wbt_set_min_lat() leaves the timer
    // armed, and with a 0 target the first window with reads and writes closes LAT_EXCEEDED,
    // though wbt holds nothing: no mark for it (blkheat_wbt.bpf.h wbt_off).
    // (The writer's own file: fio finds it laid out and starts writing at once.)
    await runDd({ if: '/dev/zero', of: join(mnt, 'f'), bs: '1M', count: 16, conv: 'fsync' });
    writeFileSync(`/sys/block/${d.name}/queue/wbt_lat_usec`, '0');
    const off = await phase(4);
    t.diagnostic(`wbt off, by second: ${text(off)}`);
    assert.ok(off.every((s) => s.writes > 0) && off.length >= 3, 'the control ran writes every second');
    // The seconds themselves in the message: a CI log keeps only its tail.
    const offHeld = off.filter((s) => s.held > 0 || s.wbt > 0);
    assert.deepEqual(
      offHeld.map((s) => s.ts),
      [],
      `with wbt off, seconds with writes held or a wbt mark: ${text(offHeld)}`,
    );
    // Reads take 5 ms, over a 1 ms target: wbt scales writes down (the device's teardown puts
    // the target back: testkit's resetLoopQueue). Writing wbt_lat_usec freezes the queue until
    // its requests drain (queue_wb_lat_store): the control's write-back is flushed first, so
    // that the freeze is short; a write it still holds is named by the frozen mark, not wbt's.
    await runCommand('sync', ['-f', join(mnt, 'f')]);
    writeFileSync(`/sys/block/${d.name}/queue/wbt_lat_usec`, '1000');
    const bySecond = await phase(8);
    t.diagnostic(`wbt at 1 ms, by second: ${text(bySecond)}`);
    const heldSeconds = bySecond.filter((s) => s.held > 0);
    assert.ok(heldSeconds.length >= 3, `writes waited over 10 ms for their request in ${heldSeconds.length} seconds, want 3 or more`);
    const unmarked = heldSeconds.filter((s) => s.wbt === 0 && s.frozen === 0).map((s) => s.ts);
    assert.deepEqual(
      unmarked,
      [],
      `seconds in which writes were held without wbt’s mark (or a freeze’s): ${text(heldSeconds.filter((s) => unmarked.includes(s.ts)))}`,
    );
    const byWbt = heldSeconds.filter((s) => s.wbt > 0).length;
    assert.ok(byWbt >= 3, `seconds with writes held and wbt’s mark: ${byWbt}, want 3 or more`);
  },
);

/**
 * (Over 400 lines: one measurement, told in the order it runs: agent, seeded hour, page, steady
 * windows, clicks, floor, and the outcome's type it fills.)
 *
 * The live section of bench/web: the real agent (`blkheat serve`, BPF probes) on four loop
 * devices backed by files in /dev/shm, fio driving them at up to 45 k IOPS in all on this same
 * machine, and the dashboard at `?live=3600` in chromium. Measures the main thread's long tasks
 * over three windows of 30 s of steady live updates, how fast a time-range click takes effect
 * (clicks.ts), and the same long tasks for a near-idle page under the same load: the machine's
 * floor (floor.ts).
 *
 * Needs root (BPF, loop devices) and fio: without them it says why and measures nothing.
 *
 * Everything it starts (fio, the agents, the browser, loop devices, the data directory) is
 * stopped or removed on the way out, also when a step fails or the bench is interrupted.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Page } from 'playwright-core';
import {
  AGENT_CLI,
  type AgentProcess,
  createLoopDevice,
  hook,
  type Hooked,
  launch,
  type LoopDevice,
  seededRandom,
  sleep,
  startAgentProcess,
  unexpectedErrors,
  waitLive,
} from '@blkheat/testkit';
import { LIVE_SPANS } from '../../apps/web/src/model/view.ts';
import {
  cpuBetween,
  cpusOf,
  type CpuUse,
  describeCpu,
  describePageThread,
  markCpu,
  markRendererThreads,
  type PageThreadUse,
  pageThreadBetween,
} from './cpu.ts';
import { installClickTimer, median, settle, timeClick, type ClickTiming } from './clicks.ts';
import { describeLongTaskFloor, type LongTaskFloor, measureLongTaskFloor } from './floor.ts';
import { deviceRates, describeRates, type DeviceRates, type FioLoad, type FioReport, markDiskstats, startFioLoad } from './load.ts';
import {
  describeLongTasks,
  describeWindows,
  longTasks,
  longTasksBetween,
  type LongTaskStats,
  pageNow,
  recordLongTasks,
  summarize,
  summarizeWindows,
} from './longtasks.ts';
import { PROFILE_AT, startProfile } from './profile.ts';
import { recordedFrames, seedHistory } from './seed.ts';
import { describeViewDraws, type ViewDraws, viewDrawsBetween } from './viewdraws.ts';

export const LIVE = Object.freeze({
  disks: 4,
  targetIops: 45_000,
  spanS: 3600,
  /** Seconds of real frames recorded to seed the hour with. */
  recordS: 12,
  /** After the page is live and idle, before the measured window. */
  settleS: 10,
  /** One window of steady live updates, seconds; `windows` of them, one after another. */
  observeS: 30,
  /** One window's count swings with the load (3 to 12 in 30 s, same settings): each is printed. */
  windows: 3,
  /** Clicks per span button. */
  clickRounds: 3,
});

export type LiveOutcome =
  | { readonly status: 'skipped' | 'failed'; readonly why: string }
  | {
      readonly status: 'measured';
      readonly seeded: { readonly from: number; readonly to: number; readonly bytes: number; readonly framesRecorded: number };
      readonly openMs: number;
      /** ms from opening until the backfill reached the live edge (undefined: not within 180 s). */
      readonly caughtUpMs: number | undefined;
      readonly shown: { readonly seconds: number; readonly disks: number; readonly ios: number };
      /** Over all the windows together. */
      readonly steady: LongTaskStats;
      /** Each window's own, in order. */
      readonly steadyWindows: readonly LongTaskStats[];
      readonly framesReceived: number;
      readonly reconnects: number;
      readonly devices: DeviceRates;
      /** CPUs used over the window: the machine's busy share, the busiest processes, the agent and fio. */
      readonly cpu: CpuUse & { readonly agent: number; readonly fio: number; readonly of: number };
      /** The page's main thread over the window: on a CPU, and runnable but waiting for one. */
      readonly pageThread: PageThreadUse | undefined;
      /** The heat maps', strips', histograms', overlays' and time axis's draws over the window. */
      readonly viewDraws: readonly ViewDraws[];
      /** The same over the time-range clicks. */
      readonly clicksPageThread: PageThreadUse | undefined;
      readonly clicks: readonly ClickTiming[];
      readonly clickMedianMs: number;
      readonly clickWorstMs: number;
      readonly clicksLongTasks: LongTaskStats;
      readonly floor: LongTaskFloor; // the same figures for a near-idle page under the same load
      readonly fio: FioReport | undefined;
      readonly pageErrors: readonly string[];
    };

const root = join(import.meta.dirname, '../..');

/** Why the live section cannot run here, or undefined when it can. */
function unavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: the agent loads BPF programs and the section makes loop devices';
  if (spawnSync('fio', ['--version']).status !== 0) return 'fio is missing (apt-get install fio)';
  if (!existsSync(AGENT_CLI)) return `${relative(root, AGENT_CLI)} is missing: build the agent first (node scripts/build.mjs)`;
  return undefined;
}

/** Sources newer than their compiled JavaScript: the agent measured would not be this checkout's. */
function staleAgentSources(): string[] {
  const stale: string[] = [];
  const walk = (src: string, dist: string): void => {
    for (const e of readdirSync(src, { withFileTypes: true })) {
      const s = join(src, e.name);
      if (e.isDirectory()) walk(s, join(dist, e.name));
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) {
        const js = join(dist, e.name.replace(/\.ts$/, '.js'));
        if (!existsSync(js) || statSync(s).mtimeMs > statSync(js).mtimeMs) stale.push(relative(root, s));
      }
    }
  };
  for (const pkg of ['apps/agent', 'packages/shared-types', 'packages/bpf-loader']) walk(join(root, pkg, 'src'), join(root, pkg, 'dist'));
  return stale;
}

/** Cleanups in reverse order of setup; `emergency` is the synchronous part for an interrupted run. */
class Teardown {
  private readonly steps: { name: string; run: () => void | Promise<void>; now: () => void }[] = [];
  add(name: string, run: () => void | Promise<void>, now: () => void = () => undefined): void {
    this.steps.push({ name, run, now });
  }
  async run(): Promise<void> {
    for (const s of this.steps.splice(0).reverse()) {
      try {
        await s.run();
      } catch (e) {
        console.log(`  cleanup: ${s.name} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
  emergency(): void {
    for (const s of this.steps.splice(0).reverse()) {
      try {
        s.now();
      } catch {
        // Exiting on a signal: try the rest.
      }
    }
  }
}

async function startAgent(dataDir: string, devices: readonly LoopDevice[], webRoot: string, teardown: Teardown): Promise<AgentProcess> {
  const agent = await startAgentProcess({
    dataDir,
    args: [...devices.flatMap((d) => ['--disk', d.name]), '--web-root', webRoot],
  });
  teardown.add(
    `agent ${agent.pid}`,
    () => agent.stop('SIGTERM', 15_000).then(() => undefined),
    () => agent.child.kill('SIGKILL'),
  );
  return agent;
}

/**
 * Waits until the page's live data covers the view up to now: the backfill (oldest first) has
 * reached the live edge, and live frames arrive. False when it has not within `timeoutMs`.
 */
async function waitCaughtUp(page: Page, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const st = await hook(page).state();
    const now = Date.now() / 1000;
    const covered = st.liveCovered;
    if (covered && covered.to >= now - 3 && covered.from <= st.view.from + 60 && (st.lastFrameTs ?? 0) >= now - 3) return true;
    await sleep(500);
  }
  return false;
}

/** Runs the section, printing as it goes. Never throws: a failure is an outcome. */
export async function runLive(webRoot: string): Promise<LiveOutcome> {
  console.log(
    `\nlive: the agent and fio on this machine (${LIVE.disks} loop devices in /dev/shm, ${LIVE.targetIops.toLocaleString('en-US')} IOPS asked), dashboard at ?live=${LIVE.spanS}`,
  );
  const why = unavailable();
  if (why) {
    console.log(`  !!! LIVE SECTION SKIPPED: ${why}. Its budgets are not measured. !!!`);
    return { status: 'skipped', why };
  }
  const stale = staleAgentSources();
  if (stale.length > 0)
    console.log(
      `  warning: the agent build is older than ${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ` and ${stale.length - 3} more` : ''}`,
    );

  const teardown = new Teardown();
  const onSignal = (signal: NodeJS.Signals): void => {
    console.log(`\nlive: ${signal}: stopping what the section started`);
    teardown.emergency();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await measure(webRoot, teardown);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    console.log(`  !!! LIVE SECTION FAILED: ${message} !!!`);
    return { status: 'failed', why: message.split('\n')[0] ?? message };
  } finally {
    await teardown.run();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function measure(webRoot: string, teardown: Teardown): Promise<LiveOutcome> {
  const devices: LoopDevice[] = [];
  for (let i = 0; i < LIVE.disks; i++) {
    const d = createLoopDevice({ sizeMiB: 512 });
    devices.push(d);
    teardown.add(
      `loop device ${d.path}`,
      () => d.close(),
      () => d.close(),
    );
  }
  const names = devices.map((d) => d.name);
  const dataDir = mkdtempSync(join(tmpdir(), 'blkheat-bench-web-live-'));
  const removeDir = (): void => rmSync(dataDir, { recursive: true, force: true });
  teardown.add('data directory', removeDir, removeDir);

  // Long enough for every step below; fio ends by itself after it even if nobody stops it.
  const fio: FioLoad = startFioLoad(
    devices.map((d) => d.path),
    LIVE.targetIops,
    600,
  );
  let fioReport: FioReport | undefined;
  teardown.add(
    'fio',
    async () => {
      fioReport ??= await fio.stop();
    },
    () => fio.kill(),
  );
  await sleep(1000);
  if (!fio.running()) throw new Error(`fio exited at once: ${fio.stderr().trim().slice(-500)}`);

  // ---- an hour of history, from the agent's own frames of this load (seed.ts)
  const first = await startAgent(dataDir, devices, webRoot, teardown);
  await sleep(LIVE.recordS * 1000);
  const now = Math.floor(Date.now() / 1000);
  const frames = await recordedFrames(first.url, now - LIVE.recordS + 2, now - 1);
  await first.stop('SIGTERM', 15_000);
  const seeded = { ...seedHistory(join(dataDir, 'history'), frames, LIVE.spanS), framesRecorded: frames.length };
  console.log(
    `  history: ${LIVE.spanS} s before now seeded with ${frames.length} s of the agent's own frames of this load, repeated (${(seeded.bytes / 1e6).toFixed(1)} MB)`,
  );

  // ---- the page
  const agent = await startAgent(dataDir, devices, webRoot, teardown);
  const session = await launch({ width: 1400, height: 1000 });
  teardown.add('browser', () => session.close());
  const { page } = session;
  await recordLongTasks(session.context);
  const opened = Date.now();
  await page.goto(`${agent.url}?live=${LIVE.spanS}`);
  await waitLive(page, 60_000);
  const liveMs = Date.now() - opened;
  // "live" comes with the agent's hello, before the backfill of the hour has arrived: steady
  // updates start once the backfill has caught up with the live edge and the page is idle.
  const caughtUp = await waitCaughtUp(page, 180_000);
  const caughtUpMs = Date.now() - opened;
  const idleAtOpen = await settle(page, 60_000);
  const openMs = Date.now() - opened;
  console.log(
    `  page: live (hello) after ${(liveMs / 1000).toFixed(1)} s, ` +
      (caughtUp
        ? `backfill caught up with now after ${(caughtUpMs / 1000).toFixed(1)} s`
        : `!!! backfill NOT caught up with now after ${(caughtUpMs / 1000).toFixed(1)} s !!!`) +
      `, ${idleAtOpen ? 'idle' : 'not idle (60 s)'} after ${(openMs / 1000).toFixed(1)} s`,
  );
  await sleep(LIVE.settleS * 1000);
  // What the page holds: the seeded hour must be on screen, or the window measured is a light one.
  const shown = await page.evaluate(() => {
    const h = (globalThis as unknown as Hooked).__blkheat;
    const c = Object.values(h.counts());
    return { range: h.state().summaryRange, step: h.state().step, disks: c.length, ios: c.reduce((n, d) => n + d.completed, 0) };
  });
  const shownS = shown.range ? shown.range.to - shown.range.from : 0;
  console.log(
    `  the page shows ${shown.disks} disks, ${shownS} s at ${shown.step ?? '?'} s per column, ${shown.ios.toLocaleString('en-US')} I/Os (${Math.round(shown.ios / Math.max(1, shownS)).toLocaleString('en-US')}/s)`,
  );

  // ---- steady live updates
  const st0 = await hook(page).state();
  if (Math.round(st0.view.to - st0.view.from) !== LIVE.spanS || !st0.following)
    throw new Error(`the page does not follow a ${LIVE.spanS} s window (view ${st0.view.from}..${st0.view.to})`);
  const cpu0 = markCpu();
  const threads0 = markRendererThreads(cpu0);
  const disk0 = markDiskstats();
  const draws0 = await hook(page).renderStats();
  const profiling = PROFILE_AT === 'live' ? await startProfile(page) : undefined;
  // The windows' bounds, in the page's clock. A profile covers the first window only (a trace of
  // 30 s is already ~60 MB).
  const bounds = [await pageNow(page)];
  for (let w = 0; w < LIVE.windows; w++) {
    await sleep(LIVE.observeS * 1000);
    bounds.push(await pageNow(page));
    if (w === 0) await profiling?.stop();
  }
  const disk1 = markDiskstats();
  const cpu1 = markCpu();
  const pageThread = pageThreadBetween(threads0, markRendererThreads(cpu1));
  const st1 = await hook(page).state();
  const viewDraws = viewDrawsBetween(draws0, await hook(page).renderStats());
  // The page's long tasks read once: the whole steady span, and each window of it.
  const tasks = await longTasks(page);
  const steady = summarize(tasks, bounds[0] as number, bounds[bounds.length - 1] as number);
  const steadyWindows = summarizeWindows(tasks, bounds);
  const devicesRate = deviceRates(disk0, disk1, names);
  const cpu = {
    ...cpuBetween(cpu0, cpu1),
    agent: cpusOf(cpu0, cpu1, agent.pid),
    fio: cpusOf(cpu0, cpu1, fio.pid),
    of: availableParallelism(),
  };
  const framesReceived = (st1.lastFrameTs ?? 0) - (st0.lastFrameTs ?? 0);
  const reconnects = st1.reconnects - st0.reconnects;
  console.log(`  load during the window: ${describeRates(devicesRate)} (from /proc/diskstats)`);
  console.log(
    `    CPUs used (of ${cpu.of}): agent ${cpu.agent.toFixed(2)}, fio ${cpu.fio.toFixed(2)}; ${describeCpu(cpu)}; load average ${(loadavg()[0] ?? 0).toFixed(1)}`,
  );
  console.log(
    `  steady live updates, ${steadyWindows.length} × ${LIVE.observeS} s: ${describeLongTasks(steady)}; ${framesReceived} live seconds arrived, ${reconnects} reconnects   budget: no task > 50 ms`,
  );
  console.log(`    ${describeWindows(steadyWindows)}`);
  // What the long tasks' wall time was made of: the page working, or the page waiting for a CPU.
  console.log(`    ${describePageThread(pageThread)}`);
  console.log(`    the views' own draws (the scheduler's timings, wall): ${describeViewDraws(viewDraws)}`);

  // ---- time-range clicks
  const spans = Object.fromEntries(LIVE_SPANS.map((s) => [s.label, s.span]));
  await installClickTimer(page, spans);
  const order = LIVE_SPANS.map((s) => s.label).filter((l) => spans[l] !== LIVE.spanS);
  order.push(LIVE_SPANS.find((s) => s.span === LIVE.spanS)?.label ?? '1h');
  const rnd = seededRandom(29);
  const clicks: ClickTiming[] = [];
  const clickProfiling = PROFILE_AT === 'clicks' ? await startProfile(page) : undefined;
  const c0 = await pageNow(page);
  const clickThreads0 = markRendererThreads();
  for (let round = 0; round < LIVE.clickRounds; round++) {
    for (const label of order) {
      // At a random point of the live second, as a person's click would land.
      await sleep(200 + rnd() * 1000);
      clicks.push(await timeClick(page, label));
    }
  }
  const c1 = await pageNow(page);
  await clickProfiling?.stop();
  const clicksPageThread = pageThreadBetween(clickThreads0, markRendererThreads());
  const clicksLongTasks = await longTasksBetween(page, c0, c1);
  const paint = clicks.map((c) => c.paintMs);
  const clickMedianMs = median(paint);
  const clickWorstMs = Math.max(...paint);
  const fmt = (v: number | undefined): string => (v === undefined ? '—' : String(Math.round(v)));
  console.log(
    `  time-range clicks (${clicks.length}: ${order.join(' → ')} × ${LIVE.clickRounds}), timed in the page from the click event:`,
  );
  for (const label of order) {
    const mine = clicks.filter((c) => c.label === label);
    console.log(
      `    ${label.padEnd(4)} input delay ${mine.map((c) => fmt(c.handlerMs)).join('/')} ms; first paint ${mine.map((c) => fmt(c.paintMs)).join('/')} ms; idle ${mine.map((c) => fmt(c.idleMs)).join('/')} ms`,
    );
  }
  console.log(
    `    click → first paint with the new span: median ${fmt(clickMedianMs)} ms, worst ${fmt(clickWorstMs)} ms   budget ≤ 200 ms`,
  );
  const idles = clicks.flatMap((c) => (c.idleMs === undefined ? [] : [c.idleMs]));
  console.log(
    `    click → idle (data fetched, every view drawn, + idle()'s two quiet frames): median ${fmt(median(idles))} ms, worst ${fmt(Math.max(...idles))} ms`,
  );
  console.log(`    long tasks while clicking: ${describeLongTasks(clicksLongTasks)}`);
  console.log(`    ${describePageThread(clicksPageThread)}`);
  await page.close(); // before the floor: the dashboard would compete with its page for the CPUs
  const floor = await measureLongTaskFloor(session.context, LIVE.observeS);
  console.log(describeLongTaskFloor(floor));
  fioReport = await fio.stop();
  console.log(
    fioReport
      ? `  fio over its whole run (${fioReport.seconds.toFixed(0)} s, seeding included): ${describeRates(fioReport)}; asked ${LIVE.targetIops.toLocaleString('en-US')}`
      : `  fio gave no results: ${fio.stderr().trim().slice(-300)}`,
  );
  const pageErrors = unexpectedErrors(session);
  if (pageErrors.length > 0) console.log('  page errors:', pageErrors);
  return {
    status: 'measured',
    seeded,
    openMs,
    caughtUpMs: caughtUp ? caughtUpMs : undefined,
    shown: { seconds: shownS, disks: shown.disks, ios: shown.ios },
    steady,
    steadyWindows,
    pageThread,
    viewDraws,
    framesReceived,
    reconnects,
    devices: devicesRate,
    cpu,
    clicks,
    clickMedianMs,
    clickWorstMs,
    clicksLongTasks,
    clicksPageThread,
    floor,
    fio: fioReport,
    pageErrors,
  };
}
